import { createHash, timingSafeEqual } from 'node:crypto';
import type { LangoConfig } from '../config/schema';
import { ConfigError } from '../errors';
import { ANONYMOUS, derivedId, isOwner, namedCaller, NOTHING, OWNER, SubjectToken, type Principal } from '../principal';
import type { Callers } from './callers';
import { isLoopbackHost } from '../net/host';
import type { Logger } from '../log/logger';
import { principalOfCertificate } from './claims';
import type { CallerRequest } from './request';
import { createIssuerKeys } from './issuerKeys';
import { createSignedInSessions, SESSION_COOKIE, cookieOf, type SignedInSessions } from './sessions';
import { createTokenValidator, type TokenValidator } from './tokens';
import { createDelegation } from './delegation';

/**
 * The node's one identity component (issue 37 §2), built once by
 * `createApp` from `a2a.auth` and shared by every binding and page (A2A,
 * discovery, push deliveries, the console, `/metrics`, `/node/*`): who a
 * request is, and whether that principal may call a route. Credentials:
 * bearer tokens and API keys (`callers.ts`), JWT access tokens of
 * `a2a.auth.oidc` (`tokens.ts`, one key set and one token cache), client
 * certificates of `server.tls.clientCa` (`claims.ts`), the console's
 * signed-in sessions (`sessions.ts`), the node's own owner tokens (the CLI's
 * local token) and the metrics scraper's token. No credential is
 * {@link ANONYMOUS}, never the owner — except on a node without `a2a.auth`,
 * asked from a loopback address, which is decided here and nowhere else.
 */

/**
 * Who may call a route (a column of the route table):
 * - `public`: anyone; no credential is read (the card, health probes, the console's sign-in);
 * - `caller`: a principal the node accepts — with `a2a.auth`, a valid credential; without it, whoever
 *   {@link Identity.principal} says (the owner from loopback, else anonymous);
 * - `owner`: the owner only (the console, `/node/*`);
 * - `metrics`: the owner or the scraper's token (`observability.metricsToken`).
 */
export type Access = 'public' | 'caller' | 'owner' | 'metrics';

/** Why a principal may not call a route: 401 (no acceptable credential) or 403 (a principal that may not). */
export interface AccessRefusal {
  readonly status: 401 | 403;
  readonly message: string;
}

/** The scraper of `/metrics` (`observability.metricsToken`): nothing granted, admitted to `metrics` routes only. */
export const METRICS_SCRAPER: Principal = namedCaller(derivedId('node', 'metrics'), NOTHING);

/** The node's identity component. */
export interface Identity {
  /** Whether `a2a.auth` (or a client CA) is configured: then a `caller` route needs a credential. */
  readonly required: boolean;
  /** The `WWW-Authenticate` challenge of a 401. */
  readonly challenge: string;
  /**
   * Who `req` is: the principal of the credential it presents; {@link ANONYMOUS} when it presents none (the
   * owner on a node without `a2a.auth` asked from loopback); undefined when it presents one the node does not
   * accept. Synchronous unless a token not seen before is validated (the promise never rejects).
   */
  principal(req: CallerRequest): Principal | undefined | Promise<Principal | undefined>;
  /** Why `principal` (undefined: a refused credential) may not call a route of `access`, or undefined. */
  refusal(access: Access, principal: Principal | undefined): AccessRefusal | undefined;
  /** The console's signed-in browsers: a sign-in takes any owner credential. */
  readonly sessions: SignedInSessions;
  /**
   * The OIDC access token `req` presents (a bearer token of `a2a.auth.oidc`, not a static one), carried beside
   * its principal for on-behalf-of calls of its turn (issue 33); undefined for every other credential.
   */
  subjectToken(req: CallerRequest): SubjectToken | undefined;
}

/** Options of {@link createIdentity}. */
export interface IdentityOptions {
  config: LangoConfig;
  callers: Callers;
  logger: Logger;
  /** Owner tokens the node makes itself (the CLI's local token): they never make `a2a.auth` configured. */
  ownerTokens?: readonly string[];
  /** Validates `a2a.auth.oidc` tokens; built from the config (its keys through the address policy) when absent. */
  tokens?: TokenValidator;
  /** Milliseconds since the epoch (console sessions). */
  now?: () => number;
}

/** How long a console sign-in lasts. */
export const CONSOLE_SESSION_MS = 8 * 3600_000;

const AUTH_REQUIRED = 'authentication required: present a valid bearer token or API key';

/**
 * Builds the identity component of `config`.
 * @example
 * const identity = createIdentity({ config, callers, logger });
 * const principal = await identity.principal(request); // ANONYMOUS, a caller, the owner, or undefined
 * identity.refusal('owner', principal); // { status: 403, message: 'only the node owner may …' } for a caller
 */
export function createIdentity(options: IdentityOptions): Identity {
  const { config, callers } = options;
  const required = authConfigured(config);
  const credentials = credentialTable(options);
  const tokens = options.tokens ?? tokenValidatorOf(config, callers, options.logger);
  const certificates = Boolean(config.server.tls?.clientCa);
  const apiKeyHeader = (config.a2a.auth?.apiKeyHeader ?? 'X-API-Key').toLowerCase();
  // The one exception: no `a2a.auth`, a node bound to loopback, asked from loopback (a node bound elsewhere may sit
  // behind a proxy on this machine: its callers are anonymous, its owner uses the CLI's owner token).
  const loopbackOwner = !required && isLoopbackHost(config.server.host);
  const now = options.now ?? Date.now;
  // Callers come from the same few addresses again and again: the last loopback one is not parsed twice.
  let lastLoopback: string | undefined;
  const fromLoopback = (address: string | undefined): boolean => {
    if (address !== undefined && address === lastLoopback) return true;
    if (!isLoopbackAddress(address)) return false;
    lastLoopback = address;
    return true;
  };

  const principal = (req: CallerRequest): Principal | undefined | Promise<Principal | undefined> => {
    // A console session speaks for the owner on the console's own paths only (the cookie's `Path`).
    const session = onConsolePath(req.path) ? cookieOf(req.headers.cookie, SESSION_COOKIE) : undefined;
    if (session !== undefined && sessions.live(session)) return OWNER;
    const token = bearerOf(req.headers.authorization);
    const key = req.headers[apiKeyHeader];
    const presentedKey = typeof key === 'string' && key.length > 0 ? key : undefined;
    if (token) {
      const found = credentials.bearer(token) ?? (tokens ? tokens.principal(token) : undefined);
      if (found !== undefined || required) return found;
    }
    if (presentedKey) {
      const found = credentials.apiKey(presentedKey);
      if (found !== undefined || required) return found;
    }
    // A certificate names the caller only when no other credential was presented: a wrong one is refused.
    const certificate = req.peerCertificate;
    if (certificates && !token && !presentedKey && certificate?.fingerprint256)
      return principalOfCertificate(certificate, callers);
    // A stale console cookie alone is a credential refused: the console asks to sign in again.
    if (session !== undefined && !token && !presentedKey) return undefined;
    return loopbackOwner && fromLoopback(req.remoteAddress) ? OWNER : ANONYMOUS;
  };
  const sessions = createSignedInSessions({
    ttlMs: CONSOLE_SESSION_MS,
    now,
    principalOf: async (secret) => {
      const asToken = await principal(presented({ authorization: `Bearer ${secret}` }));
      if (asToken && asToken.kind !== 'anonymous') return asToken;
      const asKey = await principal(presented({ [apiKeyHeader]: secret }));
      return asKey && asKey.kind !== 'anonymous' ? asKey : undefined;
    },
  });
  return {
    required,
    challenge: challengeOf(config, Boolean(tokens)),
    principal,
    refusal: (access, who) => refusalOf(access, who, required),
    sessions,
    subjectToken(req) {
      const token = tokens ? bearerOf(req.headers.authorization) : '';
      return token && credentials.bearer(token) === undefined ? new SubjectToken(token) : undefined;
    },
  };
}

/** Whether `principal` may call a route of `access`. */
function refusalOf(access: Access, principal: Principal | undefined, required: boolean): AccessRefusal | undefined {
  if (access === 'public') return undefined;
  if (principal === undefined || (principal.kind === 'anonymous' && (required || access !== 'caller')))
    return { status: 401, message: access === 'caller' ? AUTH_REQUIRED : `${AUTH_REQUIRED} of the node's owner` };
  if (access === 'caller' || isOwner(principal)) return undefined;
  if (access === 'metrics' && principal === METRICS_SCRAPER) return undefined;
  return { status: 403, message: `only the node owner may look (you are ${principal.id})` };
}

function onConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/');
}

/** A request presenting `headers` only (a sign-in's secret, tried as each kind of credential). */
function presented(headers: Record<string, string>): CallerRequest {
  return { method: 'POST', path: '/', headers, remoteAddress: undefined, peerCertificate: undefined };
}

/** The static credentials by digest: bearer tokens (with the owner's and the scraper's) and API keys. */
function credentialTable(options: IdentityOptions) {
  const { callers, config } = options;
  const entries = (kind: 'bearer' | 'apiKey') =>
    callers.credentials
      .filter((c) => c.kind === kind)
      .map((c) => ({ digest: fingerprint(c.value), principal: c.principal }));
  const bearer = [
    ...entries('bearer'),
    ...(options.ownerTokens ?? []).map((t) => ({ digest: fingerprint(t), principal: OWNER })),
    ...(config.observability.metricsToken
      ? [{ digest: fingerprint(config.observability.metricsToken), principal: METRICS_SCRAPER }]
      : []),
  ];
  const keys = entries('apiKey');
  const match = (candidates: typeof bearer, secret: string): Principal | undefined => {
    if (candidates.length === 0) return undefined;
    const digest = fingerprint(secret);
    // Compare against every candidate so timing does not reveal which one matched.
    let found: Principal | undefined;
    for (const candidate of candidates) if (timingSafeEqual(candidate.digest, digest)) found = candidate.principal;
    return found;
  };
  return { bearer: (token: string) => match(bearer, token), apiKey: (key: string) => match(keys, key) };
}

const fingerprint = (secret: string) => createHash('sha256').update(secret).digest();

function bearerOf(authorization: string | string[] | undefined): string {
  return typeof authorization === 'string' && /^bearer /i.test(authorization) ? authorization.slice(7).trim() : '';
}

/** Whether a socket's remote address is this machine (`::ffff:127.0.0.1` included); unknown is not. */
function isLoopbackAddress(address: string | undefined): boolean {
  return address !== undefined && isLoopbackHost(address);
}

function challengeOf(config: LangoConfig, oidc: boolean): string {
  const kinds = credentialKinds(config);
  const header = config.a2a.auth?.apiKeyHeader ?? 'X-API-Key';
  return [
    ...(kinds.bearer || oidc || !kinds.apiKey ? ['Bearer realm="lango"'] : []),
    ...(kinds.apiKey ? [`ApiKey realm="lango", header="${header}"`] : []),
  ].join(', ');
}

/** The validator of `a2a.auth.oidc`, its keys fetched through the outbound address policy; none without it. */
function tokenValidatorOf(config: LangoConfig, callers: Callers, logger: Logger): TokenValidator | undefined {
  const oidc = config.a2a.auth?.oidc;
  if (!oidc) return undefined;
  const log = logger.child({ component: 'a2a.oidc' });
  const keys = createIssuerKeys({
    issuer: oidc.issuer,
    jwksUrl: oidc.jwksUrl,
    allowPrivateNetwork: oidc.allowPrivateNetwork,
    logger: log,
  });
  const delegation = createDelegation({ delegation: config.a2a.auth?.delegation, oidc, callers });
  return createTokenValidator({ oidc, callers, keys, logger: log, delegation });
}

/**
 * Fails closed: a node reachable from other hosts must authenticate its
 * callers unless the operator says otherwise (`a2a.allowUnauthenticated`;
 * its callers from elsewhere are then anonymous, with nothing granted).
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
