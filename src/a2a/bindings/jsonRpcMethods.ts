import {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
  type StreamResponse,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';

/**
 * The methods of A2A v1.0's JSON-RPC binding (§9), the node's own table: each
 * method's params read with the SDK's public ProtoJSON reader (`fromJSON`),
 * the request handler's method, the result written with the SDK's public
 * writer (`toJSON`). The SDK's `JsonRpcTransportHandler.handle` answers a
 * stream with a generator that wraps each event in an envelope object; the
 * node writes each event as one string instead (`eventStream.ts`), and owns
 * the whole v1.0 binding rather than a copy of `handle` beside it. v0.3
 * stays the SDK's (`LegacyJsonRpcTransportHandler`).
 */

/** A request's params: the JSON object of the request (ProtoJSON). */
type Params = Record<string, unknown>;

/** A method answered once: its result as JSON. */
interface UnaryMethod {
  readonly streamed: false;
  answer(handler: A2ARequestHandler, params: Params, context: ServerCallContext): Promise<unknown>;
}

/** A method answered with a stream of events (`SendStreamingMessage`, `SubscribeToTask`). */
interface StreamedMethod {
  readonly streamed: true;
  open(
    handler: A2ARequestHandler,
    params: Params,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined>;
}

/** One v1.0 method of the JSON-RPC binding. */
export type JsonRpcMethod = UnaryMethod | StreamedMethod;

const unary = (answer: UnaryMethod['answer']): UnaryMethod => ({ streamed: false, answer });
const streamed = (open: StreamedMethod['open']): StreamedMethod => ({ streamed: true, open });

/** The v1.0 methods by name (a Map: a method named `toString` must find nothing). */
export const JSON_RPC_METHODS: ReadonlyMap<string, JsonRpcMethod> = new Map<string, JsonRpcMethod>([
  [
    'SendMessage',
    unary(async (handler, params, context) => {
      const answer = await handler.sendMessage(SendMessageRequest.fromJSON(params), context);
      return 'messageId' in answer ? { message: Message.toJSON(answer) } : { task: Task.toJSON(answer) };
    }),
  ],
  [
    'SendStreamingMessage',
    streamed((handler, params, context) => handler.sendMessageStream(SendMessageRequest.fromJSON(params), context)),
  ],
  [
    'GetTask',
    unary(async (handler, params, context) =>
      Task.toJSON(await handler.getTask(GetTaskRequest.fromJSON(params), context)),
    ),
  ],
  [
    'ListTasks',
    unary(async (handler, params, context) => {
      const request = ListTasksRequest.fromJSON(params);
      return listTasksResult(await handler.listTasks(request, context), request.includeArtifacts === true);
    }),
  ],
  [
    'CancelTask',
    unary(async (handler, params, context) =>
      Task.toJSON(await handler.cancelTask(CancelTaskRequest.fromJSON(params), context)),
    ),
  ],
  [
    'SubscribeToTask',
    streamed((handler, params, context) => handler.resubscribe(SubscribeToTaskRequest.fromJSON(params), context)),
  ],
  [
    'CreateTaskPushNotificationConfig',
    unary(async (handler, params, context) =>
      TaskPushNotificationConfig.toJSON(
        await handler.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON(params), context),
      ),
    ),
  ],
  [
    'GetTaskPushNotificationConfig',
    unary(async (handler, params, context) =>
      TaskPushNotificationConfig.toJSON(
        await handler.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON(params), context),
      ),
    ),
  ],
  [
    'ListTaskPushNotificationConfigs',
    unary(async (handler, params, context) =>
      ListTaskPushNotificationConfigsResponse.toJSON(
        await handler.listTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest.fromJSON(params), context),
      ),
    ),
  ],
  [
    'DeleteTaskPushNotificationConfig',
    unary(async (handler, params, context) => {
      await handler.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON(params), context);
      return null;
    }),
  ],
  [
    'GetExtendedAgentCard',
    unary(async (handler, params, context) =>
      AgentCard.toJSON(
        await handler.getAuthenticatedExtendedAgentCard(GetExtendedAgentCardRequest.fromJSON(params), context),
      ),
    ),
  ],
]);

/**
 * A ListTasks result as §9 gives it: every field of ListTasksResponse present (ProtoJSON would leave out an
 * empty page's defaults, which the spec requires), each task's artifacts present when they were asked for.
 */
function listTasksResult(response: ListTasksResponse, includeArtifacts: boolean): Record<string, unknown> {
  const written = ListTasksResponse.toJSON(response) as Record<string, unknown>;
  const tasks = (written.tasks as Array<Record<string, unknown>> | undefined) ?? [];
  return {
    ...written,
    tasks: includeArtifacts ? tasks.map((task) => ('artifacts' in task ? task : { ...task, artifacts: [] })) : tasks,
    nextPageToken: written.nextPageToken ?? '',
    pageSize: written.pageSize ?? 0,
    totalSize: written.totalSize ?? 0,
  };
}
