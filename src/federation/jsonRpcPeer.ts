import {
  A2A_PROTOCOL_VERSION,
  A2A_VERSION_HEADER,
  CancelTaskRequest,
  GetTaskRequest,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
import type { Client, RequestOptions } from '@a2a-js/sdk/client';
import { fromJsonRpcErrorResponse } from '@a2a-js/sdk/errors';
import type { JsonRpcId, JsonRpcRequest, PeerExchange } from './peerFetch';

/**
 * A lean client for peers whose card offers A2A v1.0 over JSON-RPC, the
 * binding this node and most peers speak. The SDK client reads a stream
 * answer the long way round: our checked events re-encoded into a web
 * stream, decoded again (`TextDecoderStream`), parsed by its SSE parser
 * and `JSON.parse`d a second time. Here the events checked by the peer's
 * {@link PeerExchange} are used as they are, converted with the SDK's own
 * codecs (`StreamResponse.fromJSON`, …), so what remoteAgent.ts reads is
 * what the SDK client would have given it. Which peers get it is decided
 * in one place, `peerClient.ts`.
 */

/** What a remote call asks of a client: the SDK's `Client` or this one (`peerClient.ts` chooses). */
export type PeerClient = Pick<
  Client,
  'sendMessage' | 'sendMessageStream' | 'getTask' | 'cancelTask' | 'resubscribeTask'
>;

/** Options of {@link createJsonRpcPeerClient}. */
export interface JsonRpcPeerClientOptions {
  /** The peer's v1.0 JSON-RPC URL (`peerClient.ts` chose this client for it). */
  endpoint: string;
  exchange: PeerExchange;
  /** The peer does not stream: a send returns at once and the task is polled (as the SDK's `polling`). */
  polling: boolean;
}

/**
 * Builds the lean client for one pinned v1.0 JSON-RPC endpoint.
 * @example
 * const choice = peerClientChoice(peer.sdkCard);
 * if (choice.kind === 'lean') client = createJsonRpcPeerClient({ endpoint: choice.endpoint, exchange, polling: false });
 */
export function createJsonRpcPeerClient(options: JsonRpcPeerClientOptions): PeerClient {
  const { exchange, polling } = options;
  const url = new URL(options.endpoint);
  let nextId = 1;
  const request = (method: string, params: unknown): JsonRpcRequest => ({
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params,
  });
  const call = async (method: string, params: unknown, call: RequestOptions | undefined): Promise<unknown> => {
    const rpc = request(method, params);
    const answer = await exchange.call(url, rpc, headersFor(call, 'application/json'), signalOf(call));
    return resultOf(answer, rpc.id, method);
  };
  /** The SDK client's defaults for a send (its `applyClientConfig`). */
  const configured = (params: SendMessageRequest, returnImmediately: boolean): SendMessageRequest => ({
    ...params,
    configuration: {
      ...params.configuration,
      acceptedOutputModes: params.configuration?.acceptedOutputModes ?? [],
      returnImmediately: params.configuration?.returnImmediately ?? returnImmediately,
    } as SendMessageRequest['configuration'],
  });

  return {
    async sendMessage(params, callOptions) {
      const result = await call('SendMessage', SendMessageRequest.toJSON(configured(params, polling)), callOptions);
      const payload = SendMessageResponse.fromJSON(result).payload;
      if (!payload) throw new Error('invalid SendMessage result: no message or task');
      return payload.value;
    },
    async *sendMessageStream(params, callOptions) {
      const rpc = request('SendStreamingMessage', SendMessageRequest.toJSON(configured(params, false)));
      const events = exchange.stream(url, rpc, headersFor(callOptions, 'text/event-stream'), signalOf(callOptions));
      for await (const event of events) yield StreamResponse.fromJSON(resultOf(event, rpc.id, 'a stream event'));
    },
    async *resubscribeTask(params, callOptions) {
      const rpc = request('SubscribeToTask', SubscribeToTaskRequest.toJSON(params));
      const events = exchange.stream(url, rpc, headersFor(callOptions, 'text/event-stream'), signalOf(callOptions));
      for await (const event of events) yield StreamResponse.fromJSON(resultOf(event, rpc.id, 'a stream event'));
    },
    async getTask(params, callOptions) {
      return Task.fromJSON(await call('GetTask', GetTaskRequest.toJSON(params), callOptions));
    },
    async cancelTask(params, callOptions) {
      return Task.fromJSON(await call('CancelTask', CancelTaskRequest.toJSON(params), callOptions));
    },
  };
}

/** The call's headers (per-peer headers, trace context) with the version this client speaks. */
function headersFor(options: RequestOptions | undefined, accept: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options?.serviceParameters ?? {})) {
    if (name.toLowerCase() !== A2A_VERSION_HEADER.toLowerCase()) headers[name] = value;
  }
  headers[A2A_VERSION_HEADER] = A2A_PROTOCOL_VERSION;
  headers['Content-Type'] = 'application/json';
  headers.Accept = accept;
  return headers;
}

function signalOf(options: RequestOptions | undefined): AbortSignal {
  // The exchange finds the call's meter by its signal and refuses a request without one.
  return options?.signal as AbortSignal;
}

/** The `result` of a JSON-RPC response; the peer's A2A error thrown as the SDK client throws it. */
function resultOf(json: unknown, id: JsonRpcId, what: string): unknown {
  if (!json || typeof json !== 'object' || Array.isArray(json) || (json as { jsonrpc?: unknown }).jsonrpc !== '2.0')
    throw new Error(`invalid JSON-RPC response to ${what}: not a JSON-RPC 2.0 object`);
  const response = json as { id?: unknown; result?: unknown; error?: unknown };
  if (response.error && typeof response.error === 'object')
    throw fromJsonRpcErrorResponse(json as Parameters<typeof fromJsonRpcErrorResponse>[0]);
  if (response.id !== id) throw new Error(`JSON-RPC response id mismatch in ${what}`);
  if (response.result === undefined) throw new Error(`invalid JSON-RPC response to ${what}: no result`);
  return response.result;
}
