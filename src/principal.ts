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

/**
 * Who a request runs as: the **owner** (the CLI, loopback callers when no
 * auth is configured, credentials the config marks as owner) or a **named
 * caller** (an authenticated credential of a peer). An object rather than a
 * string so that later fields (the caller's grants: specialists, remote
 * agents, tool families) travel with it without a new parameter anywhere.
 */
export interface Principal {
  readonly kind: 'owner' | 'caller';
  /**
   * Stored with every row the principal creates; stable across restarts.
   * `owner` for the owner; for a caller its name (today the credential's id,
   * e.g. `bearer:<hash>`).
   */
  readonly id: string;
}

/** The node's owner: sees and may act on every principal's rows. */
export const OWNER: Principal = Object.freeze({ kind: 'owner', id: OWNER_ID });

/**
 * A named caller. Its id must not be the owner's: a caller can never take
 * the owner's rows by its name.
 * @example
 * const peer = namedCaller('bearer:3f2a9c0d1e4b5a6f');
 */
export function namedCaller(id: string): Principal {
  if (!id || id === OWNER_ID) throw new Error(`"${id}" cannot name a caller`);
  return Object.freeze({ kind: 'caller', id });
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
