import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { SubjectToken } from '../principal';
import { errorMessage } from '../errors';
import {
  createClientCredentials,
  requestToken,
  setAudience,
  type PeerCredentials,
  type TokenClient,
} from './peerToken';

/**
 * On-behalf-of delegation to a remote agent (issue 33; OAuth 2.0 Token
 * Exchange, RFC 8693 §2): an entry with `auth: { type: tokenExchange }`
 * calls the remote with the caller's own token exchanged at the entry's
 * token endpoint for one whose audience is the remote — the caller its
 * subject, this node (authenticated as the entry's client, with its own
 * token as `actor_token` when configured) its actor. The remote then sees
 * who asked and applies that caller's rights.
 *
 * An exchanged token is kept per caller's token and remote until shortly
 * before it expires, so a caller's later calls cost no exchange; it is
 * registered with the secret registry while kept (masked wherever a peer
 * echoes it) and never stored or logged. A caller with nothing to exchange
 * (a static credential, the local owner) is refused with `required` and
 * called with the node's own client-credentials token with `preferred`. An
 * exchange that fails — the endpoint down, slow or answering garbage, the
 * caller's token refused — refuses the call with the reason: the request
 * never goes out as anyone but its caller.
 */

/** RFC 8693 §2.1's grant type. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3's token type of an access token: what the caller's token is, and what is asked for. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** An entry's `auth` of type `tokenExchange`, its secret resolved. */
export interface TokenExchangeGrant extends TokenClient {
  audience: string;
  scopes: string[];
  onBehalfOf: 'required' | 'preferred';
  actorToken: boolean;
}

/** How one call to the remote goes out, or why it does not. */
export type CallCredentials =
  | { ok: true; credentials: PeerCredentials; onBehalfOf: boolean }
  /** `needs: 'auth'`: the caller must bring a token to exchange (A2A auth-required). */
  | { ok: false; reason: string; needs?: 'auth' };

/** What the last exchange (or `agents --check`'s probe) found: whether on-behalf-of works with this remote. */
export interface DelegationCheck {
  /** When it ran (ISO time). */
  at: string;
  ok: boolean;
  reason?: string;
  /** A probe with the node's own token, not a caller's exchange. */
  probe?: boolean;
}

/** One remote's on-behalf-of calls. */
export interface OnBehalfOf {
  readonly mode: 'required' | 'preferred';
  /** The credentials of one call made for the caller who presented `subject` (undefined: nothing to exchange). */
  forCall(subject: SubjectToken | undefined): Promise<CallCredentials>;
  /**
   * Exchanges a client-credentials token of the node's own (for `selfAudience`, the audience the node's own
   * callers' tokens carry) for one of the remote: whether the issuer performs the exchange (`agents --check`).
   */
  check(selfAudience: string | undefined): Promise<DelegationCheck>;
  /** The outcome of the latest exchange or check, if any ran. */
  last(): DelegationCheck | undefined;
}

/** Options of {@link createOnBehalfOf}. */
export interface OnBehalfOfOptions {
  /** The remote's name, for the reasons given. */
  name: string;
  grant: TokenExchangeGrant;
  /** The entry's pinned dispatcher: the token endpoint is reached through the address policy too. */
  dispatcher: Dispatcher;
  /** Registers each kept token with the node's redactor (and forgets it once dropped). */
  secrets?: { add(value: string | undefined): void; delete?(value: string): void };
  /** Deadline of one token request. */
  timeoutMs?: number;
  /** Most exchanged tokens kept (the oldest dropped first). */
  maxEntries?: number;
  now?: () => number;
}

interface Kept {
  token: string;
  renewAt: number;
}

/**
 * @example
 * const onBehalfOf = createOnBehalfOf({ name: 'billing', grant, dispatcher, secrets });
 * const call = await onBehalfOf.forCall(invocation.subjectToken);
 * if (call.ok) meters.start(signal, call.credentials);
 */
export function createOnBehalfOf(options: OnBehalfOfOptions): OnBehalfOf {
  const { grant, name } = options;
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 1_000;
  const kept = new Map<string, Kept>();
  const pending = new Map<string, Promise<string>>();
  let last: DelegationCheck | undefined;
  // The node's own token: the fallback of `preferred`, and the actor token where configured.
  const own = createClientCredentials({
    grant,
    dispatcher: options.dispatcher,
    secrets: options.secrets,
    timeoutMs: options.timeoutMs,
    now,
  });

  const drop = (key: string) => {
    const entry = kept.get(key);
    if (!entry) return;
    kept.delete(key);
    options.secrets?.delete?.(entry.token);
  };
  const keep = (key: string, token: string, lifetimeMs: number) => {
    drop(key);
    // Those kept longest expire first: drop the stale ones at the front, then the oldest past the bound.
    for (const [oldest, entry] of kept) {
      if (entry.renewAt > now() && kept.size < maxEntries) break;
      drop(oldest);
    }
    options.secrets?.add(token);
    kept.set(key, { token, renewAt: now() + lifetimeMs - Math.min(30_000, lifetimeMs / 10) });
  };

  const exchange = async (subject: string): Promise<{ token: string; lifetimeMs: number }> => {
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    setAudience(form, grant.audience);
    if (grant.scopes.length > 0) form.set('scope', grant.scopes.join(' '));
    if (grant.actorToken) {
      const actor = (await own.headers()).authorization.replace(/^Bearer /, '');
      form.set('actor_token', actor);
      form.set('actor_token_type', ACCESS_TOKEN_TYPE);
    }
    return requestToken(grant, form, { ...options, what: 'on-behalf-of token exchange' });
  };

  /** The exchanged token for the caller's token `subject` (keyed by its digest): kept, or exchanged now (shared). */
  const tokenFor = (key: string, subject: string): Promise<string> => {
    const entry = kept.get(key);
    if (entry && now() < entry.renewAt) return Promise.resolve(entry.token);
    let running = pending.get(key);
    if (!running) {
      running = exchange(subject)
        .then(({ token, lifetimeMs }) => {
          keep(key, token, lifetimeMs);
          last = { at: new Date(now()).toISOString(), ok: true };
          return token;
        })
        .catch((error: unknown) => {
          last = { at: new Date(now()).toISOString(), ok: false, reason: errorMessage(error) };
          throw error;
        })
        .finally(() => pending.delete(key));
      pending.set(key, running);
    }
    return running;
  };

  return {
    mode: grant.onBehalfOf,
    async forCall(subject) {
      if (!subject) {
        if (grant.onBehalfOf === 'preferred') return { ok: true, credentials: own, onBehalfOf: false };
        return {
          ok: false,
          needs: 'auth',
          reason:
            `calls to ${name} are made on behalf of their caller (auth.onBehalfOf: required), and this ` +
            "request presented no token of the node's issuer to exchange: call with an OpenID Connect access token",
        };
      }
      const value = subject.reveal();
      if (expired(value, now()))
        return { ok: false, reason: `the caller's token has expired: nothing to exchange for ${name}` };
      const key = createHash('sha256').update(value).digest('base64url');
      try {
        await tokenFor(key, value);
      } catch (error) {
        return { ok: false, reason: errorMessage(error) };
      }
      return {
        ok: true,
        onBehalfOf: true,
        credentials: {
          headers: async () => ({ authorization: `Bearer ${await tokenFor(key, value)}` }),
          rejected: (sent) => {
            if (sent.authorization === `Bearer ${kept.get(key)?.token}`) drop(key);
          },
        },
      };
    },
    async check(selfAudience) {
      const at = new Date(now()).toISOString();
      if (!selfAudience)
        return (
          last ?? {
            at,
            ok: false,
            reason: 'not checked: this node accepts no OIDC tokens (a2a.auth.oidc), so it has none to exchange',
          }
        );
      try {
        const self = await requestToken(grant, selfTokenForm(selfAudience), {
          ...options,
          what: 'token request for the check',
        });
        await exchange(self.token);
        last = { at, ok: true, probe: true };
      } catch (error) {
        last = { at, ok: false, reason: errorMessage(error), probe: true };
      }
      return last;
    },
    last: () => last,
  };
}

/** A client-credentials request for a token of the node's own, for `audience` (what a caller of it holds). */
function selfTokenForm(audience: string): URLSearchParams {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  setAudience(form, audience);
  return form;
}

/** Whether a JWT's `exp` has passed (a token that is not a JWT, or says nothing, is left to the issuer). */
function expired(token: string, nowMs: number): boolean {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof payload.exp === 'number' && payload.exp * 1000 <= nowMs;
  } catch {
    return false;
  }
}
