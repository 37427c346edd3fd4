import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { User } from '@a2a-js/sdk/server';
import { UnauthenticatedUser } from '@a2a-js/sdk/server';
import type { LangoConfig } from '../config/schema';
import { ConfigError } from '../errors';
import { authConfigured } from './card';
import { isLoopbackHost } from '../net/host';

/**
 * Caller authentication for the A2A endpoints: bearer tokens and/or API keys
 * from `a2a.auth`, checked before the SDK sees the request. A caller's
 * identity is a hash of its credential, so tasks can be scoped per caller
 * without the secret ever being stored or logged.
 */

/** An authenticated caller. `userName` scopes its tasks in the store. */
export class CredentialUser implements User {
  constructor(readonly userName: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
}

const fingerprint = (secret: string) => createHash('sha256').update(secret).digest();

/** Finds which configured credential (if any) a request presents. */
export interface Authenticator {
  /** Whether any credential is configured (else every caller is anonymous). */
  readonly enabled: boolean;
  /** The caller, `undefined` when credentials are required and missing or wrong. */
  authenticate(req: Request): User | undefined;
  /** The `WWW-Authenticate` challenge for a refusal. */
  readonly challenge: string;
}

/**
 * Builds the authenticator for `a2a.auth`.
 * @example
 * const auth = createAuthenticator(config);
 * app.use(requireAuth(auth));
 */
export function createAuthenticator(config: LangoConfig): Authenticator {
  const auth = config.a2a.auth;
  const enabled = authConfigured(config);
  const bearer = (auth?.bearerTokens ?? []).map(fingerprint);
  const keys = (auth?.apiKeys ?? []).map(fingerprint);
  const header = (auth?.apiKeyHeader ?? 'X-API-Key').toLowerCase();
  const match = (candidates: Buffer[], presented: string) => {
    const digest = fingerprint(presented);
    // Compare against every candidate so timing does not reveal which one matched.
    let found = -1;
    candidates.forEach((candidate, index) => {
      if (timingSafeEqual(candidate, digest)) found = index;
    });
    return found >= 0 ? digest.toString('hex').slice(0, 16) : undefined;
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
        const id = match(bearer, authorization.slice(7).trim());
        if (id) return new CredentialUser(`bearer:${id}`);
      }
      const key = req.headers[header];
      if (keys.length > 0 && typeof key === 'string' && key.length > 0) {
        const id = match(keys, key);
        if (id) return new CredentialUser(`apikey:${id}`);
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
