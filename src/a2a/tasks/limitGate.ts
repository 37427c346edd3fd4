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
import { limitRefusal, type RequestLimits } from './requestLimits';
import { refusedStream } from './streamForms';

/**
 * `handler` behind the one check of {@link RequestLimits}: every binding
 * (JSON-RPC, HTTP+JSON, the v0.3 layer, gRPC) hands its decoded request to
 * the one request handler through this gate, so a request over a limit is
 * refused the same way on each (invalid params naming the field) before
 * anything of it is stored.
 * @example
 * const requestHandler = limitedRequests(answerStorageOutages(taskHandler, health), { ...REQUEST_LIMITS, maxBytes });
 */
export function limitedRequests(handler: A2ARequestHandler, limits: RequestLimits): A2ARequestHandler {
  return new LimitGate(handler, limits);
}

class LimitGate implements A2ARequestHandler {
  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly limits: RequestLimits,
  ) {}

  private check(params: unknown): void {
    const refusal = limitRefusal(params, this.limits);
    if (refusal) throw refusal;
  }

  /** A stream over a limit is refused at its first read, as the handler's own streams refuse. */
  private opened<T>(params: T, open: (params: T) => AsyncGenerator<StreamResponse, void, undefined>) {
    const refusal = limitRefusal(params, this.limits);
    return refusal ? refusedStream(refusal) : open(params);
  }

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  async getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.check(params);
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    this.check(params);
    return this.inner.sendMessage(params, context);
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.opened(params, (checked) => this.inner.sendMessageStream(checked, context));
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    this.check(params);
    return this.inner.getTask(params, context);
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.check(params);
    return this.inner.listTasks(params, context);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.check(params);
    return this.inner.cancelTask(params, context);
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.opened(params, (checked) => this.inner.resubscribe(checked, context));
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.check(params);
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.check(params);
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    this.check(params);
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    this.check(params);
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }
}
