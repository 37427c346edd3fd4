import { PassThrough, Readable } from 'node:stream';
import type { UnderlyingSource } from 'node:stream/web';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { AbortError } from '../errors';
import { formatIp } from './address';
import { BodyTooLargeError, decodedBody, quietBody, relayedWebStream } from './body';
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
  /** TLS material for `https:` origins: a client certificate and key (mutual TLS), and the CAs the server's certificate is checked against. */
  tls?: { cert?: string | Buffer; key?: string | Buffer; ca?: string | Buffer };
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
  const direct = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000, ...options.tls });
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
 * optionally capped. It sends with undici's `dispatch` and its own handler,
 * not undici's `fetch` or `request`: the WHATWG machinery (a `Request` and
 * its clone, a body stream per side) cost more than the rest of a streamed
 * model call, and `request` answers a Node stream whose every chunk takes a
 * push, a `'data'` event and a read-more turn on its way to the web stream
 * the caller reads. Here the bytes undici parses are enqueued straight into
 * the `Response`'s one pull-based byte stream ({@link ResponseRelay}): the
 * socket is paused while the reader (the `openai` client's SSE decoder) is
 * behind, resumed when it pulls.
 * @example
 * const fetch = createOutboundFetch({ dispatcher: createPinnedAgent({ policy }) });
 * new OpenAI({ apiKey, baseURL, fetch });
 */
export function createOutboundFetch(options: OutboundFetchOptions): typeof fetch {
  const outbound = (input: string | URL, init?: RequestInit): Promise<Response> =>
    new Promise((resolve, reject) => {
      const url = new URL(input);
      const { headers, body } = requestBody(init?.headers, init?.body);
      const relay = new ResponseRelay(url.origin, init?.signal ?? undefined, options.maxResponseBytes, resolve, reject);
      options.dispatcher.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: (init?.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod,
          headers,
          body,
        },
        relay,
      );
    });
  return outbound as typeof fetch;
}

/**
 * One outbound call's undici handler: it settles the `fetch` promise with a
 * `Response` when the headers come and then feeds that response's byte
 * stream, chunk by chunk as undici parses them, within the cap. The caller's
 * signal aborts the call (before the answer: the promise rejects with our
 * {@link AbortError}; during it: the body errors with the signal's reason,
 * as undici's own `fetch` does). Methods on a class, not closures: one
 * object per call.
 */
class ResponseRelay implements Dispatcher.DispatchHandler, UnderlyingSource<Uint8Array> {
  private controller: Dispatcher.DispatchController | undefined;
  /** The body's web stream controller, once the headers came and a body is expected. */
  private stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** The compressed body's path, when a server compressed although asked for nothing: Node streams, rare. */
  private compressed: PassThrough | undefined;
  private settled = false;
  private ended = false;
  private size = 0;

  constructor(
    private readonly origin: string,
    private readonly signal: AbortSignal | undefined,
    private readonly maxBytes: number | undefined,
    private readonly resolve: (response: Response) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    // The relay is the listener (`handleEvent`): no closure per call.
    signal?.addEventListener('abort', this, { once: true });
  }

  /** The caller's signal fired. */
  handleEvent(): void {
    this.controller?.abort(this.signal?.reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal?.aborted) controller.abort(this.signal.reason);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    received: Record<string, string | string[] | undefined>,
    statusText?: string,
  ): void {
    if (status < 200) return;
    // The controller keeps the raw header `Buffer`s for the response's life, and they are views
    // into the socket read they came in: ~1 KiB per open stream. Parsed above; let go.
    controller.rawHeaders = null;
    if (REDIRECTS.has(status)) {
      this.fail(new OutboundRefusedError(`${this.origin} answered with a redirect, refused: this endpoint needs none`));
      return;
    }
    const encoding = received['content-encoding'];
    const decoding = encoding !== undefined && String(encoding).trim().toLowerCase() !== 'identity';
    const headers = new Headers();
    for (const [name, value] of Object.entries(received)) {
      // A decoded body is no longer what these describe.
      if (value === undefined || (decoding && (name === 'content-length' || name === 'content-encoding'))) continue;
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.append(name, value);
    }
    let body: ReadableStream<Uint8Array> | null = null;
    if (NULL_BODY.has(status)) this.ended = true;
    else if (decoding) body = this.decodedStream(controller, encoding);
    else
      body = new ReadableStream<Uint8Array>(
        this,
        new ByteLengthQueuingStrategy({ highWaterMark: RESPONSE_QUEUE_BYTES }),
      );
    this.settled = true;
    this.resolve(new Response(body, { status, statusText, headers }));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.ended) return;
    if (this.compressed) {
      if (!this.compressed.write(chunk)) controller.pause();
      return;
    }
    const stream = this.stream!;
    this.size += chunk.byteLength;
    if (this.maxBytes !== undefined && this.size > this.maxBytes)
      return this.fail(new BodyTooLargeError(this.maxBytes));
    stream.enqueue(chunk);
    // Paused only past the high-water mark: a pause and resume per chunk cost more than the chunk's own handling.
    if ((stream.desiredSize ?? 1) <= 0) controller.pause();
  }

  onResponseEnd(): void {
    if (this.ended) return;
    this.ended = true;
    this.signal?.removeEventListener('abort', this);
    if (this.compressed) this.compressed.end();
    else this.stream?.close();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.signal?.removeEventListener('abort', this);
    if (!this.settled) {
      this.settled = true;
      this.ended = true;
      // undici fails with the signal's reason, a `DOMException` the caller may not
      // take for an `Error` (another realm's): an `AbortError` of ours is one everywhere.
      this.reject(this.signal?.aborted ? new AbortError('the request was aborted') : error);
      return;
    }
    if (this.ended) return;
    this.ended = true;
    if (this.compressed) this.compressed.destroy(error);
    else this.stream?.error(error);
  }

  /** The body's underlying source (the relay is one: no closures per call): its stream starts. */
  start(stream: ReadableStreamDefaultController<Uint8Array>): void {
    this.stream = stream;
  }

  /** The reader wants more: a socket paused past the high-water mark reads again. */
  pull(): void {
    this.controller?.resume();
  }

  /** The reader let the body go: the connection is dropped. */
  cancel(): void {
    this.ended = true;
    this.signal?.removeEventListener('abort', this);
    this.controller?.abort(new AbortError('the response body was cancelled'));
  }

  /** Ends the call with `error`: the promise rejects, or the body errors; the connection is dropped. */
  private fail(error: Error): void {
    if (!this.settled) {
      this.settled = true;
      this.reject(error);
    } else if (!this.ended) {
      if (this.compressed) this.compressed.destroy(error);
      else this.stream?.error(error);
    }
    this.ended = true;
    this.signal?.removeEventListener('abort', this);
    this.controller?.abort(error);
  }

  /**
   * The body of a response a server compressed anyway: the raw chunks written
   * to a Node stream, decoded, then relayed (the cap applied to the decoded
   * bytes, so a compression bomb stops at it). The socket is paused while the
   * decoder is behind.
   */
  private decodedStream(
    controller: Dispatcher.DispatchController,
    encoding: string | string[] | undefined,
  ): ReadableStream<Uint8Array> {
    const raw = new PassThrough();
    raw.on('drain', () => controller.resume());
    // Destroyed by the relay (cancel, cap) or the decoder (not valid gzip…): the connection goes too.
    raw.once('close', () => {
      if (!this.ended) this.cancel();
    });
    this.compressed = raw;
    return byteStream(decodedBody(raw, encoding), this.maxBytes);
  }
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
