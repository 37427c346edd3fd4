import { Headers as UndiciHeaders, Response as UndiciResponse, type Dispatcher } from 'undici';
import { errorMessage, LangoError, RemoteAgentError } from '../errors';
import { BodyTooLargeError, decodedBody, discardBody, quietBody, readBody, relayedWebStream } from '../net/body';
import { describeNetworkError } from './cardFetch';
import { completeLegacyKinds, fillMissingMessageIds, wrapStringStatusMessage } from './legacyKinds';
import type { PeerCredentials } from './peerToken';

/**
 * The `fetch` the SDK client uses to talk to one peer, shared by every
 * call to it, each call's requests metered on their own. Every response
 * passes here before the SDK reads it, so this is where a peer's
 * answer is bounded (issue 11, F), where what went wrong is named (issue
 * 12: "invalid answer" is not "unreachable"), and where harmless quirks of
 * peers in the wild are tolerated with a warning (control characters
 * before SSE JSON, v0.3 results without `kind`). Redirects are never
 * followed: A2A needs none, and one could move our credentials elsewhere.
 */

/** `a2a.peerLimits`: what one delegated call may receive. */
export interface PeerLimits {
  /** Largest single response or stream event, and largest answer kept from one call. */
  maxAnswerBytes: number;
  /** Most stream events one call may receive. */
  maxEvents: number;
  /** Longest one call may last. */
  maxDurationMs: number;
}

/** Defaults of `a2a.peerLimits` (the schema holds the same values). */
export const DEFAULT_PEER_LIMITS: PeerLimits = {
  maxAnswerBytes: 1024 * 1024,
  maxEvents: 10_000,
  maxDurationMs: 120_000,
};

/** A peer's answer was unusable: not JSON, an HTTP error page, a redirect, over a cap, cut off. */
export class PeerAnswerError extends RemoteAgentError {}

/**
 * What one call's exchanges with a peer showed. The SDK's own errors do
 * not say whether the peer was reached or what it sent; this does.
 */
export class PeerCallMeter {
  /**
   * @param credentials the call's own credentials (a token exchanged for its caller, `onBehalfOf.ts`), used
   * instead of the peer's for every request of the call.
   */
  constructor(readonly credentials?: PeerCredentials) {}

  /** Response headers arrived at least once: the peer is reachable. */
  responded = false;
  /** Why the answer was unusable (first reason wins). */
  invalid?: string;
  /** The peer sent an A2A error object: alive, speaking A2A, refusing. */
  rejected?: string;
  /** Stream events received. */
  events = 0;

  /** Records an unusable answer and returns the error to throw. */
  fail(reason: string): PeerAnswerError {
    this.invalid ??= reason;
    return new PeerAnswerError(`invalid answer: ${reason}`);
  }
}

/**
 * The meters of one peer's calls in flight, each found by the call's abort
 * signal: one SDK client (and its fetch) serves every call to a pinned
 * card, and the SDK hands each request's `signal` to the fetch unchanged,
 * so the signal says which call — and so which bound — a request is part of.
 */
export class PeerCallMeters {
  private readonly bySignal = new WeakMap<AbortSignal, PeerCallMeter>();

  /** A fresh meter for the call whose requests carry `signal`, with the call's own credentials when it has some. */
  start(signal: AbortSignal, credentials?: PeerCredentials): PeerCallMeter {
    const meter = new PeerCallMeter(credentials);
    this.bySignal.set(signal, meter);
    return meter;
  }

  /** The meter of the call `signal` belongs to; undefined for a request outside every call. */
  of(signal: AbortSignal | null | undefined): PeerCallMeter | undefined {
    return signal ? this.bySignal.get(signal) : undefined;
  }
}

/** Options of {@link createPeerFetch}. */
export interface PeerFetchOptions {
  dispatcher: Dispatcher;
  limits: PeerLimits;
  /** Where each request finds its call's meter; a request without one is refused before it leaves. */
  meters: PeerCallMeters;
  /** The peer speaks v0.3: results without `kind` are completed when their shape is unambiguous. */
  legacy: boolean;
  /** Told each tolerated deviation from the spec (the caller warns once per peer and deviation). */
  onDeviation(deviation: string): void;
  /** Credentials asked for at each request (an OAuth 2 token, `peerToken.ts`); a 401 gets them renewed once. */
  credentials?: PeerCredentials;
}

const LEADING_CONTROL = /^[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufeff]+/;
const CONTROL_DEVIATION = 'control characters before the JSON of an SSE data line';
const KIND_DEVIATION = 'a v0.3 result without kind (completed from its shape)';
const STRING_STATUS_DEVIATION = 'a status message given as a plain string (wrapped in an agent message)';
const MESSAGE_ID_DEVIATION = 'a v0.3 message without messageId (one is made up)';
const ID_DEVIATION =
  "a JSON-RPC response id that is not the request's (taken as the request's: one HTTP exchange, one request)";

/**
 * Builds the bounded, fault-naming `fetch` for one peer's client. It sends
 * with undici's `request` rather than its `fetch`: the WHATWG machinery
 * (request objects, a body stream, a stream per response) cost more than
 * the rest of a delegated call on loopback, and nothing here needs it.
 * @example
 * const meters = new PeerCallMeters();
 * const fetchImpl = createPeerFetch({ dispatcher, limits, meters, legacy: false, onDeviation: warnOnce });
 * const meter = meters.start(signal); // then every request of the call passes `signal`
 */
export function createPeerFetch(options: PeerFetchOptions): typeof fetch {
  const peerFetch = async (input: string | URL, init?: RequestInit): Promise<UndiciResponse> => {
    const meter = options.meters.of(init?.signal);
    if (!meter) throw new RemoteAgentError('a request to a peer outside a delegated call');
    const body = init?.body ?? undefined;
    if (body !== undefined && typeof body !== 'string')
      throw new RemoteAgentError('a request body to a peer must be JSON text');
    const requestId = jsonRpcRequestId(body);
    const url = new URL(input);
    const response = await send(options, meter, {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (init?.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: requestHeaders(init?.headers),
      body,
      signal: init?.signal ?? undefined,
    });
    const headers = new UndiciHeaders();
    for (const [name, value] of Object.entries(response.headers)) {
      // The body handed on is decoded and may be rewritten: these no longer describe it.
      if (value === undefined || name === 'content-length' || name === 'content-encoding') continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const init2 = { status: response.statusCode, statusText: response.statusText, headers };
    if (isEventStream(response)) {
      return new UndiciResponse(sseBody(response, options, meter, requestId), init2);
    }
    const answer = await readAnswer(response, options, meter, requestId, init?.signal ?? undefined);
    return new UndiciResponse(answer.changed ? JSON.stringify(answer.json) : answer.text, init2);
  };
  return peerFetch as unknown as typeof fetch;
}

/**
 * One JSON-RPC exchange with a peer outside the SDK client (the lean
 * v1.0 client, jsonRpcPeer.ts), through the same checks as
 * {@link createPeerFetch}: the call's meter and bounds, the pinned
 * dispatcher, redirects refused, every answer and stream event checked.
 */
export interface PeerExchange {
  /** Sends `request` (a JSON-RPC request object) and returns the checked JSON answer. */
  call(url: URL, request: JsonRpcRequest, headers: Record<string, string>, signal: AbortSignal): Promise<unknown>;
  /**
   * Sends `request` asking for a stream and yields each checked event's JSON;
   * a peer that refuses with an A2A error in plain JSON yields that one body.
   */
  stream(
    url: URL,
    request: JsonRpcRequest,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): AsyncGenerator<unknown, void, undefined>;
}

/** A JSON-RPC 2.0 request as it goes out. */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params: unknown;
}

/** Builds the {@link PeerExchange} of one peer (its options as for {@link createPeerFetch}). */
export function createPeerExchange(options: PeerFetchOptions): PeerExchange {
  const open = async (
    url: URL,
    request: JsonRpcRequest,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<{ meter: PeerCallMeter; response: Dispatcher.ResponseData }> => {
    const meter = options.meters.of(signal);
    if (!meter) throw new RemoteAgentError('a request to a peer outside a delegated call');
    const response = await send(options, meter, {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      body: JSON.stringify(request),
      signal,
    });
    return { meter, response };
  };
  return {
    async call(url, request, headers, signal) {
      const { meter, response } = await open(url, request, headers, signal);
      if (isEventStream(response)) {
        discardBody(response.body);
        throw meter.fail('an event stream where one JSON answer was asked for');
      }
      return (await readAnswer(response, options, meter, request.id, signal)).json;
    },
    async *stream(url, request, headers, signal) {
      const { meter, response } = await open(url, request, headers, signal);
      if (!isEventStream(response)) {
        const answer = await readAnswer(response, options, meter, request.id, signal);
        if (!a2aError(answer.json)) throw meter.fail('a JSON answer where an event stream was asked for');
        yield answer.json;
        return;
      }
      const guard = new SseGuard(options, meter, request.id);
      const events: unknown[] = [];
      const collect = (event: SseEvent) => {
        if (event.data !== undefined) events.push(event.data);
      };
      // Quiet: a body destroyed below emits the reason as an error that nothing else listens for.
      const body = quietBody(decodedBody(response.body, response.headers['content-encoding']));
      try {
        // Destroyed below, without the AbortError (and its stack) a returning `for await` makes when a
        // caller stops at the answer before the peer's stream has ended.
        for await (const chunk of body.iterator({ destroyOnReturn: false })) {
          guard.push(chunk as Buffer, collect);
          for (const event of events.splice(0)) yield event;
        }
        guard.end(collect);
        for (const event of events.splice(0)) yield event;
      } finally {
        if (!body.readableEnded) body.destroy(READER_DONE);
      }
    },
  };
}

/**
 * Why a stream body is dropped when its reader has what it needed (an
 * answer, then the peer's end still in flight): one instance, so no call
 * pays for an error's stack (undici makes one per body destroyed without a reason).
 */
const READER_DONE = new RemoteAgentError('the reader stopped before the peer ended its stream');

/**
 * Sends one request through the pinned dispatcher, with the call's
 * credentials, else the peer's, when there are some (a peer answering 401
 * gets the request once more with renewed ones: the body is text, so it can
 * go again); a redirect is refused, never followed.
 */
async function send(
  options: PeerFetchOptions,
  meter: PeerCallMeter,
  request: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  const credentials = meter.credentials ?? options.credentials;
  const withCredentials = async () => {
    const sent = await credentials!.headers();
    return { sent, request: { ...request, headers: { ...(request.headers as Record<string, string>), ...sent } } };
  };
  let response: Dispatcher.ResponseData;
  if (!credentials) response = await options.dispatcher.request(request);
  else {
    const first = await withCredentials();
    response = await options.dispatcher.request(first.request);
    if (response.statusCode === 401) {
      discardBody(response.body);
      credentials.rejected(first.sent);
      response = await options.dispatcher.request((await withCredentials()).request);
    }
  }
  meter.responded = true;
  const status = response.statusCode;
  if (status >= 300 && status < 400) {
    discardBody(response.body);
    throw meter.fail(`redirect (HTTP ${status}) not followed`);
  }
  return response;
}

function isEventStream(response: Dispatcher.ResponseData): boolean {
  const status = response.statusCode;
  const type = response.headers['content-type'];
  return status >= 200 && status < 300 && /^text\/event-stream/i.test(String(type ?? ''));
}

/**
 * Reads a JSON answer within `maxAnswerBytes`: an A2A error is recorded as
 * the peer's rejection, anything else that is not a 2xx JSON answer is an
 * invalid answer. `changed` says a tolerated deviation was repaired in `json`.
 */
async function readAnswer(
  response: Dispatcher.ResponseData,
  options: PeerFetchOptions,
  meter: PeerCallMeter,
  requestId: JsonRpcId | undefined,
  signal: AbortSignal | undefined,
): Promise<{ json: unknown; text: string; changed: boolean }> {
  const { limits } = options;
  const status = response.statusCode;
  const ok = status >= 200 && status < 300;
  let text: string;
  try {
    text = (await readBody(response.body, limits.maxAnswerBytes, response.headers['content-encoding'])).toString(
      'utf8',
    );
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw meter.fail(`larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
    if (signal?.aborted) throw error;
    if (error instanceof LangoError) throw meter.fail(errorMessage(error));
    throw meter.fail(`cut off: ${describeNetworkError(error)}`);
  }
  const json = parseJson(text);
  if (json === undefined) {
    throw meter.fail(ok ? `not JSON (${preview(text)})` : `HTTP ${status} (${preview(text)})`);
  }
  const rejection = a2aError(json);
  if (rejection) meter.rejected ??= rejection;
  else if (!ok) throw meter.fail(`HTTP ${status} without an A2A error`);
  return { json, text, changed: tolerate(json, requestId, rejection, options) };
}

/** The SDK's headers (a plain object) as undici's `request` takes them. */
function requestHeaders(headers: RequestInit['headers']): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(new Headers(headers));
  return headers as Record<string, string>;
}

/**
 * The web stream the SDK reads a server-sent event stream from: the
 * peer's bytes checked by {@link SseGuard} as they arrive, with the
 * socket paused while the reader is behind.
 */
function sseBody(
  response: Dispatcher.ResponseData,
  options: PeerFetchOptions,
  meter: PeerCallMeter,
  requestId: JsonRpcId | undefined,
): ReadableStream<Uint8Array> {
  const guard = new SseGuard(options, meter, requestId);
  const body = quietBody(decodedBody(response.body, response.headers['content-encoding']));
  const encoder = new TextEncoder();
  return relayedWebStream(body, (enqueue) => {
    const enqueueEvent = (event: SseEvent) => {
      const lines =
        event.data === undefined || !event.changed
          ? event.lines
          : [...event.lines.filter((l) => !l.startsWith('data: ')), `data: ${JSON.stringify(event.data)}`];
      enqueue(encoder.encode(`${lines.join('\n')}\n\n`));
    };
    return { chunk: (chunk) => guard.push(chunk, enqueueEvent), end: () => guard.end(enqueueEvent) };
  });
}

/** One checked server-sent event: its lines, and the JSON of its data (repaired when `changed`). */
interface SseEvent {
  lines: string[];
  data?: unknown;
  changed: boolean;
}

/**
 * Checks a server-sent event stream as it passes: line and event size,
 * event count, JSON in every data event; strips control characters a few
 * servers put before the JSON; completes v0.3 kinds. Throws a
 * {@link PeerAnswerError} past a cap, which errors the SDK's read.
 */
class SseGuard {
  private readonly decoder = new TextDecoder();
  private pending = '';
  private lines: string[] = [];
  private eventSize = 0;

  constructor(
    private readonly options: PeerFetchOptions,
    private readonly meter: PeerCallMeter,
    private readonly requestId: JsonRpcId | undefined,
  ) {}

  push(chunk: Uint8Array, enqueue: (event: SseEvent) => void): void {
    const { limits } = this.options;
    this.pending += this.decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      if (line === '' || line === '\r') this.endEvent(enqueue);
      else this.addLine(line);
    }
    if (this.pending.length > limits.maxAnswerBytes)
      throw this.meter.fail(`a stream line larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
  }

  end(enqueue: (event: SseEvent) => void): void {
    this.pending += this.decoder.decode();
    if (this.pending) this.addLine(this.pending);
    this.endEvent(enqueue);
  }

  private addLine(raw: string): void {
    const { limits } = this.options;
    let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('data:')) {
      const value = line.slice(5).replace(/^ /, '');
      const stripped = value.replace(LEADING_CONTROL, '');
      if (stripped !== value) this.options.onDeviation(CONTROL_DEVIATION);
      line = `data: ${stripped}`;
    }
    this.lines.push(line);
    this.eventSize += line.length;
    if (this.eventSize > limits.maxAnswerBytes)
      throw this.meter.fail(
        `a stream event larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`,
      );
  }

  private endEvent(enqueue: (event: SseEvent) => void): void {
    const { limits } = this.options;
    const { meter } = this;
    const event = this.lines;
    this.lines = [];
    this.eventSize = 0;
    if (event.length === 0) return;
    const data = event.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    if (data.length === 0) return enqueue({ lines: event, changed: false });
    meter.events += 1;
    if (meter.events > limits.maxEvents)
      throw meter.fail(`more than a2a.peerLimits.maxEvents (${limits.maxEvents}) stream events`);
    const json = parseJson(data.join('\n'));
    if (json === undefined) throw meter.fail(`a stream event is not JSON (${preview(data.join('\n'))})`);
    const rejection = a2aError(json);
    if (rejection) meter.rejected ??= rejection;
    enqueue({ lines: event, data: json, changed: tolerate(json, this.requestId, rejection, this.options) });
  }
}

export type JsonRpcId = string | number;

/**
 * Repairs what peers in the wild get harmlessly wrong in one JSON-RPC
 * body (a response, or one stream event), in place, telling each
 * deviation; true when the body changed. An A2A error is left as sent.
 */
function tolerate(
  json: unknown,
  requestId: JsonRpcId | undefined,
  rejection: string | undefined,
  options: PeerFetchOptions,
): boolean {
  let changed = pairResponseId(json, requestId, options);
  if (options.legacy && !rejection) {
    if (wrapStringStatusMessage(json)) {
      options.onDeviation(STRING_STATUS_DEVIATION);
      changed = true;
    }
    if (fillMissingMessageIds(json)) {
      options.onDeviation(MESSAGE_ID_DEVIATION);
      changed = true;
    }
    if (completeLegacyKinds(json)) {
      options.onDeviation(KIND_DEVIATION);
      changed = true;
    }
  }
  return changed;
}

/** The id of the JSON-RPC request a body carries; undefined for other bodies (HTTP+JSON, GETs). */
function jsonRpcRequestId(body: RequestInit['body'] | undefined): JsonRpcId | undefined {
  if (typeof body !== 'string') return undefined;
  const json = parseJson(body);
  if (!json || typeof json !== 'object' || (json as { jsonrpc?: unknown }).jsonrpc !== '2.0') return undefined;
  const id = (json as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * Gives a JSON-RPC response the id of the request it answers when the peer
 * sent another (some servers answer `id: null`, or a constant). A2A sends
 * one request per HTTP exchange, so the exchange already pairs them; the
 * SDK's reader would refuse the answer. An error object with `id: null` is
 * what JSON-RPC prescribes when the server could not read the id, so only
 * a result (or a non-null wrong id) counts as a deviation.
 */
function pairResponseId(json: unknown, requestId: JsonRpcId | undefined, options: PeerFetchOptions): boolean {
  if (requestId === undefined || !json || typeof json !== 'object' || Array.isArray(json)) return false;
  const response = json as { jsonrpc?: unknown; id?: unknown; error?: unknown };
  if (response.jsonrpc !== '2.0' || response.id === requestId) return false;
  if (!(response.id === null && response.error)) options.onDeviation(ID_DEVIATION);
  response.id = requestId;
  return true;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The message of an A2A error object (JSON-RPC `error`, or the HTTP+JSON binding's `error`), if the body is one. */
function a2aError(json: unknown): string | undefined {
  if (!json || typeof json !== 'object') return undefined;
  const error = (json as { error?: unknown }).error;
  if (!error || typeof error !== 'object') return undefined;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' ? message.slice(0, 200) : 'an error without a message';
}

/** The start of an unusable body, flattened and short: enough to recognise an HTML page, too little to carry much. */
function preview(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (!flat) return 'empty';
  return `starts "${flat.slice(0, 40)}${flat.length > 40 ? '…' : ''}"`;
}
