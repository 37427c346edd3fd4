import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { User } from '@a2a-js/sdk/server';
import { UnauthenticatedUser } from '@a2a-js/sdk/server';
import type { LangoConfig } from '../config/schema';
import { ConfigError } from '../errors';
import { inTenant, namedCaller, OWNER, type Principal } from '../principal';
import { authConfigured } from './card';
import type { CallerCredential, Callers } from './callers';
import { isLoopbackHost } from '../net/host';

/**
 * Caller authentication for the A2A endpoints: bearer tokens and/or API keys
 * from `a2a.auth` (`callers.ts`), checked before the SDK sees the request.
 * A caller's identity is its configured name or a hash of its credential,
 * so tasks can be scoped per caller without the secret ever being stored or
 * logged.
 */

/** An authenticated caller. `userName` (its principal's id) scopes its tasks in the store. */
export class CredentialUser implements User {
  readonly principal: Principal;
  constructor(
    readonly userName: string,
    principal?: Principal,
  ) {
    this.principal = principal ?? namedCaller(userName);
  }
  get isAuthenticated(): boolean {
    return true;
  }
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
  /** The caller, `undefined` when credentials are required and missing or wrong (read from the headers only). */
  authenticate(req: Pick<IncomingMessage, 'headers'>): User | undefined;
  /** The `WWW-Authenticate` challenge for a refusal. */
  readonly challenge: string;
}

/**
 * Builds the authenticator for `a2a.auth`: each credential of `callers`
 * authenticates its principal.
 * @example
 * const auth = createAuthenticator(config, createCallers(config.a2a.auth, { defaultGrant }));
 * app.use(requireAuth(auth));
 */
export function createAuthenticator(config: LangoConfig, callers: Callers): Authenticator {
  const auth = config.a2a.auth;
  const enabled = callers.enabled;
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
    ...(bearer.length > 0 ? ['Bearer realm="lango"'] : []),
    ...(keys.length > 0 ? [`ApiKey realm="lango", header="${auth?.apiKeyHeader ?? 'X-API-Key'}"`] : []),
  ];
  return {
    enabled,
    challenge: challenges.join(', '),
    authenticate(req) {
      if (!enabled) return new UnauthenticatedUser();
      const authorization = req.headers.authorization;
      if (bearer.length > 0 && typeof authorization === 'string' && /^bearer /i.test(authorization)) {
        const user = match(bearer, authorization.slice(7).trim());
        if (user) return user;
      }
      const key = req.headers[header];
      if (keys.length > 0 && typeof key === 'string' && key.length > 0) {
        const user = match(keys, key);
        if (user) return user;
      }
      return undefined;
    },
  };
}

const USER = Symbol('a2aUser');
type WithUser = Request & { [USER]?: User };

/**
 * Middleware refusing unauthenticated calls with 401 and `WWW-Authenticate`;
 * the body is a JSON-RPC error for JSON-RPC posts, a REST error otherwise.
 */
export function requireAuth(auth: Authenticator): RequestHandler {
  return (req, res, next) => {
    const user = auth.authenticate(req);
    if (user) {
      (req as WithUser)[USER] = user;
      next();
      return;
    }
    res.setHeader('WWW-Authenticate', auth.challenge);
    const message = 'authentication required: present a valid bearer token or API key';
    if (req.method === 'POST' && req.path === '/') {
      res.status(401).json({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
    } else {
      res.status(401).json({ error: { code: 401, status: 'UNAUTHENTICATED', message } });
    }
  };
}

/** The SDK's `userBuilder`: the caller {@link requireAuth} identified. */
export const userFromRequest = async (req: Request): Promise<User> =>
  (req as WithUser)[USER] ?? new UnauthenticatedUser();

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
