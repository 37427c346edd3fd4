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

/**
 * Who a request runs as: the **owner** (the CLI, loopback callers when no
 * auth is configured, credentials the config marks as owner) or a **named
 * caller** (an authenticated credential of a peer), which carries its
 * {@link Grant}.
 */
export interface Principal {
  readonly kind: 'owner' | 'caller';
  /**
   * Stored with every row the principal creates; stable across restarts.
   * `owner` for the owner; for a caller its configured name, or its
   * credential's id (`bearer:<hash>`) for the plain token lists.
   */
  readonly id: string;
  /** What a caller may reach; absent for the owner, who reaches everything. */
  readonly grant?: Grant;
}

/** The node's owner: sees and may act on every principal's rows. */
export const OWNER: Principal = Object.freeze({ kind: 'owner', id: OWNER_ID });

/**
 * A named caller. Its id must not be the owner's: a caller can never take
 * the owner's rows by its name. Without a grant it may only converse
 * ({@link NO_TOOLS}).
 * @example
 * const peer = namedCaller('bearer:3f2a9c0d1e4b5a6f', { specialists: 'all', remoteAgents: [], toolFamilies: ['librarian'] });
 */
export function namedCaller(id: string, grant: Grant = NO_TOOLS): Principal {
  if (!id || id === OWNER_ID) throw new Error(`"${id}" cannot name a caller`);
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
 * The owner id a read is limited to: `undefined` for the owner (every row),
 * else the caller's own id. Stores pass this to their queries, so one rule
 * decides what a principal may see.
 */
export function visibleOwner(principal: Principal): string | undefined {
  return isOwner(principal) ? undefined : principal.id;
}

/** Whether `principal` may see (and act on) a row stored under `ownerId`. */
export function canSee(principal: Principal, ownerId: string): boolean {
  return isOwner(principal) || principal.id === ownerId;
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

/** The directory with no configured callers: `owner` is the owner, any other id a named caller. */
export const defaultPrincipals: PrincipalDirectory = Object.freeze({
  byId: (id: string) => (id === OWNER_ID ? OWNER : namedCaller(id)),
});
