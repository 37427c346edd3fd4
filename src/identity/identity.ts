import { createHash, timingSafeEqual } from 'node:crypto';
import type { User } from '@a2a-js/sdk/server';
import type { LangoConfig } from '../config/schema';
import { ConfigError } from '../errors';
import { inTenant, namedCaller, OWNER, SubjectToken, type Principal } from '../principal';
import type { CallerCredential, Callers } from './callers';
import { isLoopbackHost } from '../net/host';
import type { Logger } from '../log/logger';
import { principalOfCertificate } from './claims';
import { ANONYMOUS, type CallerRequest } from './request';
import { createIssuerKeys } from './issuerKeys';
import { createTokenValidator, type TokenValidator } from './tokens';
import { createDelegation } from './delegation';

/**
 * Caller authentication for the A2A endpoints, checked before the SDK sees
 * the request: bearer tokens and/or API keys from `a2a.auth`
 * (`callers.ts`), JWT access tokens of `a2a.auth.oidc` (`tokens.ts`) and
 * client certificates of `server.tls.clientCa` (`identities.ts`). A
 * caller's identity is its configured name, a hash of its credential or
 * its token's subject, so tasks can be scoped per caller without the
 * secret ever being stored or logged.
 */

/** An authenticated caller. `userName` (its principal's id) scopes its tasks in the store. */
export class CredentialUser implements User {
  readonly principal: Principal;
  constructor(
    readonly userName: string,
    principal?: Principal,
    /** The OIDC token the caller presented, for on-behalf-of calls of its turn (issue 33); none for other credentials. */
    readonly subjectToken?: SubjectToken,
  ) {
    this.principal = principal ?? namedCaller(userName);
  }
  get isAuthenticated(): boolean {
    return true;
  }
}

/** The token a request's caller presented that a delegated call may exchange (an OIDC token), if any. */
export function subjectTokenOf(user: User | undefined): SubjectToken | undefined {
  return user instanceof CredentialUser ? user.subjectToken : undefined;
}

/**
 * The principal a request runs as: an authenticated credential's (a named
 * caller with its grant, or the owner for a credential marked `owner`);
 * anyone else (no auth configured, so a loopback caller by the exposure
 * rule) is the owner. In the A2A `tenant` the request named (the call
 * context's), it is that principal of the tenant (`principal.ts` `inTenant`).
 */
export function principalOf(user: User | undefined, tenant?: string): Principal {
  return inTenant(user instanceof CredentialUser ? user.principal : OWNER, tenant);
}

const fingerprint = (secret: string) => createHash('sha256').update(secret).digest();

/** Finds which configured credential (if any) a request presents. */
export interface Authenticator {
  /** Whether any credential is configured (else every caller is anonymous). */
  readonly enabled: boolean;
  /**
   * The caller, `undefined` when credentials are required and missing or
   * wrong. A promise only while a token not seen before is validated (its
   * promise never rejects); synchronous otherwise.
   */
  authenticate(req: Pick<CallerRequest, 'headers' | 'peerCertificate'>): User | undefined | Promise<User | undefined>;
  /** The `WWW-Authenticate` challenge for a refusal. */
  readonly challenge: string;
}

/** Options of {@link createAuthenticator}. */
export interface AuthenticatorOptions {
  /** Validates `a2a.auth.oidc` tokens; built from the config (the issuer's keys through the address policy) when absent. */
  tokens?: TokenValidator;
  /** Where refused tokens are noted (at debug level, never the token). */
  logger?: Logger;
}

/**
 * Builds the authenticator for `a2a.auth`: each credential of `callers`
 * authenticates its principal, and so do the issuer's tokens and the
 * client CA's certificates when configured.
 * @example
 * const auth = createAuthenticator(config, createCallers(config.a2a.auth, { defaultGrant }));
 * const step = credentials({ authenticate: (req) => auth.authenticate(req), challenge: auth.challenge });
 */
export function createAuthenticator(
  config: LangoConfig,
  callers: Callers,
  options: AuthenticatorOptions = {},
): Authenticator {
  const auth = config.a2a.auth;
  const tokens = options.tokens ?? tokenValidatorOf(config, callers, options.logger);
  const certificates = Boolean(config.server.tls?.clientCa);
  const enabled = callers.enabled || certificates;
  const digests = (kind: CallerCredential['kind']) =>
    callers.credentials.filter((c) => c.kind === kind).map((c) => ({ digest: fingerprint(c.value), caller: c }));
  const bearer = digests('bearer');
  const keys = digests('apiKey');
  const header = (auth?.apiKeyHeader ?? 'X-API-Key').toLowerCase();
  const match = (candidates: typeof bearer, presented: string): User | undefined => {
    const digest = fingerprint(presented);
    // Compare against every candidate so timing does not reveal which one matched.
    let found: CallerCredential | undefined;
    for (const candidate of candidates) if (timingSafeEqual(candidate.digest, digest)) found = candidate.caller;
    return found ? new CredentialUser(found.principal.id, found.principal) : undefined;
  };
  const challenges = [
    ...(bearer.length > 0 || tokens ? ['Bearer realm="lango"'] : []),
    ...(keys.length > 0 ? [`ApiKey realm="lango", header="${auth?.apiKeyHeader ?? 'X-API-Key'}"`] : []),
  ];
  return {
    enabled,
    challenge: challenges.join(', '),
    authenticate(req) {
      if (!enabled) return ANONYMOUS;
      const authorization = req.headers.authorization;
      const token =
        typeof authorization === 'string' && /^bearer /i.test(authorization) ? authorization.slice(7).trim() : '';
      if (bearer.length > 0 && token) {
        const user = match(bearer, token);
        if (user) return user;
      }
      const key = req.headers[header];
      if (keys.length > 0 && typeof key === 'string' && key.length > 0) {
        const user = match(keys, key);
        if (user) return user;
      }
      if (tokens && token) {
        // The token goes with the caller (never inside its principal): a delegated call may exchange it.
        const withToken = (principal: Principal | undefined) =>
          principal && new CredentialUser(principal.id, principal, new SubjectToken(token));
        const principal = tokens.principal(token);
        return principal instanceof Promise ? principal.then(withToken) : withToken(principal);
      }
      // A certificate names the caller only when no other credential was presented: a wrong one is refused.
      const certificate = req.peerCertificate;
      if (certificates && !token && !key && certificate?.fingerprint256)
        return userOf(principalOfCertificate(certificate, callers));
      return undefined;
    },
  };
}

/** Users by principal: an authenticated request costs no new object. */
const users = new WeakMap<Principal, User>();

function userOf(principal: Principal | undefined): User | undefined {
  if (!principal) return undefined;
  let user = users.get(principal);
  if (!user) {
    user = new CredentialUser(principal.id, principal);
    users.set(principal, user);
  }
  return user;
}

/** The validator of `a2a.auth.oidc`, its keys fetched through the outbound address policy; none without it. */
function tokenValidatorOf(config: LangoConfig, callers: Callers, logger?: Logger): TokenValidator | undefined {
  const oidc = config.a2a.auth?.oidc;
  if (!oidc) return undefined;
  const log = (logger ?? silent).child({ component: 'a2a.oidc' });
  const keys = createIssuerKeys({
    issuer: oidc.issuer,
    jwksUrl: oidc.jwksUrl,
    allowPrivateNetwork: oidc.allowPrivateNetwork,
    logger: log,
  });
  const delegation = createDelegation({ delegation: config.a2a.auth?.delegation, oidc, callers });
  return createTokenValidator({ oidc, callers, keys, logger: log, delegation });
}

const silent: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silent,
};

/**
 * Fails closed: a node reachable from other hosts must authenticate its
 * callers unless the operator says otherwise (`a2a.allowUnauthenticated`).
 */
export function assertSafeExposure(config: LangoConfig): void {
  const host = config.server.host;
  // By address, in any spelling: `127.example.com` is a name, not loopback (src/net).
  if (isLoopbackHost(host) || authConfigured(config) || config.a2a.allowUnauthenticated) return;
  throw new ConfigError(`refusing to serve A2A on ${host} without authentication`, [
    `server.host: ${host} is not a loopback address; configure a2a.auth or set a2a.allowUnauthenticated: true`,
  ]);
}

/** Whether `a2a.auth` names at least one bearer token / API key, in the plain lists or a named caller's. */
export function credentialKinds(config: LangoConfig): { bearer: boolean; apiKey: boolean } {
  const auth = config.a2a.auth;
  const callers = auth?.callers ?? [];
  return {
    bearer: (auth?.bearerTokens.length ?? 0) > 0 || callers.some((c) => c.bearerTokens.length > 0),
    apiKey: (auth?.apiKeys.length ?? 0) > 0 || callers.some((c) => c.apiKeys.length > 0),
  };
}

/** Whether `a2a.auth` names at least one credential, an issuer, or a caller by certificate (or a client CA is set). */
export function authConfigured(config: LangoConfig): boolean {
  const kinds = credentialKinds(config);
  const auth = config.a2a.auth;
  return (
    kinds.bearer ||
    kinds.apiKey ||
    Boolean(auth?.oidc) ||
    Boolean(config.server.tls?.clientCa) ||
    (auth?.callers ?? []).some((c) => c.oidcSubjects.length + c.clientCertificates.length > 0)
  );
}
