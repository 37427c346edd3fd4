import type { JWTPayload } from 'jose';
import type { A2aDelegation, A2aOidc } from '../config/schema';
import { isOwner, namedCaller, type Grant, type Principal } from '../principal';
import type { Callers } from './callers';
import { intersect, principalOfClaims } from './claims';

/**
 * Delegated tokens inbound (issue 33; OAuth 2.0 Token Exchange, RFC 8693
 * §4.1): a verified token of `a2a.auth.oidc` with an `act` claim says that
 * its `act.sub` acts for its `sub`, and a nested `act` names the actor
 * before that one. Such a token is accepted only when every actor of the
 * chain is listed in `a2a.auth.delegation.actors` and the chain is no
 * longer than `maxDepth`. It then runs as its subject — the caller its
 * `sub` names, narrowed to its scopes as any token is — narrowed further to
 * what each actor may do (the grant of the caller the actor's subject names,
 * else the default grant), with the chain recorded on the principal
 * (`actors`, outermost first). Anything else is refused, and the caller
 * gets the plain 401 of any token that is not valid: an unknown actor, a
 * chain too deep or malformed, a subject nobody is, or the owner (the owner
 * never acts through delegates, and a delegate can never be the owner).
 */

/** A delegated token's principal, or why it is refused (for the debug log, never for the caller). */
export type DelegationVerdict = { principal: Principal } | { refused: string };

/** Reads delegated tokens' claims: built once with the token validator. */
export interface Delegation {
  /** The principal of verified `claims` that carry an `act` claim. */
  principalOf(claims: JWTPayload): DelegationVerdict;
}

/** The longest actor subject read: a client id or subject, never a document. */
const MAX_ACTOR_LENGTH = 256;

/**
 * The chain of actors an `act` claim names, outermost first, or why it
 * cannot be read: each level an object with a non-empty `sub`, an `iss`
 * (when given) the issuer's, at most `maxDepth` levels.
 * @example
 * actorChain({ sub: 'node-b', act: { sub: 'node-a' } }, 3, 'https://idp.example'); // ['node-b', 'node-a']
 */
export function actorChain(act: unknown, maxDepth: number, issuer: string): string[] | { refused: string } {
  const chain: string[] = [];
  let level: unknown = act;
  while (level !== undefined) {
    if (chain.length >= maxDepth)
      return { refused: `its delegation chain is longer than a2a.auth.delegation.maxDepth (${maxDepth})` };
    if (!level || typeof level !== 'object' || Array.isArray(level))
      return { refused: 'its act claim is not an object' };
    const { sub, iss, act: prior } = level as { sub?: unknown; iss?: unknown; act?: unknown };
    if (typeof sub !== 'string' || sub === '' || sub.length > MAX_ACTOR_LENGTH)
      return { refused: 'an actor of its act claim has no subject' };
    if (iss !== undefined && (typeof iss !== 'string' || trimmed(iss) !== trimmed(issuer)))
      return { refused: 'an actor of its act claim is of another issuer' };
    chain.push(sub);
    level = prior;
  }
  return chain.length > 0 ? chain : { refused: 'its act claim names no actor' };
}

/**
 * Builds the reader of delegated tokens for `a2a.auth.delegation` (none
 * configured: every delegated token is refused).
 * @example
 * const delegation = createDelegation({ delegation: config.a2a.auth.delegation, oidc, callers });
 * delegation.principalOf({ sub: 'x', act: { sub: 'node-a' } }); // { principal: { id: 'caller-x', actors: ['node-a'], … } }
 */
export function createDelegation(options: {
  delegation: A2aDelegation | undefined;
  oidc: A2aOidc;
  callers: Callers;
}): Delegation {
  const { delegation, oidc, callers } = options;
  if (!delegation)
    return { principalOf: () => ({ refused: 'a delegated token, and a2a.auth.delegation is not configured' }) };
  const allowed = new Set(delegation.actors);
  /** What an actor may do for anyone: its own grant as a caller; an owner actor narrows nothing. */
  const reachOf = (actor: string): Grant | undefined => {
    const known = callers.subjects.get(actor);
    if (known && isOwner(known)) return undefined;
    return known?.grant ?? callers.defaultGrant;
  };
  return {
    principalOf(claims) {
      const chain = actorChain(claims.act, delegation.maxDepth, oidc.issuer);
      if (!Array.isArray(chain)) return chain;
      const unknown = chain.find((actor) => !allowed.has(actor));
      if (unknown !== undefined) return { refused: 'an actor of its chain is not in a2a.auth.delegation.actors' };
      // The subject alone names the caller: the client id of a delegated token is its actor's.
      const subject =
        typeof claims.sub === 'string' && claims.sub !== ''
          ? principalOfClaims({ ...claims, client_id: undefined, azp: undefined }, { oidc, callers })
          : undefined;
      if (!subject) return { refused: 'its subject names no caller' };
      if (isOwner(subject)) return { refused: 'its subject is the owner, who does not act through delegates' };
      let grant = subject.grant ?? callers.defaultGrant;
      for (const actor of chain) {
        const reach = reachOf(actor);
        if (reach) grant = intersect(grant, reach);
      }
      return { principal: Object.freeze({ ...namedCaller(subject.id, grant), actors: Object.freeze(chain) }) };
    },
  };
}

function trimmed(url: string): string {
  return url.replace(/\/+$/, '');
}
