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

/** How the node authenticates itself to a token endpoint (RFC 6749 §2.3.1), its secret resolved. */
export interface TokenClient {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  clientAuth: 'basic' | 'post';
}

/** An entry's `auth` of type `oauth2`, its secret resolved. */
export interface ClientCredentialsGrant extends TokenClient {
  scopes: string[];
  audience?: string;
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
    const { token, lifetimeMs } = await requestClientCredentials(options);
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

/** One client-credentials token request. */
function requestClientCredentials(options: ClientCredentialsOptions): Promise<{ token: string; lifetimeMs: number }> {
  const { grant } = options;
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (grant.scopes.length > 0) form.set('scope', grant.scopes.join(' '));
  if (grant.audience) setAudience(form, grant.audience);
  return requestToken(grant, form, { ...options, what: 'OAuth token request' });
}

/** Names the API a token is for: RFC 8707's `resource` where it is a URI, and the `audience` many issuers take instead. */
export function setAudience(form: URLSearchParams, audience: string): void {
  if (/^[a-z][a-z0-9+.-]*:/i.test(audience)) form.set('resource', audience);
  form.set('audience', audience);
}

/**
 * One request to a token endpoint with `form`, the client authenticated as
 * it is configured, through `dispatcher` (the address policy), within
 * `timeoutMs`; the answer read within a bound. Throws a
 * {@link RemoteAgentError} saying `what` failed at the endpoint's origin and
 * why: unreachable, a redirect, an unreadable answer, or the standard error
 * code it answered (never its description, nor any token).
 */
export async function requestToken(
  client: TokenClient,
  form: URLSearchParams,
  options: { dispatcher: Dispatcher; timeoutMs?: number; what: string },
): Promise<{ token: string; lifetimeMs: number }> {
  // One deadline for the answer and its body, held by its own timer (`net/deadline.ts`).
  const deadline = createDeadline(options.timeoutMs ?? 10_000);
  try {
    return await postToken(client, form, options, deadline.signal);
  } finally {
    deadline.clear();
  }
}

async function postToken(
  client: TokenClient,
  form: URLSearchParams,
  options: { dispatcher: Dispatcher; what: string },
  signal: AbortSignal,
): Promise<{ token: string; lifetimeMs: number }> {
  const failed = `${options.what} to ${new URL(client.tokenUrl).origin} failed`;
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.clientAuth === 'basic') {
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    const user = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
  } else {
    form.set('client_id', client.clientId);
    form.set('client_secret', client.clientSecret);
  }
  let response: Dispatcher.ResponseData;
  try {
    response = await request(client.tokenUrl, {
      method: 'POST',
      headers,
      body: form.toString(),
      dispatcher: options.dispatcher,
      signal,
    });
  } catch (error) {
    throw new RemoteAgentError(`${failed}: ${describeNetworkError(error)}`);
  }
  if (response.statusCode >= 300 && response.statusCode < 400) {
    discardBody(response.body);
    throw new RemoteAgentError(`${failed}: a redirect (not followed)`);
  }
  let body: Record<string, unknown> = {};
  try {
    const text = (await readBody(response.body, MAX_TOKEN_RESPONSE_BYTES)).toString('utf8');
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    else if (response.statusCode < 300) throw new Error('not a JSON object');
  } catch (error) {
    if (error instanceof BodyTooLargeError || response.statusCode < 300)
      throw new RemoteAgentError(`${failed}: unreadable answer (${errorMessage(error)})`);
  }
  if (response.statusCode >= 400 || typeof body.access_token !== 'string' || body.access_token === '') {
    // Only the standard error code (RFC 6749 §5.2), short: the description is the server's text.
    const code = typeof body.error === 'string' ? ` (${body.error.slice(0, 40).replace(/[^\w.-]/g, '')})` : '';
    const what = response.statusCode >= 400 ? `HTTP ${response.statusCode}${code}` : 'no access_token in the answer';
    throw new RemoteAgentError(`${failed}: ${what}`);
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
