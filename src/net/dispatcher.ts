import { Readable } from 'node:stream';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { AbortError } from '../errors';
import { formatIp } from './address';
import { BodyTooLargeError, decodedBody, discardBody, quietBody, relayedWebStream } from './body';
import { OutboundRefusedError, type OutboundPolicy } from './policy';

/**
 * Connections pinned to checked addresses. The undici agent built here
 * resolves every new connection's host through the policy and connects to
 * exactly the addresses the policy approved (in the resolver's order, the
 * next on a connection error), so a name cannot resolve to one address for
 * the check and another for the connection. Redirects are new requests,
 * and a new origin is a new connection: each one is checked the same way.
 */

/** Options of {@link createPinnedAgent}. */
export interface PinnedAgentOptions {
  policy: OutboundPolicy;
  /** Per-address connect deadline. */
  connectTimeoutMs?: number;
  /** Other undici agent settings (keep-alive, pipelining…). */
  agent?: Omit<Agent.Options, 'connect'>;
}

/**
 * An undici `Agent` whose every connection is checked and pinned by `policy`.
 * @example
 * const dispatcher = createPinnedAgent({ policy });
 * await request('http://peer.example/.well-known/agent-card.json', { dispatcher });
 */
export function createPinnedAgent(options: PinnedAgentOptions): Agent {
  const direct = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  const connect: buildConnector.connector = (target, callback) => {
    options.policy.resolve(target.hostname).then(
      (decision) => {
        if (!decision.ok) {
          callback(new OutboundRefusedError(`refused by the outbound address policy: ${decision.reason}`), null);
          return;
        }
        const attempt = (index: number, lastError?: Error): void => {
          const address = decision.addresses[index];
          if (!address) {
            callback(lastError ?? new OutboundRefusedError(`${target.hostname} has no usable address`), null);
            return;
          }
          // `host` (with the name) stays as it was, so TLS still checks the certificate for the name.
          direct({ ...target, hostname: formatIp(address) }, (error, socket) => {
            if (error) attempt(index + 1, error);
            else callback(null, socket);
          });
        };
        attempt(0);
      },
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({ ...options.agent, connect });
}

/** Options of {@link createOutboundFetch}. */
export interface OutboundFetchOptions {
  dispatcher: Dispatcher;
  /** Largest response body read; past it the body errors (a peer or endpoint cannot make us buffer without end). */
  maxResponseBytes?: number;
}

/** The statuses `fetch` would follow: refused here, the endpoint needs none. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses a `Response` must have no body with. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for endpoints that need no redirect (model and embeddings
 * APIs): connections through a pinned dispatcher, a redirect answered
 * with an {@link OutboundRefusedError} instead of followed, the body
 * optionally capped. It sends with undici's `request`, not its `fetch`:
 * the WHATWG machinery (a `Request` and its clone, a body stream per side,
 * a stream per response) cost more than the rest of a streamed model
 * call, and held ~10 KiB per open stream. The answer is a `Response`
 * over one pull-based byte stream: the socket is paused while the reader
 * (the `openai` client's SSE decoder) is behind.
 * @example
 * const fetch = createOutboundFetch({ dispatcher: createPinnedAgent({ policy }) });
 * new OpenAI({ apiKey, baseURL, fetch });
 */
export function createOutboundFetch(options: OutboundFetchOptions): typeof fetch {
  const outbound = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const signal = init?.signal ?? undefined;
    let answer: Dispatcher.ResponseData;
    try {
      answer = await options.dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: (init?.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod,
        ...requestBody(init?.headers, init?.body),
        signal,
      });
    } catch (error) {
      // undici rejects with the signal's reason, a `DOMException` the caller may not
      // take for an `Error` (another realm's): an `AbortError` of ours is one everywhere.
      if (signal?.aborted) throw new AbortError('the request was aborted');
      throw error;
    }
    const { statusCode: status } = answer;
    if (REDIRECTS.has(status)) {
      discardBody(answer.body);
      throw new OutboundRefusedError(`${url.origin} answered with a redirect, refused: this endpoint needs none`);
    }
    const encoding = answer.headers['content-encoding'];
    const decoding = encoding !== undefined && String(encoding).trim().toLowerCase() !== 'identity';
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      // A decoded body is no longer what these describe.
      if (value === undefined || (decoding && (name === 'content-length' || name === 'content-encoding'))) continue;
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.append(name, value);
    }
    if (NULL_BODY.has(status)) discardBody(answer.body);
    const body = NULL_BODY.has(status)
      ? null
      : byteStream(decoding ? decodedBody(answer.body, encoding) : answer.body, options.maxResponseBytes);
    return new Response(body, { status, statusText: answer.statusText, headers });
  };
  return outbound as typeof fetch;
}

/**
 * The caller's headers and body as undici's `request` takes them. A body is
 * sent as a one-read stream with its length declared (so it still goes out
 * with `Content-Length`, not chunked): undici keeps a string or buffer body
 * on its request until the answer has been read to its end — for a streamed
 * model answer, a prompt of ~15 KB held per open stream — while a stream
 * lets the bytes go once sent. Nothing here sends a body twice (redirects are
 * refused, a retry calls fetch again).
 */
function requestBody(
  headers: RequestInit['headers'],
  body: RequestInit['body'] | undefined,
): { headers: Record<string, string>; body?: Readable } {
  // The `openai` client passes a `Headers`: read as it is, not copied through another.
  const sent: Record<string, string> = Object.fromEntries(headers instanceof Headers ? headers : new Headers(headers));
  if (body === undefined || body === null) return { headers: sent };
  let bytes: Uint8Array;
  if (typeof body === 'string') bytes = Buffer.from(body, 'utf8');
  else if (body instanceof Uint8Array) bytes = body;
  else throw new TypeError('the outbound fetch sends a text or byte body only');
  sent['content-length'] = String(bytes.byteLength);
  return { headers: sent, body: sentOnce(bytes) };
}

/**
 * A stream of `bytes`, queued at once and so let go once read (not
 * `Readable.from([bytes])`: its iterator keeps the array, and so the bytes,
 * for as long as the stream object lives — undici's request keeps that until
 * the answer ends).
 */
function sentOnce(bytes: Uint8Array): Readable {
  const stream = new Readable({ read: () => undefined });
  stream.push(bytes);
  stream.push(null);
  return stream;
}

/**
 * Bytes queued in a response stream before its body is paused: a streamed
 * model answer comes in events of a few hundred bytes, each read before the
 * next arrives, so it never pauses; a reader that stops reading holds at
 * most this much here (undici and the socket hold back the rest).
 */
const RESPONSE_QUEUE_BYTES = 64 * 1024;

/**
 * One web byte stream over an undici body, erroring with
 * {@link BodyTooLargeError} past `maxBytes`: pull-based, the body paused
 * while more than {@link RESPONSE_QUEUE_BYTES} wait unread (not at every
 * chunk: a pause and resume per chunk cost more than the chunk's own
 * handling), destroyed on cancel.
 */
function byteStream(body: Readable, maxBytes: number | undefined): ReadableStream<Uint8Array> {
  quietBody(body);
  let size = 0;
  return relayedWebStream(
    body,
    (enqueue) => ({
      chunk(chunk) {
        size += chunk.byteLength;
        if (maxBytes !== undefined && size > maxBytes) throw new BodyTooLargeError(maxBytes);
        enqueue(chunk);
      },
    }),
    new ByteLengthQueuingStrategy({ highWaterMark: RESPONSE_QUEUE_BYTES }),
  );
}
