import type {
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
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { refusedStream } from './streamForms';

/** Why a request may not reach the handler (the error its binding answers), or undefined when it may. */
export type RequestRefusal = (params: unknown, context: ServerCallContext) => Error | undefined;

/**
 * `handler` behind the node's one request gate: every binding (JSON-RPC,
 * HTTP+JSON, the v0.3 layer, gRPC) hands its decoded request to the one
 * request handler through it, so a refused request (over a limit, for a
 * tenant not served) is refused the same way on each, before anything of it
 * is stored. The card itself passes: it is public.
 * @example
 * const requestHandler = gatedRequests(taskHandler, (params) => limitRefusal(params, limits));
 */
export function gatedRequests(handler: A2ARequestHandler, refusal: RequestRefusal): A2ARequestHandler {
  return new RequestGate(handler, refusal);
}

class RequestGate implements A2ARequestHandler {
  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly refusal: RequestRefusal,
  ) {}

  private check(params: unknown, context: ServerCallContext): void {
    const refusal = this.refusal(params, context);
    if (refusal) throw refusal;
  }

  /**
   * A refused stream is refused at its first read, as the handler's own streams refuse; an accepted one is handed
   * on as it is (no generator around it: a caller that leaves ends it at once).
   */
  private opened<T>(
    params: T,
    context: ServerCallContext,
    open: (params: T) => AsyncGenerator<StreamResponse, void, undefined>,
  ) {
    const refusal = this.refusal(params, context);
    return refusal ? refusedStream(refusal) : open(params);
  }

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  async getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.check(params, context);
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    this.check(params, context);
    return this.inner.sendMessage(params, context);
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.opened(params, context, (checked) => this.inner.sendMessageStream(checked, context));
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    this.check(params, context);
    return this.inner.getTask(params, context);
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.check(params, context);
    return this.inner.listTasks(params, context);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.check(params, context);
    return this.inner.cancelTask(params, context);
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.opened(params, context, (checked) => this.inner.resubscribe(checked, context));
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.check(params, context);
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.check(params, context);
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    this.check(params, context);
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    this.check(params, context);
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }
}
