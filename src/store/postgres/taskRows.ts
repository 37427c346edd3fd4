import { TaskState, taskStateToJSON } from '@a2a-js/sdk';
import type { Logger } from '../../log/logger';
import type { Redact } from '../../log/redactJson';
import { FINISHED_STATES, RUNNING_STATES } from '../../protocol/taskStates';
import {
  INTERRUPTED_REPLICA_KEY,
  scopedKey,
  taskColumnArrays,
  taskColumns,
  taskOfColumns,
  type StoredTask,
  type TaskColumns,
  type TaskRows,
} from '../taskRows';
import { REPLICA_LOST, type ReplicaScope } from './cluster';
import { rows, transaction, type PgDatabase, type PgSchema } from './database';
import type { PgGroupCommit, PgQueuedWrite } from './groupCommit';
import type { PgListener } from './listener';
import { claimTurn, createPgSendKeys } from './sendKeys';
import { listTasks } from '../sql/taskList';
import { createPushConfigRows, type PushConfigStore, type SaveTidings } from '../sql/pushConfigs';
import type { Sql } from '../sql/sql';
import { ENDED_TASK_EVENTS_KEPT_MS } from '../taskEvents';
import { lockTasks, lockTasksStatement, TASK_EVENTS_CHANNEL } from './taskEvents';

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
/** States a live task runs in, as stored: the ones a lost or restarted replica leaves behind. */
const IN_FLIGHT = RUNNING_STATES.map(taskStateToJSON);

type TaskRow = TaskColumns & { tenant: string; owner: string };
interface PgTaskRow extends Omit<TaskRow, 'status_last_updated' | 'generation'> {
  /** BIGINTs come back as text. */
  status_last_updated: string;
  generation: string;
  /** Read by `get` and `claim` only. */
  replica?: string | null;
}

/** The rows a sweep fails: their key and what the terminal event needs. */
interface FailedRow {
  tenant: string;
  owner: string;
  id: string;
  context_id: string;
  status: string;
  /** BIGINT as text. */
  generation: string;
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

/**
 * The status of a task failed for `reason` at `at`, as ProtoJSON: the row's
 * `status` column and the terminal event's status alike.
 */
function failedStatus(row: { id: string; context_id: string }, reason: string, at: Date, ranOn: string | null) {
  return {
    state: taskStateToJSON(TaskState.TASK_STATE_FAILED),
    timestamp: at.toISOString(),
    message: {
      messageId: `interrupted-${row.id}`,
      taskId: row.id,
      contextId: row.context_id,
      role: 'ROLE_AGENT',
      parts: [{ text: reason, mediaType: 'text/plain' }],
      ...(ranOn ? { metadata: { [INTERRUPTED_REPLICA_KEY]: ranOn } } : {}),
    },
  };
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
  const { db, sql, group, logger, redact, replica } = options;
  const queued = new Map<string, TaskRow>();
  /** Rows taken by a group that has not committed yet: reads still see them (the next group gathers meanwhile). */
  const committing = new Map<string, TaskRow>();
  const pushConfigs = createPushConfigRows({ sql: options.sql, logger, tidings: pushTidings(options.listener) });
  const sendKeys = createPgSendKeys({ db, group, replicaId: replica.replicaId, redact });

  const writeBatch = (batch: TaskRow[]): PgQueuedWrite => {
    return {
      statements: [
        lockTasksStatement(batch.map((row) => ({ tenant: row.tenant, owner: row.owner, taskId: row.id }))),
        {
          name: 'a2a_tasks_write',
          text: `INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts,
             history, metadata, generation, protocol_version, replica)
           SELECT t.*, '1.0', $11 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[],
             $7::text[], $8::text[], $9::text[], $10::text[], $13::bigint[])
             AS t(tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts, history, metadata,
               generation)
           ON CONFLICT (tenant, owner, id) DO UPDATE SET context_id = excluded.context_id,
             status_last_updated = excluded.status_last_updated, status_state = excluded.status_state,
             status = excluded.status, artifacts = excluded.artifacts, history = excluded.history,
             metadata = excluded.metadata, generation = excluded.generation, replica = excluded.replica
           WHERE a2a_tasks.status_state IS NULL OR NOT (a2a_tasks.status_state = ANY ($12::text[]))`,
          values: [...taskColumnArrays(batch), replica.replicaId, FINISHED, batch.map((row) => row.generation)],
        },
      ],
      committed([, written]) {
        const fenced = batch.length - (written.rowCount ?? 0);
        if (fenced > 0) logger.warn('late task writes refused: the tasks had already ended', { count: fenced });
      },
    };
  };
  const takeQueued = () => {
    const batch = [...queued.values()];
    for (const [key, row] of queued) committing.set(key, row);
    queued.clear();
    return writeBatch(batch);
  };

  const stored = (row: PgTaskRow): StoredTask => ({
    scope: { tenant: row.tenant, owner: row.owner },
    task: taskOfColumns(row),
    generation: Number(row.generation),
    ...(row.replica && IN_FLIGHT.includes(row.status_state ?? '') ? { replica: row.replica } : {}),
  });
  const columns =
    'tenant, owner, id, context_id, status_state, status, artifacts, history, metadata, status_last_updated, generation, replica';

  /**
   * Fails the rows `where` selects (running, and `$1`/`$2` as in the
   * cluster's conditions), one task per transaction: its advisory lock,
   * the fenced update, the terminal event after the task's last.
   */
  const failRows = async (where: string, reasonOf: (row: { replica: string | null }) => string, at: Date) => {
    const candidates = await rows<{ tenant: string; owner: string; id: string; replica: string | null }>(
      db,
      `SELECT tenant, owner, id, replica FROM a2a_tasks WHERE status_state = ANY ($3::text[]) AND ${where}`,
      [replica.replicaId, replica.leaseMs, IN_FLIGHT],
    );
    let failed = 0;
    for (const candidate of candidates) {
      const reason = reasonOf(candidate);
      const key = { tenant: candidate.tenant, owner: candidate.owner, taskId: candidate.id };
      const done = await transaction(db, async (client) => {
        await lockTasks(client, [key]);
        const [row] = await rows<FailedRow>(
          client,
          `SELECT tenant, owner, id, context_id, status, generation FROM a2a_tasks
           WHERE tenant = $4 AND owner = $5 AND id = $6 AND status_state = ANY ($3::text[]) AND ${where}
           FOR UPDATE`,
          [replica.replicaId, replica.leaseMs, IN_FLIGHT, key.tenant, key.owner, key.taskId],
        );
        if (!row) return false;
        const status = failedStatus(row, reason, at, candidate.replica);
        const event = { statusUpdate: { taskId: row.id, contextId: row.context_id, status } };
        // The failure is the task's next generation: after its last event, or its row's when its turn wrote none.
        await client.query(
          `WITH ended AS (
             INSERT INTO a2a_task_events (tenant, owner, task_id, seq, event, terminal, replica, at)
             SELECT $1, $2, $3, GREATEST(COALESCE(max(seq), 0), $6::bigint) + 1, $4, true, $5, now() FROM a2a_task_events
               WHERE tenant = $1 AND owner = $2 AND task_id = $3
             ON CONFLICT DO NOTHING
             RETURNING seq)
           UPDATE a2a_tasks SET status_state = $7, status = $8, status_last_updated = $9,
             generation = COALESCE((SELECT seq FROM ended), generation + 1)
           WHERE tenant = $1 AND owner = $2 AND id = $3`,
          [
            key.tenant,
            key.owner,
            key.taskId,
            JSON.stringify(event),
            replica.replicaId,
            row.generation,
            status.state,
            JSON.stringify(status),
            at.getTime(),
          ],
        );
        await client.query('SELECT pg_notify($1, $2)', [
          TASK_EVENTS_CHANNEL,
          JSON.stringify([[key.tenant, key.owner, key.taskId]]),
        ]);
        return true;
      });
      if (done) failed += 1;
    }
    return failed;
  };

  /** "The row's replica is gone": no heartbeat within the lease, or none recorded. Not this replica. */
  const lostElsewhere = `replica IS DISTINCT FROM $1 AND (replica IS NULL OR NOT EXISTS (SELECT 1 FROM cluster_replicas r
    WHERE r.replica_id = replica AND r.heartbeat_at > now() - make_interval(secs => $2::double precision / 1000)))`;

  const tasks: TaskRows = {
    claimSend: (send, taskId, row) => sendKeys.claim(send, taskId, row),
    write(rowsToWrite) {
      const written: Array<[string, TaskRow]> = [];
      for (const { scope, task, generation } of rowsToWrite) {
        const key = scopedKey(scope, task.id);
        const row = { ...scope, ...taskColumns(task, generation, redact) };
        queued.set(key, row);
        written.push([key, row]);
      }
      const settled = group.schedule(takeQueued);
      const forget = () => {
        for (const [key, row] of written) if (committing.get(key) === row) committing.delete(key);
      };
      settled.then(forget, forget);
      return settled;
    },
    async get(reader, id) {
      const pending = queued.get(scopedKey(reader, id)) ?? committing.get(scopedKey(reader, id));
      if (pending)
        return stored({
          ...pending,
          status_last_updated: '',
          generation: String(pending.generation),
          replica: replica.replicaId,
        });
      const [own] = await rows<PgTaskRow>(db, {
        name: 'a2a_tasks_get',
        text: `SELECT ${columns} FROM a2a_tasks WHERE tenant = $1 AND owner = $2 AND id = $3`,
        values: [reader.tenant, reader.owner, id],
      });
      if (own) return stored(own);
      if (!reader.everyone) return undefined;
      await group.flush();
      const [anyones] = await rows<PgTaskRow>(
        db,
        `SELECT ${columns} FROM a2a_tasks WHERE tenant = $1 AND id = $2 ORDER BY owner LIMIT 1`,
        [reader.tenant, id],
      );
      return anyones ? stored(anyones) : undefined;
    },
    async claim(scope, id, turn) {
      // This replica's own write of the task, not committed yet, would land after the claim: it goes first.
      const key = scopedKey(scope, id);
      if (queued.has(key) || committing.has(key)) await group.flush();
      const claim = await claimTurn(db, { scope, id, turn, replicaId: replica.replicaId, columns });
      return claim.won ? { won: true, claimed: stored(claim.row as PgTaskRow) } : claim;
    },
    async list(reader, query) {
      if (queued.size > 0 || committing.size > 0) await group.flush();
      return listTasks(sql, logger, reader, query);
    },
    async failInterrupted(reason, at) {
      // This replica's own running tasks (it is restarting or stopping) and any lost replica's.
      await group.flush();
      const count = await failRows(
        `(replica = $1 OR ${lostElsewhere})`,
        (row) => (row.replica === replica.replicaId ? reason : REPLICA_LOST),
        at,
      );
      if (count > 0) logger.warn('interrupted tasks marked failed', { count, reason });
      return count;
    },
    async countByState() {
      const counted = await rows<{ state: string; count: string }>(
        db,
        'SELECT status_state AS state, count(*) AS count FROM a2a_tasks GROUP BY status_state',
      );
      return Object.fromEntries(counted.map((row) => [row.state, Number(row.count)]));
    },
    async purgeFinished(olderThan) {
      await group.flush();
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
      // An ended task's row holds all its events told: they go long before the row, all but the terminal one (the fence).
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
      if (Number(pruned) > 0) logger.debug('events of ended tasks pruned', { count: Number(pruned) });
      await sendKeys.purgeExpired();
      const removed = Number(n);
      if (removed > 0) {
        await pushConfigs.reload();
        logger.info('finished tasks purged', { count: removed });
      }
      return removed;
    },
  };

  return {
    tasks,
    pushConfigs,
    async failLostReplicaTasks(at) {
      return failRows(lostElsewhere, () => REPLICA_LOST, at);
    },
  };
}
