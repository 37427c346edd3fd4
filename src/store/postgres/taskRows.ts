import { taskStateToJSON } from '@a2a-js/sdk';
import type { Logger } from '../../log/logger';
import type { Redact } from '../../log/redactJson';
import { FINISHED_STATES } from '../../protocol/taskStates';
import {
  scopedKey,
  TASK_ROW_COLUMNS,
  taskRowValues,
  taskColumns,
  taskOfColumns,
  type SendClaim,
  type SendKey,
  type StoredTask,
  type TaskClaim,
  type TaskColumns,
  type TaskPage,
  type TaskQuery,
  type TaskReader,
  type TaskRows,
  type TaskScope,
  type TaskTurnClaim,
} from '../taskRows';
import { REPLICA_LOST, type ReplicaScope } from './cluster';
import { rows, rowStatements, type PgDatabase, type PgSchema } from './database';
import type { PgGroupCommit, PgQueuedWrite } from './groupCommit';
import type { PgListener } from './listener';
import { claimTurn, createPgSendKeys, type PgSendKeys } from './sendKeys';
import { valuesList } from '../sql/dialect';
import { listTasks } from '../sql/taskList';
import { createPushConfigRows, type PushConfigStore, type SaveTidings } from '../sql/pushConfigs';
import type { Sql } from '../sql/sql';
import { ENDED_TASK_EVENTS_KEPT_MS } from '../taskEvents';
import { lockTasksStatement } from './taskEvents';
import { failRows, IN_FLIGHT, LOST_ELSEWHERE } from './taskSweep';

/**
 * A2A tasks and push configs on PostgreSQL: the SQLite rows (`../sqlite/taskRows.ts`)
 * plus the replica running each task. Ids compare byte-wise (`COLLATE "C"`),
 * as in SQLite, so a page cursor walks the same order on both databases.
 */
export const TASK_ROWS_SCHEMA: PgSchema = {
  store: 'a2a_tasks',
  steps: [
    `CREATE TABLE a2a_tasks (
       tenant TEXT COLLATE "C" NOT NULL, owner TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL,
       context_id TEXT NOT NULL, status_last_updated BIGINT NOT NULL DEFAULT 0,
       status_state TEXT, status TEXT, artifacts TEXT, history TEXT, metadata TEXT,
       protocol_version TEXT, replica TEXT,
       PRIMARY KEY (tenant, owner, id));
     CREATE INDEX a2a_tasks_by_updated ON a2a_tasks (tenant, owner, status_last_updated DESC, id DESC);
     CREATE INDEX a2a_tasks_by_tenant ON a2a_tasks (tenant, status_last_updated DESC, id DESC);
     CREATE INDEX a2a_tasks_by_state ON a2a_tasks (status_state, status_last_updated);
     CREATE TABLE a2a_push_configs (
       tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
       config_data TEXT, protocol_version TEXT,
       PRIMARY KEY (tenant, owner, task_id, config_id));`,
    // The message whose turn last claimed the task (TaskRows.claim).
    `ALTER TABLE a2a_tasks ADD COLUMN turn_message TEXT`,
    // Issue 27: the task's generation as written (its events carry theirs in `a2a_task_events.seq`).
    `ALTER TABLE a2a_tasks ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;`,
  ],
};

/** Told of each push config saved, so every replica knows the task has one (the running replica sends). */
export const PUSH_CONFIGS_CHANNEL = 'lango_push_configs';

/** Replicas tell each other of push configs saved, on {@link PUSH_CONFIGS_CHANNEL}. */
const pushTidings = (listener: PgListener): SaveTidings => ({
  async tell(sql, payload) {
    await sql.run('SELECT pg_notify(?, ?)', [PUSH_CONFIGS_CHANNEL, payload]);
  },
  onTold: (heard) => listener.on(PUSH_CONFIGS_CHANNEL, heard),
  onMissed: (lost) => listener.onReconnect(lost),
});

/** States that end a task, as stored: a row in one is never written over (fencing), and only these are purged. */
const FINISHED = FINISHED_STATES.map(taskStateToJSON);

type TaskRow = TaskColumns & { tenant: string; owner: string };
interface PgTaskRow extends Omit<TaskRow, 'status_last_updated' | 'generation'> {
  /** BIGINTs come back as text. */
  status_last_updated: string;
  generation: string;
  /** Read by `get` and `claim` only. */
  replica?: string | null;
}

/** Options of {@link createPgTaskRows}. */
export interface PgTaskRowsOptions {
  db: PgDatabase;
  /** The dialect seam on `db` (the push configs). */
  sql: Sql;
  group: PgGroupCommit;
  /** This replica's listening connection, listening on {@link PUSH_CONFIGS_CHANNEL}. */
  listener: PgListener;
  logger: Logger;
  /** This replica: recorded on every task row it writes; its lease decides when another replica is lost. */
  replica: ReplicaScope;
  /** Masks known secret values in every task row written (issue 11 G). */
  redact?: Redact;
}

/** The task and push-config rows on PostgreSQL, and the sweep of a lost replica's tasks. */
export interface PgTaskRows {
  tasks: TaskRows;
  pushConfigs: PushConfigStore;
  /**
   * Fails the running tasks of replicas silent past the lease as "replica
   * lost", each with its terminal event appended (followers on any replica
   * end their streams). Resolves with how many.
   */
  failLostReplicaTasks(at: Date): Promise<number>;
}

/** The columns a task row is read with. */
const COLUMNS =
  'tenant, owner, id, context_id, status_state, status, artifacts, history, metadata, status_last_updated, generation, replica';

/** A row read back as the stored task it holds, with the replica running it while it runs. */
const stored = (row: PgTaskRow): StoredTask => ({
  scope: { tenant: row.tenant, owner: row.owner },
  task: taskOfColumns(row),
  generation: Number(row.generation),
  ...(row.replica && IN_FLIGHT.includes(row.status_state ?? '') ? { replica: row.replica } : {}),
});

/** A task row's column types and names, as a batch binds them. */
const TASK_TYPES = TASK_ROW_COLUMNS.map(([, type]) => type);
const TASK_NAMES = TASK_ROW_COLUMNS.map(([name]) => name).join(', ');

/** The fenced upsert of task rows ($1 replica, $2 finished states), a statement per run of rows. */
const upsertRows = rowStatements(
  'a2a_tasks_write',
  (rows) => `INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state,
       status, artifacts, history, metadata, generation, protocol_version, replica)
     SELECT t.*, '1.0', $1 FROM ${valuesList('postgres', TASK_TYPES, rows, 3)}
       AS t(${TASK_NAMES})
     ON CONFLICT (tenant, owner, id) DO UPDATE SET context_id = excluded.context_id,
       status_last_updated = excluded.status_last_updated, status_state = excluded.status_state,
       status = excluded.status, artifacts = excluded.artifacts, history = excluded.history,
       metadata = excluded.metadata, generation = excluded.generation, replica = excluded.replica
     WHERE a2a_tasks.status_state IS NULL OR NOT (a2a_tasks.status_state = ANY ($2::text[]))`,
  taskRowValues,
);

/**
 * The group-commit write of `batch`: its tasks' advisory locks, then one
 * fenced upsert per run of rows (never over a finished task), the refused
 * ones logged once committed.
 */
function rowsWrite(batch: TaskRow[], replicaId: string, logger: Logger): PgQueuedWrite {
  return {
    statements: [
      lockTasksStatement(batch.map((row) => ({ tenant: row.tenant, owner: row.owner, taskId: row.id }))),
      ...upsertRows(batch, replicaId, FINISHED),
    ],
    committed([, ...written]) {
      const fenced = batch.length - written.reduce((sum, result) => sum + (result.rowCount ?? 0), 0);
      if (fenced > 0) logger.warn('late task writes refused: the tasks had already ended', { count: fenced });
    },
  };
}

/**
 * This replica's task rows not committed yet: queued for the next group, or
 * taken by a group still committing (the next one gathers meanwhile). Reads
 * here see them; claims and lists wait for them.
 */
class PendingTaskRows {
  private readonly queued = new Map<string, TaskRow>();
  /** Rows taken by a group that has not committed yet: reads still see them (the next group gathers meanwhile). */
  private readonly committing = new Map<string, TaskRow>();
  /** The one batch the group commit takes, however often it is scheduled before a group closes (it keys by identity). */
  private readonly takeQueued = () => {
    const batch = [...this.queued.values()];
    for (const [key, row] of this.queued) this.committing.set(key, row);
    this.queued.clear();
    return rowsWrite(batch, this.replicaId, this.logger);
  };

  constructor(
    private readonly group: PgGroupCommit,
    private readonly replicaId: string,
    private readonly logger: Logger,
  ) {}

  /** Queues `written` (by key) for the next group; resolves once it commits. */
  write(written: Array<[string, TaskRow]>): Promise<void> {
    for (const [key, row] of written) this.queued.set(key, row);
    const settled = this.group.schedule(this.takeQueued);
    const forget = () => {
      for (const [key, row] of written) if (this.committing.get(key) === row) this.committing.delete(key);
    };
    settled.then(forget, forget);
    return settled;
  }

  /** The latest row written here under `key` and not committed yet. */
  row(key: string): TaskRow | undefined {
    return this.queued.get(key) ?? this.committing.get(key);
  }

  /** Whether a row written here under `key` is not committed yet. */
  has(key: string): boolean {
    return this.queued.has(key) || this.committing.has(key);
  }

  /** Whether any row written here is not committed yet. */
  get any(): boolean {
    return this.queued.size > 0 || this.committing.size > 0;
  }
}

/** Deletes finished tasks last updated before `olderThan` with everything kept beside them; resolves with how many. */
async function deleteFinishedTasks(db: PgDatabase, olderThan: Date): Promise<number> {
  const [{ n }] = await rows<{ n: string }>(
    db,
    `WITH gone AS (DELETE FROM a2a_tasks WHERE status_state = ANY ($1::text[]) AND status_last_updated < $2
           RETURNING tenant, owner, id),
         push AS (DELETE FROM a2a_push_configs p USING gone
           WHERE p.tenant = gone.tenant AND p.owner = gone.owner AND p.task_id = gone.id),
         events AS (DELETE FROM a2a_task_events e USING gone
           WHERE e.tenant = gone.tenant AND e.owner = gone.owner AND e.task_id = gone.id),
         cancels AS (DELETE FROM a2a_task_cancels c USING gone
           WHERE c.tenant = gone.tenant AND c.owner = gone.owner AND c.task_id = gone.id),
         snapshots AS (DELETE FROM a2a_task_snapshots s USING gone
           WHERE s.tenant = gone.tenant AND s.owner = gone.owner AND s.task_id = gone.id)
         SELECT count(*) AS n FROM gone`,
    [FINISHED, olderThan.getTime()],
  );
  return Number(n);
}

/**
 * Prunes the events of tasks ended long enough ago: an ended task's row
 * holds all its events told, so they go long before the row, all but the
 * terminal one (the fence). Resolves with how many.
 */
async function pruneEndedTaskEvents(db: PgDatabase): Promise<number> {
  const [{ pruned }] = await rows<{ pruned: string }>(
    db,
    `WITH ended AS (SELECT tenant, owner, task_id, seq FROM a2a_task_events
             WHERE terminal AND at < now() - make_interval(secs => $1::double precision / 1000)),
         snapshots AS (DELETE FROM a2a_task_snapshots s USING ended
           WHERE s.tenant = ended.tenant AND s.owner = ended.owner AND s.task_id = ended.task_id),
         folded AS (DELETE FROM a2a_task_events e USING ended
           WHERE e.tenant = ended.tenant AND e.owner = ended.owner AND e.task_id = ended.task_id AND e.seq < ended.seq
           RETURNING 1)
         SELECT count(*) AS pruned FROM folded`,
    [ENDED_TASK_EVENTS_KEPT_MS],
  );
  return Number(pruned);
}

/** What {@link PostgresTaskRows} works with beside the options: the push configs and send keys made on `db`. */
interface PostgresTaskRowsParts extends PgTaskRowsOptions {
  pushConfigs: PushConfigStore;
  sendKeys: PgSendKeys;
}

/** The task rows on PostgreSQL, as {@link createPgTaskRows} describes them. */
class PostgresTaskRows implements TaskRows {
  private readonly db: PgDatabase;
  private readonly sql: Sql;
  private readonly group: PgGroupCommit;
  private readonly logger: Logger;
  private readonly redact: Redact | undefined;
  private readonly replica: ReplicaScope;
  private readonly pushConfigs: PushConfigStore;
  private readonly sendKeys: PgSendKeys;
  private readonly pending: PendingTaskRows;

  constructor(parts: PostgresTaskRowsParts) {
    ({ db: this.db, sql: this.sql, group: this.group, logger: this.logger, redact: this.redact } = parts);
    ({ replica: this.replica, pushConfigs: this.pushConfigs, sendKeys: this.sendKeys } = parts);
    this.pending = new PendingTaskRows(parts.group, parts.replica.replicaId, parts.logger);
  }

  claimSend(send: SendKey, taskId: string, row?: StoredTask): Promise<SendClaim> {
    return this.sendKeys.claim(send, taskId, row);
  }

  write(rowsToWrite: readonly StoredTask[]): Promise<void> {
    const written: Array<[string, TaskRow]> = [];
    for (const { scope, task, generation } of rowsToWrite) {
      written.push([scopedKey(scope, task.id), { ...scope, ...taskColumns(task, generation, this.redact) }]);
    }
    return this.pending.write(written);
  }

  async get(reader: TaskReader, id: string): Promise<StoredTask | undefined> {
    const pending = this.pending.row(scopedKey(reader, id));
    if (pending)
      return stored({
        ...pending,
        status_last_updated: '',
        generation: String(pending.generation),
        replica: this.replica.replicaId,
      });
    const [own] = await rows<PgTaskRow>(this.db, {
      name: 'a2a_tasks_get',
      text: `SELECT ${COLUMNS} FROM a2a_tasks WHERE tenant = $1 AND owner = $2 AND id = $3`,
      values: [reader.tenant, reader.owner, id],
    });
    if (own) return stored(own);
    if (!reader.everyone) return undefined;
    await this.group.flush();
    const [anyones] = await rows<PgTaskRow>(
      this.db,
      `SELECT ${COLUMNS} FROM a2a_tasks WHERE tenant = $1 AND id = $2 ORDER BY owner LIMIT 1`,
      [reader.tenant, id],
    );
    return anyones ? stored(anyones) : undefined;
  }

  async claim(scope: TaskScope, id: string, turn: TaskTurnClaim): Promise<TaskClaim> {
    // This replica's own write of the task, not committed yet, would land after the claim: it goes first.
    if (this.pending.has(scopedKey(scope, id))) await this.group.flush();
    const claim = await claimTurn(this.db, { scope, id, turn, replicaId: this.replica.replicaId, columns: COLUMNS });
    return claim.won ? { won: true, claimed: stored(claim.row as PgTaskRow) } : claim;
  }

  async list(reader: TaskReader, query: TaskQuery): Promise<TaskPage> {
    if (this.pending.any) await this.group.flush();
    return listTasks(this.sql, this.logger, reader, query);
  }

  async failInterrupted(reason: string, at: Date): Promise<number> {
    const { replicaId } = this.replica;
    // This replica's own running tasks (it is restarting or stopping) and any lost replica's.
    await this.group.flush();
    const count = await failRows(
      this.db,
      this.replica,
      `(replica = $1 OR ${LOST_ELSEWHERE})`,
      (row) => (row.replica === replicaId ? reason : REPLICA_LOST),
      at,
    );
    if (count > 0) this.logger.warn('interrupted tasks marked failed', { count, reason });
    return count;
  }

  async countByState(): Promise<Record<string, number>> {
    const counted = await rows<{ state: string; count: string }>(
      this.db,
      'SELECT status_state AS state, count(*) AS count FROM a2a_tasks GROUP BY status_state',
    );
    return Object.fromEntries(counted.map((row) => [row.state, Number(row.count)]));
  }

  async purgeFinished(olderThan: Date): Promise<number> {
    await this.group.flush();
    const removed = await deleteFinishedTasks(this.db, olderThan);
    const pruned = await pruneEndedTaskEvents(this.db);
    if (pruned > 0) this.logger.debug('events of ended tasks pruned', { count: pruned });
    await this.sendKeys.purgeExpired();
    if (removed > 0) {
      await this.pushConfigs.reload();
      this.logger.info('finished tasks purged', { count: removed });
    }
    return removed;
  }
}

/**
 * Creates the rows on `db` (schemas applied by the storage's migration).
 * Writes are group-committed and fenced: the upsert never replaces a row in
 * a finished state, so a late write from a replica that lost its lease (or
 * any late write) cannot undo a task's end. Each batch takes the tasks'
 * advisory locks first (as the event writer and the sweep do), so the sweep
 * and a late writer take turns instead of deadlocking. A claim is one
 * conditional update (its row lock orders racing claims: the second finds
 * the row working), fenced like the upsert: never a running or finished task.
 * @example
 * const { tasks } = createPgTaskRows({ db, group, listener, logger, replica: { replicaId: 'a', leaseMs: 15_000 } });
 * await tasks.write([{ scope: { tenant: '', owner: 'alice' }, task }]);
 */
export function createPgTaskRows(options: PgTaskRowsOptions): PgTaskRows {
  const { db, group, logger, redact, replica } = options;
  const pushConfigs = createPushConfigRows({ sql: options.sql, logger, tidings: pushTidings(options.listener) });
  const sendKeys = createPgSendKeys({ db, group, replicaId: replica.replicaId, redact });
  return {
    tasks: new PostgresTaskRows({ ...options, pushConfigs, sendKeys }),
    pushConfigs,
    async failLostReplicaTasks(at) {
      return failRows(db, replica, LOST_ELSEWHERE, () => REPLICA_LOST, at);
    },
  };
}
