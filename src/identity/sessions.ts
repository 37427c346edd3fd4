import { createHash, randomBytes } from 'node:crypto';
import { isOwner, type Principal } from '../principal';

/** The cookie naming a console session. */
export const SESSION_COOKIE = 'lango_console';

/** What a sign-in came to: a new session's id, or why not. */
export type SignIn = { ok: true; sessionId: string } | { ok: false; status: 401 | 403; message: string };

/**
 * The owner's signed-in browsers (the console): a browser cannot attach a
 * bearer token to a page load or to an `EventSource`, so the owner types an
 * owner credential once into the sign-in form and the node answers with an
 * opaque, HttpOnly, SameSite=Strict cookie naming a session it keeps in
 * memory (only a digest of the id). The credential itself is never kept and
 * never put in the cookie. A live session's cookie is an owner credential
 * of the identity component.
 */
export interface SignedInSessions {
  /** Whether `sessionId` names a live session. */
  live(sessionId: string): boolean;
  /**
   * A new session when `secret` is an owner credential (a bearer token or API key the node maps to the owner); 401
   * for a secret the node does not accept, 403 for another principal's credential.
   */
  signIn(secret: string): Promise<SignIn>;
  /** Forgets the session a `Cookie` header names. */
  signOut(cookieHeader: string | undefined): void;
}

/** Sessions kept at most (the oldest goes first): one owner, a few browsers. */
const MAX_SESSIONS = 64;

/**
 * @example
 * const sessions = createSignedInSessions({ ttlMs: 8 * 3600_000, now: Date.now, principalOf });
 */
export function createSignedInSessions(options: {
  ttlMs: number;
  now: () => number;
  /** Whom `secret` names (as a bearer token, then as an API key); undefined when nobody. */
  principalOf: (secret: string) => Promise<Principal | undefined>;
}): SignedInSessions {
  const sessions = new Map<string, number>();
  const digest = (id: string) => createHash('sha256').update(id).digest('hex');
  return {
    live(sessionId) {
      const key = digest(sessionId);
      const expires = sessions.get(key);
      if (expires !== undefined && expires > options.now()) return true;
      sessions.delete(key);
      return false;
    },
    async signIn(secret) {
      const principal = await options.principalOf(secret);
      if (!principal) return { ok: false, status: 401, message: 'that token is not one this node accepts' };
      if (!isOwner(principal)) return { ok: false, status: 403, message: 'only the node owner may look' };
      const sessionId = randomBytes(32).toString('base64url');
      sessions.set(digest(sessionId), options.now() + options.ttlMs);
      while (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      return { ok: true, sessionId };
    },
    signOut(cookieHeader) {
      const id = cookieOf(cookieHeader, SESSION_COOKIE);
      if (id !== undefined) sessions.delete(digest(id));
    },
  };
}

/** One cookie's value from a `Cookie` header. */
export function cookieOf(header: string | string[] | undefined, name: string): string | undefined {
  if (typeof header !== 'string') return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
