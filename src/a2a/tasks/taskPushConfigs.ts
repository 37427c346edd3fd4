import type {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { PushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { invalidParam } from '../../protocol/errorDetails';
import type { StoredTask } from '../../store/taskRows';

/**
 * The push-config methods of the request handler: a task's webhooks, saved,
 * read, listed and deleted, each only on a task the caller may read.
 */
export class TaskPushConfigs {
  constructor(
    private readonly store: PushNotificationStore,
    /** The task the caller may read, or TaskNotFoundError (as for a task that does not exist). */
    private readonly find: (taskId: string, context: ServerCallContext) => Promise<StoredTask>,
  ) {}

  async create(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    if (!params.taskId) throw invalidParam('taskId', 'is required');
    if (!params.url) throw invalidParam('url', 'is required');
    await this.find(params.taskId, context);
    await this.store.save(params.taskId, context, params);
    return structuredClone(params);
  }

  async get(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    await this.find(params.taskId, context);
    const configs = await this.store.load(params.taskId, context);
    if (configs.length === 0)
      throw new TaskNotFoundError(`Push notification config not found for task ${params.taskId}.`);
    const config = configs.find((c) => c.id === params.id);
    if (!config)
      throw new TaskNotFoundError(
        `Push notification config with id '${params.id}' not found for task ${params.taskId}.`,
      );
    return config;
  }

  async list(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    await this.find(params.taskId, context);
    return { configs: await this.store.load(params.taskId, context), nextPageToken: '' };
  }

  async delete(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    await this.find(params.taskId, context);
    await this.store.delete(params.taskId, context, params.id);
  }
}
