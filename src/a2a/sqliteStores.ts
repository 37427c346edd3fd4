import { randomUUID } from 'node:crypto';
import { Task, TaskPushNotificationConfig, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import type { ListTasksRequest, ListTasksResponse } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { resolveUserScope } from '@a2a-js/sdk/server';
import type {
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
  TaskStore,
} from '@a2a-js/sdk/server';
import type { SqliteDatabase } from '../store/sqlite/database';
import type { Logger } from '../log/logger';
import type { GroupCommit } from '../store/sqlite/groupCommit';
import { RESULT_ONLY_KEY } from './callFlags';
import { isRunning } from '../protocol/taskStates';
import { redactJsonText, type Redact } from '../log/redactJson';
import { principalOf } from './auth';
import { isOwner } from '../principal';

/**
 * The SDK's TaskStore and PushNotificationStore contracts over our
 * better-sqlite3 handle, with prepared statements made once. Same rows and
 * semantics as the SDK's kysely-based database stores (tenant + owner
 * scoping, ProtoJSON payloads, `(status_last_updated, id)` page cursors), but
 * without a query builder and a `prepare` on every call: the store is on the
 * hot path (the SDK loads and saves the task on every event).
 */

const DEFAULT_PAGE_SIZE = 50;
/** A list query: its SQL varies with the filters given, so one statement per shape is kept. */
type ListStatement = { get(...args: unknown[]): unknown; all(...args: unknown[]): unknown[] };
type Row = {
  id: string;
  context_id: string;
  status: string | null;
  artifacts: string | null;
  history: string | null;
  metadata: string | null;
  status_last_updated: number;
};

const scopeOf = (context: ServerCallContext) => ({ tenant: context.tenant ?? '', owner: resolveUserScope(context) });
const encode = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
const decode = (value: string | null) => (value ? JSON.parse(value) : undefined);
const lastUpdated = (timestamp: string | undefined) => {
  const parsed = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
};

/** A task not settled yet (submitted or working), as last saved. */
interface RunningTask {
  task: Task;
  scope: { tenant: string; owner: string };
  /** The request whose result-only caller has seen none of this task yet: its snapshots stay unwritten. */
  heldFor?: ServerCallContext;
  /** The state of this task's row, if it has one. */
  onDisk?: TaskState;
  /** The snapshot is newer than the row. */
  dirty: boolean;
}

/**
 * Tasks in `a2a_tasks`, scoped to the caller. A task is written before
 * anyone can see its state: each state change of a streamed or returned
 * task is written through, while repeated `working` saves (progress
 * updates, artifact chunks) stay in memory until the next state change
 * writes them. A task whose caller waits for the end of a blocking
 * `SendMessage` ({@link RESULT_ONLY_KEY}) is written once, when it settles:
 * nobody has seen it before then (a `ListTasks` writes it first). A crash
 * loses only states nobody saw, of tasks that restart marks failed anyway
 * (a result-only task leaves no row; its caller's connection is cut).
 *
 * Writes are group-committed with the database's other stores
 * (the database's one {@link GroupCommit}): a save queues its row and resolves once the
 * transaction holding it has committed. Nothing is acknowledged before it
 * is on disk (the SDK awaits each save before it answers), and under load
 * one commit carries many tasks. Running tasks are kept in memory, so the
 * load that precedes each of their saves reads no row.
 */
export class SqliteTaskStore implements TaskStore {
  /** Tasks not settled yet, by scope and id. */
  private readonly running = new Map<string, RunningTask>();
  /** Rows waiting for the next group commit, by scope and id (a later save replaces an earlier one). */
  private readonly queued = new Map<string, Record<string, unknown>>();
  /** Tasks being created now, not saved yet: the SDK's load before their first save needs no query. */
  private readonly fresh = new Set<string>();
  private readonly upsert;
  private readonly select;
  private readonly selectAnyOwner;
  private readonly listStatements = new Map<string, ListStatement>();

  constructor(
    private readonly db: SqliteDatabase,
    private readonly logger: Logger,
    private readonly group: GroupCommit,
    private readonly table = 'a2a_tasks',
    /** Masks known secret values in every row written (the node's redactor). */
    private readonly redact?: Redact,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO ${table} (tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts, history, metadata, protocol_version)
       VALUES (@tenant, @owner, @id, @context_id, @status_last_updated, @status_state, @status, @artifacts, @history, @metadata, '1.0')
       ON CONFLICT (tenant, owner, id) DO UPDATE SET context_id = excluded.context_id,
         status_last_updated = excluded.status_last_updated, status_state = excluded.status_state, status = excluded.status,
         artifacts = excluded.artifacts, history = excluded.history, metadata = excluded.metadata`,
    );
    this.select = db.prepare(
      `SELECT id, context_id, status, artifacts, history, metadata, status_last_updated FROM ${table}
       WHERE tenant = ? AND owner = ? AND id = ?`,
    );
    this.selectAnyOwner = db.prepare(
      `SELECT id, context_id, status, artifacts, history, metadata, status_last_updated FROM ${table}
       WHERE tenant = ? AND id = ? LIMIT 1`,
    );
  }

  /** Notes a task id the executor is creating, so the load that precedes its first save skips the table. */
  expectNew(taskId: string, context: ServerCallContext): void {
    const { tenant, owner } = scopeOf(context);
    this.fresh.add(key(tenant, owner, taskId));
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context);
    const cacheKey = key(scope.tenant, scope.owner, task.id);
    this.fresh.delete(cacheKey);
    const state = task.status?.state;
    if (!isRunning(state)) {
      this.running.delete(cacheKey);
      this.queue(cacheKey, scope, task);
      return this.group.schedule(this.writeQueued);
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
    this.queue(cacheKey, scope, task);
    return this.group.schedule(this.writeQueued);
  }

  /**
   * Holds the live task object of a direct result-only send (see
   * ResultOnlySend), which changes it in place as its events come: other
   * requests read copies of its latest state; it is written when it is
   * saved settled (or when a ListTasks asks first).
   */
  track(task: Task, context: ServerCallContext): void {
    const scope = scopeOf(context);
    const cacheKey = key(scope.tenant, scope.owner, task.id);
    this.fresh.delete(cacheKey);
    this.hold(cacheKey, scope, task, context);
  }

  /** Keeps a result-only caller's task in memory, unwritten: newer than its row (if it has one) until it settles. */
  private hold(cacheKey: string, scope: RunningTask['scope'], task: Task, context: ServerCallContext): void {
    const previous = this.running.get(cacheKey);
    if (previous?.task === task) previous.dirty = true;
    else this.running.set(cacheKey, { task, scope, heldFor: context, onDisk: previous?.onDisk, dirty: true });
  }

  /**
   * Writes what is queued and forgets the tasks held in memory: the table is
   * about to be changed behind the store (the restart/shutdown sweep).
   */
  flushAndForget(): void {
    this.group.flush();
    this.running.clear();
    this.fresh.clear();
  }

  private queue(cacheKey: string, scope: { tenant: string; owner: string }, task: Task): void {
    const payload = Task.toJSON(task) as Record<string, unknown>;
    this.queued.set(cacheKey, {
      ...scope,
      id: task.id,
      context_id: task.contextId || '',
      status_last_updated: lastUpdated(task.status?.timestamp),
      status_state: task.status ? taskStateToJSON(task.status.state) : null,
      // The one seam where a task becomes a row: nothing stored holds a secret value (issue 11 G).
      status: this.encodeRedacted(payload.status),
      artifacts: this.encodeRedacted(payload.artifacts),
      history: this.encodeRedacted(payload.history),
      metadata: this.encodeRedacted(payload.metadata),
    });
  }

  private encodeRedacted(value: unknown): string | null {
    const text = encode(value);
    return text === null || !this.redact ? text : redactJsonText(text, this.redact);
  }

  private readonly writeQueued = () => {
    const rows = [...this.queued.values()];
    this.queued.clear();
    try {
      for (const row of rows) this.upsert.run(row);
    } catch (err) {
      this.logger.error('task write failed', {
        tasks: rows.length,
        error: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  };

  /** Writes every task whose latest state is only in memory or queued, before a query reads the table. */
  private writeAll(): void {
    for (const [cacheKey, entry] of this.running) {
      if (!entry.dirty) continue;
      this.queue(cacheKey, entry.scope, entry.task);
      entry.dirty = false;
      entry.onDisk = entry.task.status?.state;
    }
    if (this.queued.size === 0) return;
    this.group.schedule(this.writeQueued).catch(() => undefined); // logged by writeQueued
    this.group.flush();
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const { tenant, owner } = scopeOf(context);
    const cacheKey = key(tenant, owner, taskId);
    const running = this.running.get(cacheKey);
    // The request that holds a task gets the task itself: it saves what it loads before anyone else reads
    // it. Everyone else gets a copy (the SDK trims history in place on what it reads).
    if (running) return running.heldFor === context ? running.task : structuredClone(running.task);
    // Saved but not committed yet (a settled task waits for the next group commit): the row is the latest.
    const queued = this.queued.get(cacheKey);
    if (queued) return fromRow(queued as unknown as Row);
    if (this.fresh.has(cacheKey)) return undefined;
    const row = this.select.get(tenant, owner, taskId) as Row | undefined;
    if (row) return fromRow(row);
    // The owner sees every caller's task (issue 11 A); a caller's running task is seen once it is written.
    const anyones = isOwner(principalOf(context.user))
      ? (this.selectAnyOwner.get(tenant, taskId) as Row | undefined)
      : undefined;
    return anyones ? fromRow(anyones) : undefined;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.writeAll();
    const { tenant, owner } = scopeOf(context);
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    // The owner lists every caller's tasks (issue 11 A); a caller only its own.
    const everyone = isOwner(principalOf(context.user));
    const where = everyone ? ['tenant = ?'] : ['tenant = ?', 'owner = ?'];
    const args: unknown[] = everyone ? [tenant] : [tenant, owner];
    if (params.contextId) {
      where.push('context_id = ?');
      args.push(params.contextId);
    }
    if (params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED) {
      where.push('status_state = ?');
      args.push(taskStateToJSON(params.status));
    }
    if (params.statusTimestampAfter) {
      where.push('status_last_updated > ?');
      args.push(Date.parse(params.statusTimestampAfter));
    }
    const filter = where.join(' AND ');
    const total = (
      this.statement(`SELECT count(*) AS n FROM ${this.table} WHERE ${filter}`).get(...args) as { n: number }
    ).n;

    const pageWhere = [...where];
    const pageArgs = [...args];
    if (params.pageToken) {
      const cursor = decodePageToken(params.pageToken);
      pageWhere.push('(status_last_updated < ? OR (status_last_updated = ? AND id < ?))');
      pageArgs.push(cursor.updated, cursor.updated, cursor.id);
    }
    const columns = [
      'id',
      'context_id',
      'status',
      'metadata',
      'status_last_updated',
      params.includeArtifacts ? 'artifacts' : 'NULL AS artifacts',
      params.historyLength !== undefined && params.historyLength <= 0 ? 'NULL AS history' : 'history',
    ].join(', ');
    const rows = this.statement(
      `SELECT ${columns} FROM ${this.table} WHERE ${pageWhere.join(' AND ')} ORDER BY status_last_updated DESC, id DESC LIMIT ?`,
    ).all(...pageArgs, pageSize + 1) as Row[];
    const page = rows.slice(0, pageSize);
    const tasks: Task[] = [];
    for (const row of page) {
      try {
        tasks.push(fromRow(row));
      } catch (err) {
        this.logger.warn('unreadable task skipped', {
          taskId: row.id,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    const last = page.at(-1);
    return {
      tasks,
      nextPageToken: rows.length > pageSize && last ? encodePageToken(last.status_last_updated, last.id) : '',
      pageSize,
      totalSize: total,
    };
  }

  private statement(sql: string): ListStatement {
    let statement = this.listStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare<unknown[]>(sql);
      this.listStatements.set(sql, statement);
    }
    return statement;
  }
}

function fromRow(row: Row): Task {
  return Task.fromJSON({
    id: row.id,
    contextId: row.context_id,
    status: decode(row.status),
    artifacts: decode(row.artifacts),
    history: decode(row.history),
    metadata: decode(row.metadata),
  });
}

/** The SDK's cursor format: base64 of `<ISO timestamp or ''>|<id>`. */
function encodePageToken(updated: number, id: string): string {
  return Buffer.from(`${updated === 0 ? '' : new Date(updated).toISOString()}|${id}`).toString('base64');
}

function decodePageToken(token: string): { updated: number; id: string } {
  const [timestamp, ...idParts] = Buffer.from(token, 'base64').toString('utf-8').split('|');
  if (idParts.length === 0) throw new RequestMalformedError('pageToken is not a page token from this server');
  return { updated: lastUpdated(timestamp), id: idParts.join('|') };
}

/**
 * Push configs in `a2a_push_configs`. Which tasks have any config is kept in
 * memory, so the check the SDK makes on every event of every task costs no
 * query for the (usual) task without webhooks.
 */
export class SqlitePushStore implements PushNotificationStore {
  private readonly withConfigs = new Set<string>();
  private readonly upsert;
  private readonly select;
  private readonly remove;

  constructor(
    db: SqliteDatabase,
    private readonly logger: Logger,
    table = 'a2a_push_configs',
  ) {
    for (const row of db.prepare(`SELECT DISTINCT tenant, owner, task_id FROM ${table}`).all() as {
      tenant: string;
      owner: string;
      task_id: string;
    }[]) {
      this.withConfigs.add(key(row.tenant, row.owner, row.task_id));
    }
    this.upsert = db.prepare(
      `INSERT INTO ${table} (tenant, owner, task_id, config_id, config_data, protocol_version) VALUES (?, ?, ?, ?, ?, '1.0')
       ON CONFLICT (tenant, owner, task_id, config_id) DO UPDATE SET config_data = excluded.config_data`,
    );
    this.select = db.prepare(
      `SELECT config_id, config_data FROM ${table} WHERE tenant = ? AND owner = ? AND task_id = ?`,
    );
    this.remove = db.prepare(`DELETE FROM ${table} WHERE tenant = ? AND owner = ? AND task_id = ? AND config_id = ?`);
  }

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    if (!config.id) config.id = randomUUID();
    const { tenant, owner } = scopeOf(context);
    const payload = TaskPushNotificationConfig.toJSON(config) as Record<string, unknown>;
    delete payload.tenant;
    delete payload.id;
    delete payload.taskId;
    this.upsert.run(
      tenant,
      owner,
      taskId,
      config.id,
      JSON.stringify({ ...payload, wireVersion: context.requestedVersion }),
    );
    this.withConfigs.add(key(tenant, owner, taskId));
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((stored) => stored.config);
  }

  async loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const { tenant, owner } = scopeOf(context);
    if (!this.withConfigs.has(key(tenant, owner, taskId))) return [];
    const rows = this.select.all(tenant, owner, taskId) as { config_id: string; config_data: string | null }[];
    const stored: StoredPushNotificationConfig[] = [];
    for (const row of rows) {
      try {
        const payload = JSON.parse(row.config_data || '{}') as Record<string, unknown>;
        stored.push({
          config: TaskPushNotificationConfig.fromJSON({ ...payload, tenant, id: row.config_id, taskId }),
          wireVersion: String(payload.wireVersion || '0.3'),
        });
      } catch (err) {
        this.logger.warn('unreadable push config skipped', { taskId, configId: row.config_id, error: String(err) });
      }
    }
    return stored;
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    if (configId === undefined) throw new RequestMalformedError('deleting a push notification config needs its id');
    const { tenant, owner } = scopeOf(context);
    this.remove.run(tenant, owner, taskId, configId);
  }
}

// Length-prefixed, so no choice of tenant, owner and id can make two scopes share a key.
const key = (tenant: string, owner: string, taskId: string) =>
  `${tenant.length}:${tenant}${owner.length}:${owner}${taskId}`;
