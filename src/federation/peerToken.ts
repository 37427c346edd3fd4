import { request, type Dispatcher } from 'undici';
import { errorMessage, RemoteAgentError } from '../errors';
import { BodyTooLargeError, discardBody, readBody } from '../net/body';
import { createDeadline } from '../net/deadline';
import { describeNetworkError } from './cardFetch';

/**
 * OAuth 2 client credentials for a remote agent (`auth: { type: oauth2 }`,
 * RFC 6749 §4.4, issue 26): the access token is fetched from the entry's
 * token endpoint when the first call needs it, kept in memory until
 * shortly before it expires, and fetched again once when the peer answers
 * 401 (it may have been revoked, or the peer's clock differs). Concurrent
 * calls share one fetch. Every token is registered with the node's secret
 * registry, so a log line or answer that echoes it shows it masked; it is
 * sent in the `Authorization` header only, never in a message, so it
 * reaches no task history.
 */

/** Credentials a call to a peer carries, asked for at each request (`peerFetch.ts`). */
export interface PeerCredentials {
  /** The headers to send now (the current token; fetched first when there is none). */
  headers(): Promise<Record<string, string>>;
  /** The peer refused `sent` (HTTP 401): the token in it is dropped, the next `headers()` fetches another. */
  rejected(sent: Record<string, string>): void;
}

/** An entry's `auth` of type `oauth2`, its secret resolved. */
export interface ClientCredentialsGrant {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  audience?: string;
  clientAuth: 'basic' | 'post';
}

/** Options of {@link createClientCredentials}. */
export interface ClientCredentialsOptions {
  grant: ClientCredentialsGrant;
  /** The federation's pinned dispatcher: the token endpoint is reached through the address policy too. */
  dispatcher: Dispatcher;
  /** Registers each token with the node's redactor. */
  secrets?: { add(value: string | undefined): void };
  /** Deadline of one token request. */
  timeoutMs?: number;
  now?: () => number;
}

/** The most a token response may be. */
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
/** How long a token without `expires_in` (nor a readable `exp`) is used before it is fetched again. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;

/**
 * @example
 * const credentials = createClientCredentials({ grant, dispatcher, secrets });
 * const headers = { ...(await credentials.headers()), 'A2A-Version': '1.0' };
 */
export function createClientCredentials(options: ClientCredentialsOptions): PeerCredentials {
  const now = options.now ?? Date.now;
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  const fetchToken = async (): Promise<string> => {
    const { token, lifetimeMs } = await requestToken(options);
    options.secrets?.add(token);
    // Renewed shortly before it expires: a tenth of its life early, at most half a minute.
    current = { token, renewAt: now() + lifetimeMs - Math.min(30_000, lifetimeMs / 10) };
    return token;
  };

  return {
    async headers() {
      let token = current && now() < current.renewAt ? current.token : undefined;
      if (!token) {
        pending ??= fetchToken().finally(() => (pending = undefined));
        token = await pending;
      }
      return { authorization: `Bearer ${token}` };
    },
    rejected(sent) {
      if (current && sent.authorization === `Bearer ${current.token}`) current = undefined;
    },
  };
}

/** One token request; throws a {@link RemoteAgentError} naming the endpoint and the error code it answered. */
async function requestToken(options: ClientCredentialsOptions): Promise<{ token: string; lifetimeMs: number }> {
  // One deadline for the answer and its body, held by its own timer (`net/deadline.ts`).
  const deadline = createDeadline(options.timeoutMs ?? 10_000);
  try {
    return await tokenExchange(options, deadline.signal);
  } finally {
    deadline.clear();
  }
}

async function tokenExchange(
  options: ClientCredentialsOptions,
  signal: AbortSignal,
): Promise<{ token: string; lifetimeMs: number }> {
  const { grant } = options;
  const where = new URL(grant.tokenUrl).origin;
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (grant.scopes.length > 0) form.set('scope', grant.scopes.join(' '));
  if (grant.audience) {
    // RFC 8707's `resource` where it is a URI, and the `audience` many issuers take instead.
    if (/^[a-z][a-z0-9+.-]*:/i.test(grant.audience)) form.set('resource', grant.audience);
    form.set('audience', grant.audience);
  }
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (grant.clientAuth === 'basic') {
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    const user = `${encodeURIComponent(grant.clientId)}:${encodeURIComponent(grant.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
  } else {
    form.set('client_id', grant.clientId);
    form.set('client_secret', grant.clientSecret);
  }
  let response: Dispatcher.ResponseData;
  try {
    response = await request(grant.tokenUrl, {
      method: 'POST',
      headers,
      body: form.toString(),
      dispatcher: options.dispatcher,
      signal,
    });
  } catch (error) {
    throw new RemoteAgentError(`OAuth token request to ${where} failed: ${describeNetworkError(error)}`);
  }
  if (response.statusCode >= 300 && response.statusCode < 400) {
    discardBody(response.body);
    throw new RemoteAgentError(`OAuth token request to ${where} failed: a redirect (not followed)`);
  }
  let body: Record<string, unknown> = {};
  try {
    const text = (await readBody(response.body, MAX_TOKEN_RESPONSE_BYTES)).toString('utf8');
    body = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof BodyTooLargeError || response.statusCode < 300)
      throw new RemoteAgentError(`OAuth token request to ${where} failed: unreadable answer (${errorMessage(error)})`);
  }
  if (response.statusCode >= 400 || typeof body.access_token !== 'string' || body.access_token === '') {
    // Only the standard error code (RFC 6749 §5.2), short: the description is the server's text.
    const code = typeof body.error === 'string' ? ` (${body.error.slice(0, 40)})` : '';
    const what = response.statusCode >= 400 ? `HTTP ${response.statusCode}${code}` : 'no access_token in the answer';
    throw new RemoteAgentError(`OAuth token request to ${where} failed: ${what}`);
  }
  const token = body.access_token;
  const expiresIn = Number(body.expires_in);
  const lifetimeMs =
    Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : (jwtLifetimeMs(token) ?? DEFAULT_LIFETIME_MS);
  return { token, lifetimeMs };
}

/** What is left of a JWT's life by its `exp`, when the token is a JWT that says. */
function jwtLifetimeMs(token: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof payload.exp === 'number' ? Math.max(0, payload.exp * 1000 - Date.now()) : undefined;
  } catch {
    return undefined;
  }
}
