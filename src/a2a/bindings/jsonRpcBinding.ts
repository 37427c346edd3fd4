import {
  A2A_VERSION_HEADER,
  Extensions,
  HTTP_EXTENSION_HEADER,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
} from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION, LEGACY_HTTP_EXTENSION_HEADER } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2AError } from '@a2a-js/sdk/errors';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  validateVersion,
  type A2ARequestHandler,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { userOf } from '../../identity/request';
import { sendJson, type HttpCall } from './httpCall';
import { InboundRefusal, type Step } from './inbound';
import { typedJsonRpcError } from '../../protocol/errorDetails';
import { envelopeRefusal } from './jsonRpcEnvelope';
import { writeEventStream, type EventStream } from './eventStream';
import { sseEventId } from '../../protocol/generationExtension';

/** Options of {@link jsonRpcBinding}. */
export interface JsonRpcBindingOptions {
  requestHandler: A2ARequestHandler;
  /** `a2a.legacyCompat`: a request without `A2A-Version` (or with 0.3) is v0.3, answered by the SDK's v0.3 transport. */
  legacyCompat: boolean;
  logger: Logger;
}

/** JSON-RPC over HTTP (`POST /`), both versions: the last step of its chain, and how it writes what ended one. */
export interface JsonRpcBinding {
  /** After the body step: the envelope check, the version's transport, the answer (JSON, or an event stream). */
  readonly answer: Step<HttpCall>;
  /** Writes a refusal or error that ended the chain as a JSON-RPC answer of the call's version. */
  refuse(call: HttpCall, err: unknown): void;
}

const INTERNAL_ERROR = -32603;
const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();
const EXTENSION_HEADER = HTTP_EXTENSION_HEADER.toLowerCase();
const LEGACY_EXTENSION_HEADER = LEGACY_HTTP_EXTENSION_HEADER.toLowerCase();

/**
 * The JSON-RPC binding, the whole path of `POST /` after the shared steps:
 * the envelope and message checks (`jsonRpcEnvelope.ts`), the call context
 * as the SDK builds it, and the SDK's transport of the request's version —
 * `JsonRpcTransportHandler` for v1.0, `LegacyJsonRpcTransportHandler` for
 * v0.3 — without express, body-parser or the SDK's express router. A v1.0
 * stream (`SendStreamingMessage`, `SubscribeToTask`) is opened on the request
 * handler directly and written as the SDK's frames, one string per event
 * (`eventStream.ts`); v0.3 streams are the v0.3 transport's envelopes.
 * @example
 * const rpc = jsonRpcBinding({ requestHandler, legacyCompat: true, logger });
 * const run = compose([...shared, jsonBody({ maxBodyBytes, mediaTypes: JSON_RPC_MEDIA_TYPES }), rpc.answer]);
 * run(call).catch((err) => rpc.refuse(call, err));
 */
export function jsonRpcBinding(options: JsonRpcBindingOptions): JsonRpcBinding {
  const { requestHandler, legacyCompat, logger } = options;
  const transport = new JsonRpcTransportHandler(requestHandler);
  const legacyTransport = legacyCompat ? new LegacyJsonRpcTransportHandler(requestHandler) : undefined;
  // The SDK's express handler's rule: no version, or 0.3, is v0.3 when the compatibility layer is on.
  const isLegacy = (call: HttpCall) =>
    legacyTransport !== undefined && (call.header(VERSION_HEADER) ?? A2A_LEGACY_PROTOCOL_VERSION) === '0.3';
  const mapError = (call: HttpCall, err: unknown) =>
    isLegacy(call) ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err) : v1Error(err);

  // A v1.0 stream request the SDK's transport would take (`isStreamRequest`), opened as its `handle` opens it —
  // the tenant, the params read with the SDK's `fromJSON`, the handler's method — without the transport's
  // generator around it, whose per-event layer (a promise and a suspended frame per event) and wrapper
  // object the frame writer replaces with one string per event. A refusal is a JSON-RPC answer, as `handle` gives.
  const openStream = (request: StreamRequest, context: ServerCallContext): EventStream | Record<string, unknown> => {
    try {
      if (request.params.tenant) context.setTenant(request.params.tenant as string);
      const events =
        request.method === 'SendStreamingMessage'
          ? requestHandler.sendMessageStream(SendMessageRequest.fromJSON(request.params), context)
          : requestHandler.resubscribe(SubscribeToTaskRequest.fromJSON(request.params), context);
      const prefix = `data: {"jsonrpc":"2.0","id":${JSON.stringify(request.id ?? null)},"result":`;
      return {
        events,
        frame: (event: StreamResponse) => {
          const frame = `${prefix}${JSON.stringify(StreamResponse.toJSON(event))}}\n\n`;
          // An event carrying its generation (the generation extension, activated) is resumable from its `id`.
          const id = sseEventId(event);
          return id === undefined ? frame : `id: ${id}\n${frame}`;
        },
        // Extensions are activated as the stream opens (its first read): the header goes out with its headers.
        openedHeaders: () =>
          context.activatedExtensions ? { [HTTP_EXTENSION_HEADER]: [...context.activatedExtensions] } : undefined,
      };
    } catch (err) {
      return { jsonrpc: '2.0', id: request.id ?? null, error: v1Error(err) };
    }
  };

  const answer: Step<HttpCall> = async (call) => {
    const { body, res } = call;
    call.name = jsonRpcName(body);
    const refusal = envelopeRefusal(body);
    if (refusal) {
      sendJson(res, 200, refusal);
      return;
    }
    const request = body as { id?: string | number | null; method: string };
    call.rpcId = request.id ?? null;
    const legacy = isLegacy(call);
    const context = defaultServerCallContextBuilder({
      extensions: Extensions.parseServiceParameter(
        legacy
          ? (call.header(LEGACY_EXTENSION_HEADER) ?? call.header(EXTENSION_HEADER))
          : call.header(EXTENSION_HEADER),
      ),
      user: userOf(call.principal),
      headers: call.headers,
      requestedVersion: call.header(VERSION_HEADER),
    });
    validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'JSONRPC');
    const result =
      legacyTransport && legacy
        ? await legacyTransport.handle(body as Record<string, unknown>, context)
        : isStreamRequest(body)
          ? openStream(body, context)
          : await transport.handle(body as Record<string, unknown>, context);
    if (context.activatedExtensions)
      res.setHeader(legacy ? LEGACY_HTTP_EXTENSION_HEADER : HTTP_EXTENSION_HEADER, [...context.activatedExtensions]);
    if (isEventStream(result)) {
      await writeEventStream(res, result, { id: call.rpcId, mapError: (err) => mapError(call, err), logger });
    } else if (isAsyncIterable(result)) {
      // The v0.3 transport's stream: its events are whole envelopes. Its resubscribe opens the stream before
      // the first event, as the SDK's handler does, so even a refusal arrives as an event.
      const stream = { events: result, frame: (envelope: unknown) => `data: ${JSON.stringify(envelope)}\n\n` };
      await writeEventStream(res, stream, {
        id: call.rpcId,
        mapError: (err) => mapError(call, err),
        logger,
        headersFirst: request.method === 'tasks/resubscribe',
      });
    } else sendJson(res, 200, legacy ? result : typedAnswer(result));
  };

  const refuse = (call: HttpCall, err: unknown): void => {
    const { res } = call;
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    if (err instanceof InboundRefusal) {
      const headers = err.options.close ? { ...err.options.headers, Connection: 'close' } : err.options.headers;
      const error = { code: err.code, message: err.message };
      sendJson(res, err.options.rpcStatus ?? err.status, { jsonrpc: '2.0', id: call.rpcId, error }, headers);
      return;
    }
    if (err instanceof A2AError) {
      const error = mapError(call, err);
      sendJson(res, error.code === INTERNAL_ERROR ? 500 : 200, { jsonrpc: '2.0', id: call.rpcId, error });
      return;
    }
    logger.warn('JSON-RPC request failed', { error: errorMessage(err) });
    sendJson(res, 500, { jsonrpc: '2.0', id: call.rpcId, error: { code: INTERNAL_ERROR, message: 'internal error' } });
  };

  return { answer, refuse };
}

/** A v1.0 JSON-RPC error object for `err` as the SDK's transport maps it, its details typed (§9.5). */
function v1Error(err: unknown) {
  return typedJsonRpcError(JsonRpcTransportHandler.mapToJSONRPCError(err));
}

/** A v1.0 answer of the SDK's transport, an error in it with typed details (§9.5: the BadRequest of invalid params). */
function typedAnswer(answer: unknown): unknown {
  const error = (answer as { error?: { code: number; message: string; data?: unknown } } | null)?.error;
  return error ? { ...(answer as object), error: typedJsonRpcError(error) } : answer;
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

function isEventStream(value: unknown): value is EventStream<StreamResponse> {
  return typeof (value as Partial<EventStream> | null)?.frame === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncGenerator<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/** JSON-RPC method names kept as they are; any other method of a parsed request is `unknown`. */
const JSON_RPC_METHODS: ReadonlySet<string> = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'SetTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/list',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
]);

/** The name of a parsed JSON-RPC body: its method when it is one of A2A's, `unknown` for any other. */
export function jsonRpcName(body: unknown): string {
  if (typeof body !== 'object' || body === null) return 'other';
  const method = (body as { method?: unknown }).method;
  return typeof method === 'string' && JSON_RPC_METHODS.has(method) ? method : 'unknown';
}
