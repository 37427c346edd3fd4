import { request, type Dispatcher } from 'undici';
import { errorMessage, LangoError, RemoteAgentError } from '../errors';
import { BodyTooLargeError, discardBody, readBody } from '../net/body';
import { createDeadline } from '../net/deadline';
import { OutboundRefusedError } from '../net/policy';

/**
 * Fetches a peer's agent card (or a pinned JWKS) over HTTP with undici: one
 * deadline covering connect, headers and body, a byte cap enforced while the
 * body streams and again after decoding (a peer cannot make us buffer a
 * gigabyte, chunked or compressed), no redirects (a redirect could move the
 * card to another origin), connections through the federation's pinned
 * dispatcher (the outbound address policy). Failures are
 * {@link RemoteAgentError}s whose message names what went wrong.
 */

/** Options for {@link fetchJson}. */
export interface FetchJsonOptions {
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  dispatcher?: Dispatcher;
  /** Aborts the fetch early (federation closing). */
  signal?: AbortSignal;
}

/** What a successful fetch returned, with how long it took. */
export interface FetchedJson {
  body: unknown;
  latencyMs: number;
}

/**
 * GETs `url` and parses the body as JSON within `timeoutMs` and `maxBytes`.
 * @example
 * const { body } = await fetchJson('http://127.0.0.1:4000/.well-known/agent-card.json', { timeoutMs: 5000, maxBytes: 262144 });
 */
export async function fetchJson(url: string, options: FetchJsonOptions): Promise<FetchedJson> {
  const started = Date.now();
  // Held by its own timer (`net/deadline.ts`): the caller's signal alongside cannot let it be collected unfired.
  const deadline = createDeadline(options.timeoutMs, options.signal);
  const signal = deadline.signal;
  try {
    const response = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'accept-encoding': 'identity', ...options.headers },
      signal,
      dispatcher: options.dispatcher,
    });
    if (response.statusCode >= 300) {
      // Not read, but never left unheard: an undici body destroyed early emits 'error' (issue 11, item 1).
      discardBody(response.body);
      const what = response.statusCode < 400 ? 'a redirect (not followed)' : 'an error';
      throw new RemoteAgentError(`HTTP ${response.statusCode}: the server answered with ${what}`);
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      discardBody(response.body);
      throw new RemoteAgentError(`body too large: ${declared} bytes declared, limit ${options.maxBytes}`);
    }
    let bytes: Buffer;
    try {
      bytes = await readBody(response.body, options.maxBytes, response.headers['content-encoding']);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        const decoded = error.message.startsWith('decoded') ? ' once decoded' : '';
        throw new RemoteAgentError(`body too large: more than ${options.maxBytes} bytes${decoded}`);
      }
      if (error instanceof LangoError) throw new RemoteAgentError(`body unreadable: ${error.message}`);
      if (signal.aborted) throw error;
      // The server answered, then broke off: not "unreachable" (issue 12 names faults by what happened).
      throw new RemoteAgentError(`body cut off: ${describeNetworkError(error)}`, { cause: error });
    }
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new RemoteAgentError('body is not valid JSON');
    }
    return { body, latencyMs: Date.now() - started };
  } catch (error) {
    if (error instanceof RemoteAgentError) throw error;
    if (signal.aborted && !options.signal?.aborted)
      throw new RemoteAgentError(`timed out after ${options.timeoutMs} ms`, { cause: error });
    if (options.signal?.aborted) throw new RemoteAgentError('aborted', { cause: error });
    if (error instanceof OutboundRefusedError) throw new RemoteAgentError(error.message, { cause: error });
    throw new RemoteAgentError(`unreachable: ${describeNetworkError(error)}`, { cause: error });
  } finally {
    deadline.clear();
  }
}

/** A short, secret-free description of a network error (`ECONNREFUSED`, `socket hang up`, …). */
export function describeNetworkError(error: unknown): string {
  const cause = error && typeof error === 'object' ? (error as { cause?: unknown }).cause : undefined;
  const code = (error as { code?: unknown } | null)?.code ?? (cause as { code?: unknown } | undefined)?.code;
  const message = cause && typeof cause === 'object' && 'message' in cause ? errorMessage(cause) : errorMessage(error);
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}
