import { fetch as undiciFetch, Headers as UndiciHeaders, Response as UndiciResponse, type Dispatcher } from 'undici';
import { RemoteAgentError } from '../errors';
import { BodyTooLargeError, readWebBody } from '../net/body';
import { describeNetworkError } from './cardFetch';
import { completeLegacyKinds, fillMissingMessageIds, wrapStringStatusMessage } from './legacyKinds';

/**
 * The `fetch` the SDK client uses to talk to one peer for one call. Every
 * response passes here before the SDK reads it, so this is where a peer's
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

/** Options of {@link createPeerFetch}. */
export interface PeerFetchOptions {
  dispatcher: Dispatcher;
  limits: PeerLimits;
  meter: PeerCallMeter;
  /** The peer speaks v0.3: results without `kind` are completed when their shape is unambiguous. */
  legacy: boolean;
  /** Told each tolerated deviation from the spec (the caller warns once per peer and deviation). */
  onDeviation(deviation: string): void;
}

const LEADING_CONTROL = /^[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufeff]+/;
const CONTROL_DEVIATION = 'control characters before the JSON of an SSE data line';
const KIND_DEVIATION = 'a v0.3 result without kind (completed from its shape)';
const STRING_STATUS_DEVIATION = 'a status message given as a plain string (wrapped in an agent message)';
const MESSAGE_ID_DEVIATION = 'a v0.3 message without messageId (one is made up)';
const ID_DEVIATION =
  "a JSON-RPC response id that is not the request's (taken as the request's: one HTTP exchange, one request)";

/**
 * Builds the bounded, fault-naming `fetch` for one call.
 * @example
 * const meter = new PeerCallMeter();
 * const fetchImpl = createPeerFetch({ dispatcher, limits, meter, legacy: false, onDeviation: warnOnce });
 */
export function createPeerFetch(options: PeerFetchOptions): typeof fetch {
  const { meter, limits } = options;
  const peerFetch = async (input: string | URL, init?: RequestInit): Promise<UndiciResponse> => {
    const requestId = jsonRpcRequestId(init?.body);
    const response = await undiciFetch(input, {
      ...(init as object),
      redirect: 'manual',
      dispatcher: options.dispatcher,
    });
    meter.responded = true;
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw meter.fail(`redirect (HTTP ${response.status}) not followed`);
    }
    const headers = new UndiciHeaders(response.headers);
    // The body handed on is decoded and may be rewritten: these no longer describe it.
    headers.delete('content-length');
    headers.delete('content-encoding');
    const init2 = { status: response.status, statusText: response.statusText, headers };
    if (response.ok && response.body && /^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
      return new UndiciResponse(response.body.pipeThrough(sseGuard(options, requestId)), init2);
    }
    let text: string;
    try {
      text = await readWebBody(response.body, limits.maxAnswerBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        throw meter.fail(`larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
      if (init?.signal?.aborted) throw error;
      throw meter.fail(`cut off: ${describeNetworkError(error)}`);
    }
    const json = parseJson(text);
    if (json === undefined) {
      throw meter.fail(response.ok ? `not JSON (${preview(text)})` : `HTTP ${response.status} (${preview(text)})`);
    }
    const rejection = a2aError(json);
    if (rejection) meter.rejected ??= rejection;
    else if (!response.ok) throw meter.fail(`HTTP ${response.status} without an A2A error`);
    const body = tolerate(json, requestId, rejection, options) ? JSON.stringify(json) : text;
    return new UndiciResponse(body, init2);
  };
  return peerFetch as unknown as typeof fetch;
}

/**
 * Checks a server-sent event stream as it passes: line and event size,
 * event count, JSON in every data event; strips control characters a few
 * servers put before the JSON; completes v0.3 kinds. Errors the stream
 * (and so the SDK's read) with a {@link PeerAnswerError} past a cap.
 */
function sseGuard(
  options: PeerFetchOptions,
  requestId: JsonRpcId | undefined,
): TransformStream<Uint8Array, Uint8Array> {
  const { meter, limits } = options;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  let lines: string[] = [];
  let eventSize = 0;

  const addLine = (raw: string) => {
    let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('data:')) {
      const value = line.slice(5).replace(/^ /, '');
      const stripped = value.replace(LEADING_CONTROL, '');
      if (stripped !== value) options.onDeviation(CONTROL_DEVIATION);
      line = `data: ${stripped}`;
    }
    lines.push(line);
    eventSize += line.length;
    if (eventSize > limits.maxAnswerBytes)
      throw meter.fail(`a stream event larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
  };

  const endEvent = (controller: TransformStreamDefaultController<Uint8Array>) => {
    const event = lines;
    lines = [];
    eventSize = 0;
    if (event.length === 0) return;
    const data = event.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    let out = event;
    if (data.length > 0) {
      meter.events += 1;
      if (meter.events > limits.maxEvents)
        throw meter.fail(`more than a2a.peerLimits.maxEvents (${limits.maxEvents}) stream events`);
      const json = parseJson(data.join('\n'));
      if (json === undefined) throw meter.fail(`a stream event is not JSON (${preview(data.join('\n'))})`);
      const rejection = a2aError(json);
      if (rejection) meter.rejected ??= rejection;
      if (tolerate(json, requestId, rejection, options)) {
        out = [...event.filter((l) => !l.startsWith('data: ')), `data: ${JSON.stringify(json)}`];
      }
    }
    controller.enqueue(encoder.encode(`${out.join('\n')}\n\n`));
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line === '' || line === '\r') endEvent(controller);
        else addLine(line);
      }
      if (pending.length > limits.maxAnswerBytes)
        throw meter.fail(`a stream line larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
    },
    flush(controller) {
      pending += decoder.decode();
      if (pending) addLine(pending);
      endEvent(controller);
    },
  });
}

type JsonRpcId = string | number;

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
