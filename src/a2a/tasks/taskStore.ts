import { randomUUID } from 'node:crypto';
import type { ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { invalidParam } from '../../protocol/errorDetails';
import type { LiveTasks } from './liveTasks';
import { principalOf } from '../../identity/request';
import { isOwner } from '../../principal';
import { LIST_PAGE_BYTES, readableTask } from './readableTasks';
import {
  encodePageToken,
  InvalidPageTokenError,
  timestampMs,
  type TaskPage,
  type PushConfigRows,
  type PushDelivery,
  type StoredTask,
  type TaskReader,
  type TaskRows,
  type TaskRowStores,
  type TaskScope,
} from '../../store/taskRows';

/**
 * Task reads and the SDK's PushNotificationStore contract over the live
 * tasks and the node's task and push-config rows (`store/taskRows.ts`,
 * SQLite or PostgreSQL): the caller's scope from the SDK's call context and
 * the owner rule.
 */

const DEFAULT_PAGE_SIZE = 50;

/** The caller's scope: the tenant and its principal's id (the tenant is a column of its own). */
export const scopeOf = (context: ServerCallContext): TaskScope => ({
  tenant: context.tenant ?? '',
  owner: principalOf(context.user).id,
});
/** The caller as a reader of rows: the node's owner reads every caller's tasks (issue 11 A). */
export const readerOf = (context: ServerCallContext): TaskReader => ({
  ...scopeOf(context),
  everyone: isOwner(principalOf(context.user)),
});

/**
 * The tasks a caller may read: a live task from {@link LiveTasks}, any
 * other from the rows, scoped to the caller (the owner reads every caller's).
 */
export class TaskReads {
  constructor(
    private readonly rows: TaskRows,
    private readonly live: LiveTasks,
  ) {}

  /** The task `taskId` the caller may read, and whose it is; a copy the caller may change. */
  async find(taskId: string, context: ServerCallContext): Promise<StoredTask | undefined> {
    const reader = readerOf(context);
    const held = this.live.held(reader, taskId);
    if (held?.task) return { scope: held.scope, task: structuredClone(held.task), generation: held.generation };
    // Not live here, or its turn has not folded its first event: a new task has no row yet, a claimed one has.
    const stored = await this.rows.get(reader, taskId);
    return stored && { ...stored, task: readableTask(stored.task).task };
  }

  async load(taskId: string, context: ServerCallContext) {
    return (await this.find(taskId, context))?.task;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    // What a list shows must survive a crash: live tasks newer than their rows are written first.
    await this.live.writeAll();
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    try {
      const rows = await this.rows.list(readerOf(context), {
        contextId: params.contextId || undefined,
        state: params.status,
        updatedAfter: params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined,
        pageSize,
        pageToken: params.pageToken || undefined,
        includeArtifacts: params.includeArtifacts === true,
        includeHistory: params.historyLength === undefined || params.historyLength > 0,
      });
      return { ...fitted(rows), pageSize };
    } catch (err) {
      if (err instanceof InvalidPageTokenError) throw invalidParam('pageToken', 'is not a page token from this server');
      throw err;
    }
  }
}

/**
 * A page of stored tasks as a read answers it (`readableTasks.ts`): each task readable, and the page cut
 * before {@link LIST_PAGE_BYTES} (at least one task), the next page starting after the last task kept.
 */
function fitted(page: TaskPage): TaskPage {
  const tasks: Task[] = [];
  let bytes = 0;
  for (const stored of page.tasks) {
    const readable = readableTask(stored);
    bytes += readable.bytes;
    if (tasks.length > 0 && bytes > LIST_PAGE_BYTES) {
      const last = tasks.at(-1)!;
      return { ...page, tasks, nextPageToken: encodePageToken(timestampMs(last.status?.timestamp), last.id) };
    }
    tasks.push(readable.task);
  }
  return { ...page, tasks };
}

/** Push configs in the push-config rows, per caller, with the wire version they were registered over. */
export class RowPushStore implements PushNotificationStore {
  constructor(private readonly rows: PushConfigRows) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    if (!config.id) config.id = randomUUID();
    await this.rows.save(scopeOf(context), taskId, config, context.requestedVersion);
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((stored) => stored.config);
  }

  async loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const scope = scopeOf(context);
    if (!(await this.rows.hasAny(scope, taskId))) return [];
    return this.rows.load(scope, taskId);
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    if (configId === undefined) throw invalidParam('id', 'is required: the push notification config to delete');
    await this.rows.delete(scopeOf(context), taskId, configId);
  }

  /** Records how the latest notification to a config of the caller's task went. */
  recordDelivery(taskId: string, context: ServerCallContext, configId: string, delivery: PushDelivery): Promise<void> {
    return this.rows.recordDelivery(scopeOf(context), taskId, configId, delivery);
  }

  /** How many configs were saved so far, anywhere (`PushConfigRows.saves`): a task found without any stays so until it moves. */
  get saves(): number {
    return this.rows.saves;
  }
}

/** Task reads and push configs over the rows, plus the lifecycle chores. */
export interface A2AStores {
  readonly tasks: TaskReads;
  readonly pushConfigs: RowPushStore;
  /** Marks tasks left `submitted`/`working` by a previous process as failed; resolves with how many. */
  failInterrupted(reason: string): Promise<number>;
  /** Deletes finished tasks (and their push configs) last updated before `olderThan`; resolves with how many. */
  purgeFinished(olderThan: Date): Promise<number>;
}

/**
 * The A2A stores over the node's task rows.
 * @example
 * const stores = createA2AStores({ rows: storage.taskRows, live: new LiveTasks({ rows: storage.taskRows.tasks }), clock });
 * await stores.failInterrupted('node restarted');
 */
export function createA2AStores(options: { rows: TaskRowStores; live: LiveTasks; clock: () => Date }): A2AStores {
  const { rows, live, clock } = options;
  return {
    tasks: new TaskReads(rows.tasks, live),
    pushConfigs: new RowPushStore(rows.pushConfigs),
    failInterrupted(reason) {
      live.forget();
      return rows.tasks.failInterrupted(reason, clock());
    },
    purgeFinished: (olderThan) => rows.tasks.purgeFinished(olderThan),
  };
}
