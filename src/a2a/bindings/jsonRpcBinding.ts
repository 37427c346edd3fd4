import { A2A_VERSION_HEADER, Extensions, HTTP_EXTENSION_HEADER, StreamResponse } from '@a2a-js/sdk';
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
import { userFor } from '../../identity/request';
import { sendJson, type HttpCall } from './httpCall';
import { InboundRefusal, type Step } from './inbound';
import { invalidParam, typedJsonRpcError } from '../../protocol/errorDetails';
import { envelopeRefusal } from './jsonRpcEnvelope';
import { JSON_RPC_METHODS } from './jsonRpcMethods';
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
const METHOD_NOT_FOUND = -32601;
const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();
const EXTENSION_HEADER = HTTP_EXTENSION_HEADER.toLowerCase();
const LEGACY_EXTENSION_HEADER = LEGACY_HTTP_EXTENSION_HEADER.toLowerCase();

/**
 * The JSON-RPC binding, the whole path of `POST /` after the shared steps:
 * the envelope and message checks (`jsonRpcEnvelope.ts`), the call context
 * as the SDK builds it, then v1.0 through the node's own method table
 * (`jsonRpcMethods.ts`: the SDK's public ProtoJSON readers and writers
 * around the request handler; a stream written as one string per event,
 * `eventStream.ts`) or v0.3 through the SDK's `LegacyJsonRpcTransportHandler`
 * (its streams are its envelopes) — without express, body-parser or the
 * SDK's express router.
 * @example
 * const rpc = jsonRpcBinding({ requestHandler, legacyCompat: true, logger });
 * const run = compose([...shared, jsonBody({ maxBodyBytes, mediaTypes: JSON_RPC_MEDIA_TYPES }), rpc.answer]);
 * run(call).catch((err) => rpc.refuse(call, err));
 */
export function jsonRpcBinding(options: JsonRpcBindingOptions): JsonRpcBinding {
  const { requestHandler, legacyCompat, logger } = options;
  const legacyTransport = legacyCompat ? new LegacyJsonRpcTransportHandler(requestHandler) : undefined;
  // The SDK's express handler's rule: no version, or 0.3, is v0.3 when the compatibility layer is on.
  const isLegacy = (call: HttpCall) =>
    legacyTransport !== undefined && (call.header(VERSION_HEADER) ?? A2A_LEGACY_PROTOCOL_VERSION) === '0.3';
  const mapError = (call: HttpCall, err: unknown) =>
    isLegacy(call) ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err) : v1Error(err);

  /** A v1.0 request, answered by its method of the node's table; its errors as JSON-RPC errors (HTTP 200). */
  const answerV1 = async (call: HttpCall, request: RpcRequest, context: ServerCallContext): Promise<void> => {
    const { res } = call;
    const id = request.id ?? null;
    const method = JSON_RPC_METHODS.get(request.method);
    if (!method) {
      sendJson(res, 200, { jsonrpc: '2.0', id, error: { code: METHOD_NOT_FOUND, message: 'Method not found' } });
      return;
    }
    // Every method's params are optional on the wire: what a method needs, the handler asks for by name.
    const params = request.params ?? {};
    if (method.streamed) {
      let events: AsyncGenerator<StreamResponse, void, undefined>;
      try {
        setTenant(params, context);
        events = method.open(requestHandler, params, context);
      } catch (err) {
        sendJson(res, 200, { jsonrpc: '2.0', id, error: v1Error(err) });
        return;
      }
      const prefix = `data: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
      const stream: EventStream<StreamResponse> = {
        events,
        frame: (event) => {
          const frame = `${prefix}${JSON.stringify(StreamResponse.toJSON(event))}}\n\n`;
          // An event carrying its generation (the generation extension, activated) is resumable from its `id`.
          const eventId = sseEventId(event);
          return eventId === undefined ? frame : `id: ${eventId}\n${frame}`;
        },
        // Extensions are activated as the stream opens (its first read): the header goes out with its headers.
        openedHeaders: () =>
          context.activatedExtensions ? { [HTTP_EXTENSION_HEADER]: [...context.activatedExtensions] } : undefined,
      };
      await writeEventStream(res, stream, { id, mapError: v1Error, logger });
      return;
    }
    let result: unknown;
    try {
      setTenant(params, context);
      result = await method.answer(requestHandler, params, context);
    } catch (err) {
      sendJson(res, 200, { jsonrpc: '2.0', id, error: v1Error(err) });
      return;
    }
    if (context.activatedExtensions) res.setHeader(HTTP_EXTENSION_HEADER, [...context.activatedExtensions]);
    sendJson(res, 200, { jsonrpc: '2.0', id, result });
  };

  /** A v0.3 request, answered by the SDK's v0.3 transport: JSON, or its stream of envelopes. */
  const answerV03 = async (call: HttpCall, transport: LegacyJsonRpcTransportHandler, context: ServerCallContext) => {
    const { res } = call;
    const result = await transport.handle(call.body as Record<string, unknown>, context);
    if (context.activatedExtensions) res.setHeader(LEGACY_HTTP_EXTENSION_HEADER, [...context.activatedExtensions]);
    if (!isAsyncIterable(result)) {
      sendJson(res, 200, result);
      return;
    }
    // Its events are whole envelopes. Its resubscribe opens the stream before the first event, as the SDK's
    // handler does, so even a refusal arrives as an event.
    const stream = { events: result, frame: (envelope: unknown) => `data: ${JSON.stringify(envelope)}\n\n` };
    await writeEventStream(res, stream, {
      id: call.rpcId,
      mapError: (err) => mapError(call, err),
      logger,
      headersFirst: (call.body as RpcRequest).method === 'tasks/resubscribe',
    });
  };

  const answer: Step<HttpCall> = async (call) => {
    const { body, res } = call;
    call.name = jsonRpcName(body);
    const refusal = envelopeRefusal(body);
    if (refusal) {
      sendJson(res, 200, refusal);
      return;
    }
    const request = body as RpcRequest;
    call.rpcId = request.id ?? null;
    const legacy = isLegacy(call);
    const context = defaultServerCallContextBuilder({
      extensions: Extensions.parseServiceParameter(
        legacy
          ? (call.header(LEGACY_EXTENSION_HEADER) ?? call.header(EXTENSION_HEADER))
          : call.header(EXTENSION_HEADER),
      ),
      user: userFor(call.principal, call.subjectToken),
      headers: call.headers,
      requestedVersion: call.header(VERSION_HEADER),
    });
    validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'JSONRPC');
    if (legacyTransport && legacy) await answerV03(call, legacyTransport, context);
    else await answerV1(call, request, context);
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

/** A JSON-RPC request whose envelope passed `envelopeRefusal`. */
interface RpcRequest {
  id?: string | number | null;
  method: string;
  params?: Record<string, unknown>;
}

/** The request's tenant (§9: the `tenant` param of every method), for the context's scope. */
function setTenant(params: Record<string, unknown>, context: ServerCallContext): void {
  const tenant = params.tenant;
  if (tenant === undefined || tenant === null || tenant === '') return;
  if (typeof tenant !== 'string') throw invalidParam('tenant', 'must be a string');
  context.setTenant(tenant);
}

function isAsyncIterable(value: unknown): value is AsyncGenerator<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/** JSON-RPC method names kept as they are; any other method of a parsed request is `unknown`. */
const NAMED_METHODS: ReadonlySet<string> = new Set([
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
  return typeof method === 'string' && NAMED_METHODS.has(method) ? method : 'unknown';
}
