import { createHash, randomBytes } from 'node:crypto';
import type { Request } from 'express';
import type { AccessRefusal } from './access';

/** The cookie naming a console session. */
export const SESSION_COOKIE = 'lango_console';

/** What a sign-in with a token came to: a new session's id, or the refusal. */
export type SignIn = { ok: true; sessionId: string } | { ok: false; refusal: NonNullable<AccessRefusal> };

/** The owner's signed-in browsers, and the access check that knows them. */
export interface ConsoleSessions {
  /**
   * Who may look: a request with a live session cookie, else whatever the
   * node's owner check says (loopback without auth, an owner bearer token).
   * An unknown or expired cookie is refused with that reason.
   */
  access(req: Request): AccessRefusal;
  /** Checks `token` as the owner check would see it presented; a new session when it is the owner's. */
  signIn(token: string): SignIn;
  /** Forgets the request's session. */
  signOut(req: Request): void;
}

/** Sessions kept at most (the oldest goes first): one owner, a few browsers. */
const MAX_SESSIONS = 64;

/**
 * Console sessions: a browser cannot attach a bearer token to a page load or
 * to an `EventSource`, so the owner types the token once into the sign-in
 * form, the node checks it with the owner check and answers with an opaque,
 * HttpOnly, SameSite=Strict cookie naming a session it keeps in memory for
 * `ttlMs` (only a digest of the id is kept). The token itself is never stored
 * server-side and never put in the cookie.
 * @example
 * const sessions = createConsoleSessions({ ownerCheck: ownerAccess(config, callers), ttlMs: 8 * 3600_000, now: Date.now });
 */
export function createConsoleSessions(options: {
  ownerCheck: (req: Request) => AccessRefusal;
  ttlMs: number;
  now: () => number;
}): ConsoleSessions {
  const sessions = new Map<string, number>();
  const digest = (id: string) => createHash('sha256').update(id).digest('hex');

  return {
    access(req) {
      const id = cookieOf(req, SESSION_COOKIE);
      if (id !== undefined) {
        const key = digest(id);
        const expires = sessions.get(key);
        if (expires !== undefined && expires > options.now()) return undefined;
        sessions.delete(key);
        // A bearer header may still speak for the owner (a script beside a stale browser cookie).
        if (req.headers.authorization === undefined) {
          return { status: 401, message: 'your console session expired or is unknown: sign in again' };
        }
      }
      return options.ownerCheck(req);
    },
    signIn(token) {
      const probe = { headers: { authorization: `Bearer ${token}` } } as Request;
      const refusal = options.ownerCheck(probe);
      if (refusal) return { ok: false, refusal };
      const sessionId = randomBytes(32).toString('base64url');
      sessions.set(digest(sessionId), options.now() + options.ttlMs);
      while (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      return { ok: true, sessionId };
    },
    signOut(req) {
      const id = cookieOf(req, SESSION_COOKIE);
      if (id !== undefined) sessions.delete(digest(id));
    },
  };
}

/** One cookie's value from the request's `Cookie` header. */
function cookieOf(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
