import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  A2A_VERSION_HEADER,
  Extensions,
  HTTP_EXTENSION_HEADER,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
} from '@a2a-js/sdk';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  validateVersion,
  type A2ARequestHandler,
  type ServerCallContext,
  type User,
} from '@a2a-js/sdk/server';
import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { errorAnswer, errorBody } from './errors';
import type { HostGuard } from './hostGuard';
import { runIntercepts, type InterceptedRequest, type RequestIntercept } from './intercept';
import { sseEventId } from './generation';
import { envelopeRefusal } from './jsonRpcEnvelope';

/** Options of {@link jsonRpcRoute}. */
export interface JsonRpcRouteOptions {
  requestHandler: A2ARequestHandler;
  /** The node's host and origin check (`hostGuard.ts`), when it has one: a refused request is left to express. */
  hostGuard?: HostGuard;
  /**
   * Who the caller is (`auth.ts` `Authenticator`); undefined leaves the request to express, which refuses it (401),
   * and so does a pending validation (a token not seen before), which express awaits.
   */
  authenticate: (req: IncomingMessage) => User | undefined | Promise<User | undefined>;
  /** Run before the body is read, as express runs them before every route (request metrics and spans). */
  intercepts: readonly RequestIntercept[];
  /** `a2a.maxBodyBytes`: a declared length over it is left to express (413); a streamed body over it is refused here. */
  maxBodyBytes: number;
  /** `a2a.legacyCompat`: a request without `A2A-Version` (or with 0.3) is v0.3 and left to the SDK's adapter. */
  legacyCompat: boolean;
  logger: Logger;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};
const LEGACY_VERSION = '0.3';
const INTERNAL_ERROR = -32603;

/** A request listener's front: answers what it takes and says so; `false` leaves the request untouched. */
export type FrontHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * `POST /` for a v1.0 JSON-RPC request with a plain UTF-8 JSON body, answered
 * before express sees it: the host guard, the declared body limit and the
 * caller's credential are checked as express's layers check them, the
 * interceptors (metrics, the request's span) run once, then it reads and
 * parses the body, checks the envelope (`jsonRpcEnvelope.ts`) and calls the
 * SDK's `JsonRpcTransportHandler` as the SDK's express `jsonRpcHandler` does —
 * without express's router and middleware, body-parser, the SDK's nested router
 * and `res.json`. A stream (`SendStreamingMessage`, `SubscribeToTask`) is
 * opened on the request handler directly and its events written as the SDK's
 * frames, one string each, as fast as the caller reads them. It returns
 * `false` without touching the request for anything else — another method
 * or path, v0.3, other content types or encodings, a body
 * without a length or chunking — and for every request express's layers refuse
 * (host, declared size, credential), so express answers those exactly as before.
 * A streamed body over the limit and malformed JSON are answered here as
 * express's error handler answers them (`errors.ts` `errorAnswer`).
 * @example
 * const front = jsonRpcRoute({ requestHandler, authenticate, intercepts: [], maxBodyBytes, legacyCompat: true, logger });
 * http.createServer((req, res) => front(req, res) || app(req, res));
 */
export function jsonRpcRoute(options: JsonRpcRouteOptions): FrontHandler {
  const { requestHandler, hostGuard, authenticate, intercepts, maxBodyBytes, legacyCompat, logger } = options;
  const transport = new JsonRpcTransportHandler(requestHandler);
  const versionHeader = A2A_VERSION_HEADER.toLowerCase();
  const extensionHeader = HTTP_EXTENSION_HEADER.toLowerCase();

  const answer = async (req: IncomingMessage, res: ServerResponse, body: unknown, user: User): Promise<void> => {
    const refusal = envelopeRefusal(body);
    if (refusal) {
      sendJson(res, 200, refusal);
      return;
    }
    const requestId = (body as { id?: string | number | null }).id ?? null;
    try {
      const requestedVersion = headerValue(req, versionHeader);
      const context = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(headerValue(req, extensionHeader)),
        user,
        headers: req.headers,
        requestedVersion,
      });
      validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'JSONRPC');
      const result = isStreamRequest(body)
        ? openStream(body, context)
        : await transport.handle(body as Record<string, unknown>, context);
      if (isAsyncIterable(result)) await stream(res, result, requestId, context);
      else {
        if (context.activatedExtensions) res.setHeader(HTTP_EXTENSION_HEADER, Array.from(context.activatedExtensions));
        sendJson(res, 200, result);
      }
    } catch (err) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      if (error.code === INTERNAL_ERROR) logger.warn('JSON-RPC request failed', { error: errorMessage(err) });
      if (!res.headersSent)
        sendJson(res, error.code === INTERNAL_ERROR ? 500 : 200, { jsonrpc: '2.0', id: requestId, error });
      else if (!res.writableEnded) res.end();
    }
  };

  // A stream request the SDK's transport would take (`isStreamRequest`), opened as its `handle` opens it —
  // the tenant, the params read with the SDK's `fromJSON`, the handler's method — without the transport's
  // generator around it, whose per-event layer (a promise and a suspended frame per event) and wrapper
  // object `stream` replaces with one string per event. A refusal is a JSON-RPC answer, as `handle` gives.
  const openStream = (
    request: StreamRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse> | Record<string, unknown> => {
    const id = request.id ?? null;
    try {
      if (request.params.tenant) context.setTenant(request.params.tenant as string);
      return request.method === 'SendStreamingMessage'
        ? requestHandler.sendMessageStream(SendMessageRequest.fromJSON(request.params), context)
        : requestHandler.resubscribe(SubscribeToTaskRequest.fromJSON(request.params), context);
    } catch (err) {
      return { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(err) };
    }
  };

  // Events as the SDK's handler writes them, byte for byte: the first event is awaited before the SSE
  // headers, so an error before any event is a plain JSON-RPC answer; each frame is the SDK's
  // `{"jsonrpc","id","result"}` with the event's ProtoJSON (`StreamResponse.toJSON`), encoded once.
  // The next event is read only once the socket took the last one: a slow reader holds the events in
  // the live task's queue (the task's own length), not in the socket's buffer. A caller that leaves
  // ends the subscription at once, not at the task's next event.
  const stream = async (
    res: ServerResponse,
    events: AsyncGenerator<StreamResponse>,
    requestId: unknown,
    context: ServerCallContext,
  ): Promise<void> => {
    let event: IteratorResult<StreamResponse>;
    try {
      event = await events.next();
    } catch (err) {
      sendJson(res, 200, { jsonrpc: '2.0', id: requestId, error: JsonRpcTransportHandler.mapToJSONRPCError(err) });
      return;
    }
    // Extensions are activated as the stream opens (its first read): the header goes out with the first frame.
    if (context.activatedExtensions) res.setHeader(HTTP_EXTENSION_HEADER, Array.from(context.activatedExtensions));
    // The headers go out with the first frame, in one write (the SDK's handler flushes them alone first).
    res.writeHead(200, SSE_HEADERS);
    const framePrefix = `data: {"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":`;
    let left = false;
    const onClose = () => {
      left = true;
      // A throw in the stream's cleanup is logged: a caller leaving must not end the process.
      events.return(undefined).catch((err: unknown) => {
        logger.warn('JSON-RPC stream cleanup failed', { error: errorMessage(err) });
      });
    };
    res.once('close', onClose);
    try {
      while (!event.done && !left) {
        // An event carrying its generation (the generation extension, activated) is resumable from its `id`.
        const id = sseEventId(event.value);
        const frame = `${framePrefix}${JSON.stringify(StreamResponse.toJSON(event.value))}}\n\n`;
        if (!res.write(id === undefined ? frame : `id: ${id}\n${frame}`)) await drained(res);
        if (left) break;
        event = await events.next();
      }
    } catch (err) {
      logger.warn('JSON-RPC stream failed', { error: errorMessage(err) });
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      if (!res.writableEnded)
        res.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: requestId, error })}\n\n`);
    } finally {
      res.off('close', onClose);
      if (!res.writableEnded) res.end();
    }
  };

  // What express's error handler (`errors.ts` `jsonErrors`) would answer for `err`.
  const fail = (res: ServerResponse, err: unknown): void => {
    if (res.headersSent) {
      res.end();
      return;
    }
    const { status, code, message, close } = errorAnswer(err, 'POST', '/', logger);
    if (close) res.setHeader('Connection', 'close');
    sendJson(res, status, errorBody('POST', '/', status, code, message));
  };

  const readAndAnswer = (req: InterceptedRequest, res: ServerResponse, user: User): void => {
    // Run in this request's async context, as body-parser binds its own: the body's events come from
    // the socket's context, and the request's trace span (OpenTelemetry's context) must reach the turn.
    // `runInAsyncScope` rather than `AsyncResource.bind`, whose bound function carries two deprecation
    // wrappers made per call (~2% of a greeting's CPU).
    const scope = new AsyncResource('lango.jsonRpcBody');
    readBody(req, maxBodyBytes, (err, text) =>
      scope.runInAsyncScope(() => {
        if (err) {
          fail(res, err);
          return;
        }
        let body: unknown;
        try {
          // body-parser's reading of an empty body (`strict: false`): an empty object.
          body = text === '' ? {} : JSON.parse(text as string);
        } catch (parseError) {
          fail(res, Object.assign(parseError as Error, { status: 400, type: 'entity.parse.failed' }));
          return;
        }
        // Interceptors (request metrics, the span's name) read the method from the parsed body.
        req.body = body;
        answer(req, res, body, user).catch((error: unknown) => fail(res, error));
      }),
    );
  };

  return (req, res) => {
    if (
      req.method !== 'POST' ||
      !(req.url === '/' || req.url?.startsWith('/?')) ||
      !plainJsonBody(req) ||
      (legacyCompat && (headerValue(req, versionHeader) ?? LEGACY_VERSION) === LEGACY_VERSION) ||
      hostGuard?.refusal(req) ||
      Number(req.headers['content-length'] ?? 0) > maxBodyBytes
    )
      return false;
    const user = authenticate(req);
    if (!user || user instanceof Promise) return false;
    // Express catches what its layers throw; here nothing would, and a throw would end the process.
    try {
      if (intercepts.length === 0) readAndAnswer(req, res, user);
      else runIntercepts(intercepts, req, res, () => readAndAnswer(req, res, user));
    } catch (err) {
      fail(res, err);
    }
    return true;
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

/** A body this route reads itself: declared JSON in UTF-8 (or no charset), not encoded, with a length or chunked. */
function plainJsonBody(req: IncomingMessage): boolean {
  const type = req.headers['content-type']?.toLowerCase().replace(/\s+/g, '');
  if (type !== 'application/json' && type !== 'application/json;charset=utf-8') return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

/** The body as UTF-8 text, or a body-parser-shaped error (413 `entity.too.large`, 400 `request.aborted`). */
function readBody(
  req: IncomingMessage,
  limit: number,
  done: (err: (Error & { status: number; type: string }) | undefined, text?: string) => void,
): void {
  const chunks: Buffer[] = [];
  let length = 0;
  let finished = false;
  const finish = (err?: Error & { status: number; type: string }) => {
    if (finished) return;
    finished = true;
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('error', onError);
    req.removeListener('aborted', onAborted);
    if (err) {
      req.resume();
      done(err);
    } else done(undefined, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  };
  const onData = (chunk: Buffer) => {
    length += chunk.length;
    if (length > limit) finish(bodyError('request entity too large', 413, 'entity.too.large'));
    else chunks.push(chunk);
  };
  const onEnd = () => finish();
  const onError = (err: Error) => finish(Object.assign(err, { status: 400, type: 'request.aborted' }));
  const onAborted = () => finish(bodyError('request aborted', 400, 'request.aborted'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

function bodyError(message: string, status: number, type: string): Error & { status: number; type: string } {
  return Object.assign(new Error(message), { status, type });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const json = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

/** A `SendStreamingMessage` or `SubscribeToTask` whose envelope and params the SDK's transport accepts. */
interface StreamRequest {
  id?: string | number | null;
  method: 'SendStreamingMessage' | 'SubscribeToTask';
  params: Record<string, unknown>;
}

/**
 * A stream request the SDK's `JsonRpcTransportHandler.handle` would open (its `isRequestValid` and
 * `paramsAreValid`: an integer, string or null id, params an object without an empty key). Anything
 * else goes to `handle`, which answers it as before.
 */
function isStreamRequest(body: unknown): body is StreamRequest {
  const request = body as Partial<StreamRequest>;
  if (request.method !== 'SendStreamingMessage' && request.method !== 'SubscribeToTask') return false;
  const id = request.id;
  if (!(id === undefined || id === null || typeof id === 'string' || Number.isInteger(id))) return false;
  const params = request.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  for (const key of Object.keys(params)) if (key === '') return false;
  return true;
}

function isAsyncIterable(value: unknown): value is AsyncGenerator<StreamResponse> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/** Resolves once the response's buffer has drained, or it closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
