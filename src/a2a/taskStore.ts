import { randomUUID } from 'node:crypto';
import { Task, TaskState } from '@a2a-js/sdk';
import type { ListTasksRequest, ListTasksResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { resolveUserScope } from '@a2a-js/sdk/server';
import type {
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
  TaskStore,
} from '@a2a-js/sdk/server';
import { RESULT_ONLY_KEY } from './callFlags';
import { isRunning } from '../protocol/taskStates';
import { principalOf } from './auth';
import { isOwner } from '../principal';
import {
  InvalidPageTokenError,
  scopedKey,
  type PushConfigRows,
  type TaskReader,
  type TaskRows,
  type TaskRowStores,
  type TaskScope,
} from '../store/taskRows';

/**
 * The SDK's TaskStore and PushNotificationStore contracts over the node's
 * task and push-config rows (`store/taskRows.ts`, SQLite or PostgreSQL):
 * the caller's scope from the SDK's call context, the owner rule, and which
 * states of a running task are written.
 */

const DEFAULT_PAGE_SIZE = 50;

const scopeOf = (context: ServerCallContext): TaskScope => ({
  tenant: context.tenant ?? '',
  owner: resolveUserScope(context),
});
/** The caller as a reader of rows: the node's owner reads every caller's tasks (issue 11 A). */
const readerOf = (context: ServerCallContext): TaskReader => ({
  ...scopeOf(context),
  everyone: isOwner(principalOf(context.user)),
});

/** A task not settled yet (submitted or working), as last saved. */
interface RunningTask {
  task: Task;
  scope: TaskScope;
  /** The request whose result-only caller has seen none of this task yet: its snapshots stay unwritten. */
  heldFor?: ServerCallContext;
  /** The state of this task's row, if it has one. */
  onDisk?: TaskState;
  /** The snapshot is newer than the row. */
  dirty: boolean;
}

/**
 * Tasks in the task rows, scoped to the caller. A task is written before
 * anyone can see its state: each state change of a streamed or returned
 * task is written through, while repeated `working` saves (progress
 * updates, artifact chunks) stay in memory until the next state change
 * writes them. A task whose caller waits for the end of a blocking
 * `SendMessage` ({@link RESULT_ONLY_KEY}) is written once, when it settles:
 * nobody has seen it before then (a `ListTasks` writes it first). A crash
 * loses only states nobody saw, of tasks that restart marks failed anyway
 * (a result-only task leaves no row; its caller's connection is cut).
 *
 * A save resolves once the rows have committed it (group-committed with
 * the database's other writes): nothing is acknowledged before it is on
 * disk (the SDK awaits each save before it answers). Running tasks are kept
 * in memory, so the load that precedes each of their saves reads no row.
 */
export class RowTaskStore implements TaskStore {
  /** Tasks not settled yet, by scope and id. */
  private readonly running = new Map<string, RunningTask>();
  /** Tasks being created now, not saved yet: the SDK's load before their first save needs no query. */
  private readonly fresh = new Set<string>();

  constructor(private readonly rows: TaskRows) {}

  /** Notes a task id the executor is creating, so the load that precedes its first save skips the table. */
  expectNew(taskId: string, context: ServerCallContext): void {
    this.fresh.add(scopedKey(scopeOf(context), taskId));
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context);
    const cacheKey = scopedKey(scope, task.id);
    this.fresh.delete(cacheKey);
    const state = task.status?.state;
    if (!isRunning(state)) {
      this.running.delete(cacheKey);
      return this.rows.write([{ scope, task }]);
    }
    if (context.state.get(RESULT_ONLY_KEY) === true) {
      // The SDK never touches a saved task again (it loads a fresh one per event), so no copy is needed.
      this.hold(cacheKey, scope, task, context);
      return;
    }
    const previous = this.running.get(cacheKey);
    const progressOnly = state === TaskState.TASK_STATE_WORKING && previous?.onDisk === state;
    this.running.set(cacheKey, { task: structuredClone(task), scope, onDisk: state, dirty: progressOnly });
    if (progressOnly) return;
    return this.rows.write([{ scope, task }]);
  }

  /**
   * Holds the live task object of a direct result-only send (see
   * ResultOnlySend), which changes it in place as its events come: other
   * requests read copies of its latest state; it is written when it is
   * saved settled (or when a ListTasks asks first).
   */
  track(task: Task, context: ServerCallContext): void {
    const scope = scopeOf(context);
    const cacheKey = scopedKey(scope, task.id);
    this.fresh.delete(cacheKey);
    this.hold(cacheKey, scope, task, context);
  }

  /** Keeps a result-only caller's task in memory, unwritten: newer than its row (if it has one) until it settles. */
  private hold(cacheKey: string, scope: TaskScope, task: Task, context: ServerCallContext): void {
    const previous = this.running.get(cacheKey);
    if (previous?.task === task) previous.dirty = true;
    else this.running.set(cacheKey, { task, scope, heldFor: context, onDisk: previous?.onDisk, dirty: true });
  }

  /** Forgets the tasks held in memory: the rows are about to be changed behind the store (the restart/shutdown sweep). */
  forgetRunning(): void {
    this.running.clear();
    this.fresh.clear();
  }

  /** Writes every task whose latest state is only in memory, before a query reads the rows. */
  private async writeAll(): Promise<void> {
    const pending = [];
    for (const entry of this.running.values()) {
      if (!entry.dirty) continue;
      pending.push({ scope: entry.scope, task: entry.task });
      entry.dirty = false;
      entry.onDisk = entry.task.status?.state;
    }
    if (pending.length > 0) await this.rows.write(pending);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const reader = readerOf(context);
    const cacheKey = scopedKey(reader, taskId);
    const running = this.running.get(cacheKey);
    // The request that holds a task gets the task itself: it saves what it loads before anyone else reads
    // it. Everyone else gets a copy (the SDK trims history in place on what it reads).
    if (running) return running.heldFor === context ? running.task : structuredClone(running.task);
    if (this.fresh.has(cacheKey)) return undefined;
    // The owner sees every caller's task (issue 11 A); a caller's running task is seen once it is written.
    return (await this.rows.get(reader, taskId))?.task;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    await this.writeAll();
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    try {
      const page = await this.rows.list(readerOf(context), {
        contextId: params.contextId || undefined,
        state: params.status,
        updatedAfter: params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined,
        pageSize,
        pageToken: params.pageToken || undefined,
        includeArtifacts: params.includeArtifacts === true,
        includeHistory: params.historyLength === undefined || params.historyLength > 0,
      });
      return { ...page, pageSize };
    } catch (err) {
      if (err instanceof InvalidPageTokenError) throw new RequestMalformedError(err.message);
      throw err;
    }
  }
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
    if (configId === undefined) throw new RequestMalformedError('deleting a push notification config needs its id');
    await this.rows.delete(scopeOf(context), taskId, configId);
  }
}

/** The two SDK stores over the rows, plus the lifecycle chores. */
export interface A2AStores {
  readonly tasks: RowTaskStore;
  readonly pushConfigs: RowPushStore;
  /** Marks tasks left `submitted`/`working` by a previous process as failed; resolves with how many. */
  failInterrupted(reason: string): Promise<number>;
  /** Deletes finished tasks (and their push configs) last updated before `olderThan`; resolves with how many. */
  purgeFinished(olderThan: Date): Promise<number>;
}

/**
 * The A2A stores over the node's task rows.
 * @example
 * const stores = createA2AStores({ rows: storage.taskRows, clock: () => new Date() });
 * await stores.failInterrupted('node restarted');
 */
export function createA2AStores(options: { rows: TaskRowStores; clock: () => Date }): A2AStores {
  const { rows, clock } = options;
  const tasks = new RowTaskStore(rows.tasks);
  return {
    tasks,
    pushConfigs: new RowPushStore(rows.pushConfigs),
    failInterrupted(reason) {
      tasks.forgetRunning();
      return rows.tasks.failInterrupted(reason, clock());
    },
    purgeFinished: (olderThan) => rows.tasks.purgeFinished(olderThan),
  };
}
