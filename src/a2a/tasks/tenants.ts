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
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { refusedStream } from './streamForms';

/**
 * A2A v1.0 tenants (`AgentInterface.tenant`, the `tenant` field of every
 * request, `/{tenant}/…` REST routes): the node serves the tenants of
 * `a2a.tenants`, each a scope of its own — its tasks by the task rows'
 * tenant column, every other store by the principal's tenant-qualified id
 * (`principal.ts` `inTenant`). The spec leaves the meaning of a tenant to
 * the server and names no error for one it does not serve; the node answers
 * TaskNotFound (JSON-RPC -32001, HTTP 404, gRPC NOT_FOUND), as for any
 * resource the caller cannot see. A request naming no tenant is the node's
 * own scope, as without tenants.
 */

/**
 * `handler` serving only `tenants` (and requests naming none): every binding
 * calls it, so one check covers JSON-RPC, HTTP+JSON and gRPC alike.
 * @example
 * const requestHandler = servedTenants(taskHandler, config.a2a.tenants);
 */
export function servedTenants(handler: A2ARequestHandler, tenants: readonly string[]): A2ARequestHandler {
  return new TenantGate(handler, new Set(tenants));
}

/** Refuses a request naming a tenant the node does not serve, before the handler sees it. */
class TenantGate implements A2ARequestHandler {
  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly served: ReadonlySet<string>,
  ) {}

  private check(context: ServerCallContext): void {
    const refusal = this.refusal(context);
    if (refusal) throw refusal;
  }

  private refusal(context: ServerCallContext): Error | undefined {
    const tenant = context.tenant;
    return tenant && !this.served.has(tenant)
      ? new TaskNotFoundError(`tenant "${tenant}" is not served here`)
      : undefined;
  }

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  async getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.check(context);
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    this.check(context);
    return this.inner.sendMessage(params, context);
  }

  // A stream is handed on as it is (no generator around it: a caller that leaves ends it at once).
  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const refusal = this.refusal(context);
    return refusal ? refusedStream(refusal) : this.inner.sendMessageStream(params, context);
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    this.check(context);
    return this.inner.getTask(params, context);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.check(context);
    return this.inner.cancelTask(params, context);
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.check(context);
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.check(context);
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    this.check(context);
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    this.check(context);
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const refusal = this.refusal(context);
    return refusal ? refusedStream(refusal) : this.inner.resubscribe(params, context);
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.check(context);
    return this.inner.listTasks(params, context);
  }
}
