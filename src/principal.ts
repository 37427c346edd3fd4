/**
 * Whose data a request reads and writes. Every turn runs as one principal,
 * and every store call names it (issue 11 A): rows carry the id of the
 * principal that created them, a named caller reads only its own rows, and
 * the owner reads everyone's.
 *
 * This file sits at the bottom of the layers: stores, the runtime, tools and
 * the A2A edge all import it, and it imports nothing.
 */

/** The principal id the owner's rows are stored under. */
export const OWNER_ID = 'owner';

/** Names a grant lets through: every one (`all`) or exactly those listed. */
export type Reach = 'all' | readonly string[];

/**
 * What a named caller may reach (issue 11 A): which specialists and remote
 * agents its turns are offered, and which tool families its tool calls may
 * use. The owner has no grant: it reaches everything.
 */
export interface Grant {
  readonly specialists: Reach;
  readonly remoteAgents: Reach;
  readonly toolFamilies: Reach;
}

/**
 * The grant of a caller built without one: conversation only (every
 * specialist, but no tool family and no remote agent). The configured
 * default for peers is wider (`a2a/callers.ts`); this is the floor for a
 * principal nobody configured.
 */
export const NO_TOOLS: Grant = Object.freeze({ specialists: 'all', remoteAgents: [], toolFamilies: [] });

/** The grant of nobody: no specialist, no remote agent, no tool family (the orchestrator alone answers). */
export const NOTHING: Grant = Object.freeze({ specialists: [], remoteAgents: [], toolFamilies: [] });

/**
 * Who a request runs as: the **owner** (the CLI, loopback callers when no
 * auth is configured, credentials the config marks as owner), a **named
 * caller** (an authenticated credential of a peer), which carries its
 * {@link Grant}, or **anonymous** (no credential: nothing granted, never the
 * owner).
 */
export interface Principal {
  readonly kind: 'owner' | 'caller' | 'anonymous';
  /**
   * Stored with every row the principal creates; stable across restarts.
   * `owner` for the owner; for a caller its configured name, or its
   * credential's id (`bearer:<hash>`) for the plain token lists.
   */
  readonly id: string;
  /** What a caller may reach; absent for the owner, who reaches everything. */
  readonly grant?: Grant;
  /**
   * The A2A tenant the request named (`a2a.tenants`), absent without one. A
   * principal of a tenant stores and reads its rows under its own id
   * qualified by the tenant (`<tenant>/<id>`, see {@link inTenant}), so every
   * store keyed by principal is the tenant's; its owner reads only its own
   * rows (the tenant's tasks it reads by their tenant column).
   */
  readonly tenant?: string;
  /**
   * Who acted for this principal to reach the node (issue 33, an `act`
   * claim of a delegated token): each actor's token subject, outermost
   * (the one that called this node) first. Absent when the principal
   * called itself. Stores and grants use the principal (the subject); the
   * actors only narrowed its grant and are recorded in the task's account.
   */
  readonly actors?: readonly string[];
}

/**
 * The bearer token a caller presented, carried beside its principal (never
 * inside it: a principal is stored and logged) from the edge to the turn, so
 * a delegated call can exchange it for a token of the remote (issue 33, RFC
 * 8693). It never reaches a store, a log line or the model: it prints and
 * serializes as a placeholder, and only {@link SubjectToken.reveal} gives
 * the value, to the token exchange.
 */
export class SubjectToken {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }

  /** The token itself, for the exchange request and nothing else. */
  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return '[subject token]';
  }

  toString(): string {
    return '[subject token]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'SubjectToken [redacted]';
  }
}

/** The node's owner: sees and may act on every principal's rows. */
export const OWNER: Principal = Object.freeze({ kind: 'owner', id: OWNER_ID });

/** The principal id of requests that present no credential. */
export const ANONYMOUS_ID = 'anonymous';

/**
 * Whoever presents no credential: a principal with an empty grant
 * ({@link NOTHING}), its rows under one id of its own. Never the owner: the
 * one exception (a node without `a2a.auth`, asked from loopback) is decided
 * by the identity component, which answers the owner there.
 */
export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', id: ANONYMOUS_ID, grant: NOTHING });

/**
 * Separates a derived id's namespace from its value (`bearer:…`, `oidc:…`,
 * `cert:…`). A configured caller's name cannot hold it (`a2a.auth.callers`
 * names are checked), so a name can never equal a derived id.
 */
export const NAMESPACE_SEPARATOR = ':';

/**
 * The id of a principal derived from a credential: `namespace:value`. Each
 * kind of credential has namespaces of its own (`isDerivedNamespace`), so
 * two kinds, or a digest and a plain value, never meet in one id.
 * @example
 * derivedId('oidc', 'alice'); // 'oidc:alice'
 */
export function derivedId(namespace: string, value: string): string {
  return `${namespace}${NAMESPACE_SEPARATOR}${value}`;
}

/**
 * A named caller. Its id must not be the owner's: a caller can never take
 * the owner's rows by its name. Without a grant it may only converse
 * ({@link NO_TOOLS}).
 * @example
 * const peer = namedCaller('bearer:3f2a9c0d1e4b5a6f', { specialists: 'all', remoteAgents: [], toolFamilies: ['librarian'] });
 */
export function namedCaller(id: string, grant: Grant = NO_TOOLS): Principal {
  // A tenant's separator in a caller's own id would let it pose as a principal of that tenant.
  if (!id || id === OWNER_ID || id === ANONYMOUS_ID || id.includes(TENANT_SEPARATOR))
    throw new Error(`"${id}" cannot name a caller`);
  return Object.freeze({ kind: 'caller', id, grant });
}

/**
 * Whether `principal` may call a tool of the family `family` (undefined: a
 * tool of no family, which only a grant of every family covers).
 */
export function mayUseToolOf(principal: Principal, family: string | undefined): boolean {
  if (family === undefined) return isOwner(principal) || (principal.grant ?? NO_TOOLS).toolFamilies === 'all';
  return mayReach(principal, 'toolFamilies', family);
}

/** The kinds of thing a grant names. */
export type Reachable = keyof Grant;

/**
 * Whether `principal` may reach the specialist, remote agent or tool family
 * named `name`: the one check behind the routes a turn is offered and the
 * tool calls it may make.
 */
export function mayReach(principal: Principal, kind: Reachable, name: string): boolean {
  if (isOwner(principal)) return true;
  const reach = (principal.grant ?? NO_TOOLS)[kind];
  return reach === 'all' || reach.includes(name);
}

/** True for the owner. */
export function isOwner(principal: Principal): boolean {
  return principal.kind === 'owner';
}

/**
 * Whether `principal` reads every principal's rows: the node's owner, outside
 * any tenant (the console, the CLI, a request naming no tenant). An owner in
 * a tenant reads its own rows only: nothing of another tenant can match.
 */
function readsEveryone(principal: Principal): boolean {
  return isOwner(principal) && principal.tenant === undefined;
}

/**
 * The owner id a read is limited to: `undefined` for the node's owner (every
 * row), else the principal's own id (tenant-qualified in a tenant). Stores
 * pass this to their queries, so one rule decides what a principal may see.
 */
export function visibleOwner(principal: Principal): string | undefined {
  return readsEveryone(principal) ? undefined : principal.id;
}

/** Whether `principal` may see (and act on) a row stored under `ownerId`. */
export function canSee(principal: Principal, ownerId: string): boolean {
  return readsEveryone(principal) || principal.id === ownerId;
}

/**
 * Separates a tenant from the id it qualifies. Neither a tenant
 * (`a2a.tenants`), a caller's name, `owner` nor a credential's hash id can
 * hold it, so a qualified id names one tenant and one principal.
 */
const TENANT_SEPARATOR = '/';

/**
 * `principal` as it acts in `tenant`: the same kind and grant, its id
 * qualified by the tenant (`acme/owner`, `acme/alice`). No tenant (undefined
 * or empty): the principal itself, as before tenants existed.
 * @example
 * inTenant(OWNER, 'acme'); // { kind: 'owner', id: 'acme/owner', tenant: 'acme' }
 */
export function inTenant(principal: Principal, tenant: string | undefined): Principal {
  if (!tenant || principal.tenant === tenant) return principal;
  const base = principal.tenant === undefined ? principal.id : baseId(principal.id);
  return Object.freeze({ ...principal, id: `${tenant}${TENANT_SEPARATOR}${base}`, tenant });
}

/** The tenant and the unqualified id of a stored principal id (no tenant: the id itself). */
export function splitTenant(id: string): { tenant: string | undefined; id: string } {
  const at = id.indexOf(TENANT_SEPARATOR);
  return at < 0 ? { tenant: undefined, id } : { tenant: id.slice(0, at), id: id.slice(at + 1) };
}

function baseId(id: string): string {
  return splitTenant(id).id;
}

/**
 * Turns a stored principal id back into the principal (a job runs as the one
 * who created it). Built once by the composition root; the default knows the
 * owner and treats every other id as a named caller. A later configuration
 * of callers (names and grants) replaces it without changing its users.
 */
export interface PrincipalDirectory {
  byId(id: string): Principal;
}

/**
 * A directory that knows tenant-qualified ids: `acme/alice` is `lookup('alice')` in tenant `acme`.
 * @example
 * const directory = tenantAware((id) => (id === OWNER_ID ? OWNER : namedCaller(id)));
 */
export function tenantAware(lookup: (id: string) => Principal): PrincipalDirectory {
  return Object.freeze({
    byId: (stored: string) => {
      const { tenant, id } = splitTenant(stored);
      return inTenant(lookup(id), tenant);
    },
  });
}

/** The directory with no configured callers: `owner` is the owner, any other id a named caller (in its tenant). */
export const defaultPrincipals: PrincipalDirectory = tenantAware((id) =>
  id === OWNER_ID ? OWNER : id === ANONYMOUS_ID ? ANONYMOUS : namedCaller(id),
);
