import * as grpc from '@grpc/grpc-js';
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
  type JsonInput,
} from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';

/** The A2A methods by their JSON-RPC (and gRPC) name: the service's method and the request message's reader. */
const METHODS: Record<string, { key: keyof typeof A2AService; read: (json: JsonInput) => unknown }> = {
  SendMessage: { key: 'sendMessage', read: SendMessageRequest.fromJSON },
  SendStreamingMessage: { key: 'sendStreamingMessage', read: SendMessageRequest.fromJSON },
  GetTask: { key: 'getTask', read: GetTaskRequest.fromJSON },
  ListTasks: { key: 'listTasks', read: ListTasksRequest.fromJSON },
  CancelTask: { key: 'cancelTask', read: CancelTaskRequest.fromJSON },
  SubscribeToTask: { key: 'subscribeToTask', read: SubscribeToTaskRequest.fromJSON },
  CreateTaskPushNotificationConfig: {
    key: 'createTaskPushNotificationConfig',
    read: TaskPushNotificationConfig.fromJSON,
  },
  GetTaskPushNotificationConfig: {
    key: 'getTaskPushNotificationConfig',
    read: GetTaskPushNotificationConfigRequest.fromJSON,
  },
  ListTaskPushNotificationConfigs: {
    key: 'listTaskPushNotificationConfigs',
    read: ListTaskPushNotificationConfigsRequest.fromJSON,
  },
  DeleteTaskPushNotificationConfig: {
    key: 'deleteTaskPushNotificationConfig',
    read: DeleteTaskPushNotificationConfigRequest.fromJSON,
  },
  GetExtendedAgentCard: { key: 'getExtendedAgentCard', read: GetExtendedAgentCardRequest.fromJSON },
};

/** What a gRPC call answered: its messages (one for a unary call) or its error. */
export interface GrpcAnswer {
  messages: unknown[];
  streamed: boolean;
  error?: grpc.ServiceError;
}

/**
 * One A2A call over gRPC to `address`: `method` by its JSON-RPC name, `params` its JSON-RPC params (ProtoJSON,
 * read as the request message), `metadata` besides `a2a-version: 1.0`. `authority` overrides the call's
 * `:authority`. Bounded at 10 s.
 * @example
 * const answer = await grpcCall('127.0.0.1:50051', 'GetTask', { id: 'no-such-task' });
 */
export function grpcCall(
  address: string,
  method: string,
  params: unknown,
  metadata: Record<string, string> = {},
  options: { authority?: string } = {},
): Promise<GrpcAnswer> {
  const known = METHODS[method];
  if (!known) throw new Error(`no gRPC method for ${method}`);
  const definition = A2AService[known.key] as unknown as grpc.MethodDefinition<unknown, unknown>;
  const client = new grpc.Client(
    address,
    grpc.credentials.createInsecure(),
    options.authority ? { 'grpc.default_authority': options.authority } : {},
  );
  const sent = new grpc.Metadata();
  sent.set('a2a-version', '1.0');
  for (const [key, value] of Object.entries(metadata)) sent.set(key, value);
  const request = known.read(params as JsonInput);
  const callOptions = { deadline: Date.now() + 20_000 };
  return new Promise<GrpcAnswer>((resolve) => {
    const done = (answer: GrpcAnswer) => {
      client.close();
      resolve(answer);
    };
    if (definition.responseStream) {
      const messages: unknown[] = [];
      const stream = client.makeServerStreamRequest(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        request,
        sent,
        callOptions,
      );
      stream.on('data', (message: unknown) => messages.push(message));
      stream.on('error', (error: grpc.ServiceError) => done({ messages, streamed: true, error }));
      stream.on('end', () => done({ messages, streamed: true }));
    } else {
      client.makeUnaryRequest(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        request,
        sent,
        callOptions,
        (error, value) =>
          done(error ? { messages: [], streamed: false, error } : { messages: [value], streamed: false }),
      );
    }
  });
}
