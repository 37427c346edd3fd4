import * as grpc from '@grpc/grpc-js';
import { A2A_VERSION_HEADER, Extensions, HTTP_EXTENSION_HEADER } from '@a2a-js/sdk';
import type { Message, SendMessageResponse, StreamResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  defaultServerCallContextBuilder,
  validateVersion,
  type A2ARequestHandler,
  type ServerCallContext,
  type User,
} from '@a2a-js/sdk/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';

/**
 * The node's own implementation of `lf.a2a.v1.A2AService` (§10) over its
 * request handler: which handler method each gRPC method calls, how the call
 * context is built, and the service definition the server registers. The
 * SDK's `grpcService` answers errors with its own status and gives no seam
 * to map them or to stop a stream its caller left, so the node owns the
 * service outright, over the SDK's public pieces only: the method
 * definitions and their protobuf codecs (`A2AService`), the call context
 * builder, `validateVersion`, and its types.
 */

/** The methods of the service, by their key in `A2AService` (`sendMessage`, …). */
export type GrpcMethodKey = keyof typeof A2AService;

/** A unary method: the decoded request to the response message. */
type Unary = (handler: A2ARequestHandler, request: never, context: ServerCallContext) => Promise<unknown>;
/** A server-streaming method: the decoded request to its events. */
type Streamed = (
  handler: A2ARequestHandler,
  request: never,
  context: ServerCallContext,
) => AsyncGenerator<StreamResponse, void, undefined>;

/** Each unary method of the service and the handler method answering it. */
export const UNARY_METHODS = {
  sendMessage: async (handler, request, context) => sendMessageResponse(await handler.sendMessage(request, context)),
  getTask: (handler, request, context) => handler.getTask(request, context),
  listTasks: (handler, request, context) => handler.listTasks(request, context),
  cancelTask: (handler, request, context) => handler.cancelTask(request, context),
  createTaskPushNotificationConfig: (handler, request, context) =>
    handler.createTaskPushNotificationConfig(request, context),
  getTaskPushNotificationConfig: (handler, request, context) => handler.getTaskPushNotificationConfig(request, context),
  listTaskPushNotificationConfigs: (handler, request, context) =>
    handler.listTaskPushNotificationConfigs(request, context),
  deleteTaskPushNotificationConfig: async (handler, request, context) => {
    await handler.deleteTaskPushNotificationConfig(request, context);
    // google.protobuf.Empty
    return {};
  },
  getExtendedAgentCard: (handler, request, context) => handler.getAuthenticatedExtendedAgentCard(request, context),
} satisfies Partial<Record<GrpcMethodKey, Unary>>;

/** Each server-streaming method of the service and the handler method answering it. */
export const STREAMED_METHODS = {
  sendStreamingMessage: (handler, request, context) => handler.sendMessageStream(request, context),
  subscribeToTask: (handler, request, context) => handler.resubscribe(request, context),
} satisfies Partial<Record<GrpcMethodKey, Streamed>>;

/** A Message or Task answer of SendMessage as its response message (the oneof `payload`). */
function sendMessageResponse(answer: Message | Task): SendMessageResponse {
  return 'messageId' in answer
    ? { payload: { $case: 'message', value: answer } }
    : { payload: { $case: 'task', value: answer } };
}

/** A request message that did not decode (protobuf's reader threw): the call is refused, not failed. */
export class UndecodableRequest {
  constructor(readonly problem: string) {}

  /** The refusal a method answers it with (INVALID_ARGUMENT). */
  refusal(): Error {
    return new RequestMalformedError(`the request message does not decode: ${this.problem}`);
  }
}

/**
 * `A2AService` as the node registers it: the same methods, paths and
 * codecs, except that a request message that does not decode (garbage, or
 * nesting past what the reader's recursion takes) reaches the method as an
 * {@link UndecodableRequest} — after the inbound chain's credential step —
 * instead of grpc-js answering INTERNAL before any step ran.
 */
export function serviceDefinition(): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [key, method] of Object.entries(A2AService) as Array<[string, grpc.MethodDefinition<unknown, unknown>]>) {
    definition[key] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        try {
          return method.requestDeserialize(bytes);
        } catch (err) {
          return new UndecodableRequest(err instanceof RangeError ? 'it nests too deep' : 'it is not valid protobuf');
        }
      },
    };
  }
  return definition;
}

const VERSION_KEY = A2A_VERSION_HEADER.toLowerCase();
const EXTENSIONS_KEY = HTTP_EXTENSION_HEADER.toLowerCase();

/**
 * The call context of a gRPC call, as every binding builds it: the extensions and version from the call's
 * metadata, the request's tenant, the caller `user`; the requested version checked against the card's gRPC
 * interface (VersionNotSupported otherwise).
 */
export async function grpcCallContext(
  call: { metadata: grpc.Metadata; request: unknown },
  headers: Record<string, string | string[] | undefined>,
  user: User,
  handler: A2ARequestHandler,
): Promise<ServerCallContext> {
  const [version] = call.metadata.get(VERSION_KEY);
  const context = defaultServerCallContextBuilder({
    extensions: Extensions.parseServiceParameter(call.metadata.get(EXTENSIONS_KEY).map(String).join(',')),
    user,
    headers,
    requestedVersion: version === undefined ? undefined : String(version),
    tenant: (call.request as { tenant?: string } | null)?.tenant || undefined,
  });
  validateVersion(context.requestedVersion, await handler.getAgentCard(), 'GRPC');
  return context;
}

/** The response metadata of a call: the extensions its handling activated (§3.2.6), if any. */
export function answerMetadata(context: ServerCallContext): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (context.activatedExtensions?.length) metadata.set(EXTENSIONS_KEY, context.activatedExtensions.join(','));
  return metadata;
}
