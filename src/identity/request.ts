import type { IncomingHttpHeaders } from 'node:http';
import type { PeerCertificate } from 'node:tls';
import type { User } from '@a2a-js/sdk/server';
import { ANONYMOUS, inTenant, type Principal, type SubjectToken } from '../principal';

/**
 * A request as the host guard and the identity component see it, with nothing of the transport that carried it:
 * HTTP/1.1 gives its own; gRPC gives `POST`, its method path, its metadata as headers (`:authority` as `host`).
 */
export interface CallerRequest {
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
  /** The client's certificate on a TLS connection that asked for one (mTLS), else undefined. */
  readonly peerCertificate: PeerCertificate | undefined;
}

/**
 * A principal as the SDK's request handler is given it (its `ServerCallContext.user`): the one way a principal
 * crosses the SDK, read back by {@link principalOf}. `userName` is the principal's id.
 */
export class PrincipalUser implements User {
  constructor(
    readonly principal: Principal,
    /** The OIDC token the caller presented, for on-behalf-of calls of its turn (issue 33); none for other credentials. */
    readonly subjectToken?: SubjectToken,
  ) {}
  get userName(): string {
    return this.principal.id;
  }
  get isAuthenticated(): boolean {
    return this.principal.kind !== 'anonymous';
  }
}

/** Users by principal: a request costs no new object. */
const users = new WeakMap<Principal, PrincipalUser>();

/** The SDK user of `principal` (one object per principal). */
export function userOf(principal: Principal): PrincipalUser {
  let user = users.get(principal);
  if (!user) {
    user = new PrincipalUser(principal);
    users.set(principal, user);
  }
  return user;
}

/** The SDK user of `principal` and the token it presented: a user of its own when there is one to carry. */
export function userFor(principal: Principal, subjectToken: SubjectToken | undefined): PrincipalUser {
  return subjectToken ? new PrincipalUser(principal, subjectToken) : userOf(principal);
}

/** The token a request's caller presented that a delegated call may exchange (an OIDC token), if any. */
export function subjectTokenOf(user: User | undefined): SubjectToken | undefined {
  return user instanceof PrincipalUser ? user.subjectToken : undefined;
}

/**
 * The principal a request handler call runs as, in the A2A `tenant` it named (`principal.ts` `inTenant`): the
 * principal of a {@link PrincipalUser}; anything else (no user, a user of another making) is anonymous. Fails
 * closed: nothing but the identity component's decision makes a call the owner's.
 */
export function principalOf(user: User | undefined, tenant?: string): Principal {
  return inTenant(user instanceof PrincipalUser ? user.principal : ANONYMOUS, tenant);
}
