import { TaskState, taskStateFromJSON, taskStateToJSON } from '@a2a-js/sdk';
import type { Logger } from '../../log/logger';
import type { Redact } from '../../log/redactJson';
import { FINISHED_STATES, RUNNING_STATES } from '../../protocol/taskStates';
import {
  CLAIMABLE_STATES,
  claimedStatus,
  scopedKey,
  sendTaskId,
  taskColumns,
  taskOfColumns,
  type StoredTask,
  type TaskColumns,
  type TaskRows,
  type TaskRowStores,
} from '../taskRows';
import { ENDED_TASK_EVENTS_KEPT_MS } from '../taskEvents';
import { migrate, type SqliteDatabase } from './database';
import type { GroupCommit } from './groupCommit';
import { createSqliteSql } from './sql';
import { listTasks } from '../sql/taskList';
import { createPushConfigRows } from '../sql/pushConfigs';

/**
 * A2A tasks and push configs in the node's SQLite file: the rows of the
 * SDK's database stores (`@a2a-js/sdk/server/database`: tenant + owner
 * scoping, ProtoJSON payloads, `(status_last_updated, id)` page cursors)
 * with prepared statements made once, task writes group-committed with the
 * database's other stores.
 */

const MIGRATIONS = [
  `CREATE TABLE a2a_tasks (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, id TEXT NOT NULL,
     context_id TEXT NOT NULL, status_last_updated INTEGER NOT NULL DEFAULT 0,
     status_state TEXT, status TEXT, artifacts TEXT, history TEXT, metadata TEXT,
     protocol_version TEXT,
     PRIMARY KEY (tenant, owner, id))`,
  `CREATE INDEX a2a_tasks_by_updated ON a2a_tasks (tenant, owner, status_last_updated DESC, id DESC)`,
  `CREATE INDEX a2a_tasks_by_state ON a2a_tasks (status_state, status_last_updated)`,
  `CREATE TABLE a2a_push_configs (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
     config_data TEXT, protocol_version TEXT,
     PRIMARY KEY (tenant, owner, task_id, config_id))`,
  // The message whose turn last claimed the task (TaskRows.claim).
  `ALTER TABLE a2a_tasks ADD COLUMN turn_message TEXT`,
  // Issue 27: the task's generation, and its events kept for streams resumed with Last-Event-ID (`taskEvents.ts`).
  `ALTER TABLE a2a_tasks ADD COLUMN generation INTEGER NOT NULL DEFAULT 0`,
  `CREATE TABLE a2a_task_events (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, seq INTEGER NOT NULL,
     event TEXT NOT NULL, terminal INTEGER NOT NULL, at INTEGER NOT NULL,
     PRIMARY KEY (tenant, owner, task_id, seq)) WITHOUT ROWID`,
  `CREATE UNIQUE INDEX a2a_task_events_one_end ON a2a_task_events (tenant, owner, task_id) WHERE terminal`,
  `CREATE INDEX a2a_task_events_ends ON a2a_task_events (at) WHERE terminal`,
  `CREATE TABLE a2a_task_snapshots (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, seq INTEGER NOT NULL, task TEXT NOT NULL,
     PRIMARY KEY (tenant, owner, task_id))`,
  // Issue 27: each send's idempotency key and the task it created, kept for `a2a.idempotencyWindow`.
  `CREATE TABLE a2a_send_keys (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, key TEXT NOT NULL, task_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
     PRIMARY KEY (tenant, owner, key)) WITHOUT ROWID`,
  `CREATE INDEX a2a_send_keys_by_expiry ON a2a_send_keys (expires_at)`,
  // The context of a task a send created: the restart sweep writes the task failed when its process ended first.
  `ALTER TABLE a2a_send_keys ADD COLUMN context_id TEXT`,
  // Sends whose task has no row yet (its id is the send's, see `sendTaskId`): appended, so recording one costs no
  // write to a randomly ordered index; deleted with the task's first row; the restart sweep fails those left.
  `CREATE TABLE a2a_sends_started (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, context_id TEXT NOT NULL);
   INSERT INTO a2a_sends_started SELECT k.tenant, k.owner, k.task_id, k.context_id FROM a2a_send_keys k
     WHERE k.context_id IS NOT NULL AND NOT EXISTS
       (SELECT 1 FROM a2a_tasks t WHERE t.tenant = k.tenant AND t.owner = k.owner AND t.id = k.task_id)`,
];

/** States that end a task, as stored; only these are purged. */
const FINISHED = FINISHED_STATES.map(taskStateToJSON);
/** States a live task is in, as stored; after the process ends nobody runs them. */
const IN_FLIGHT = RUNNING_STATES.map(taskStateToJSON);

type TaskRow = TaskColumns & { tenant: string; owner: string };
/** What is read of a recorded send key. */
interface SendKeyRow {
  task_id: string;
  expires_at: number;
}

/** A send that created its task, until the task's first row is written: its entry in `a2a_sends_started`. */
interface StartedSend {
  tenant: string;
  owner: string;
  taskId: string;
  /** None for a send claimed without its task's row (nothing to fail after a restart). */
  contextId: string | undefined;
  /** Its rowid once appended. */
  rowid?: number | bigint;
  /** Resolves once the commit that appended it has. */
  committed: Promise<void>;
}

/** Options of {@link createSqliteTaskRows}. */
export interface SqliteTaskRowsOptions {
  db: SqliteDatabase;
  /** The database's one group commit: task rows commit with the sessions' turns. */
  group: GroupCommit;
  logger: Logger;
  /** Masks known secret values in every task row written (issue 11 G). */
  redact?: Redact;
}

/**
 * The task and push-config rows on `db` (the schema applied once).
 * @example
 * const { tasks, pushConfigs } = createSqliteTaskRows({ db, group, logger });
 * await tasks.write([{ scope: { tenant: '', owner: 'alice' }, task }]);
 */
export function createSqliteTaskRows(options: SqliteTaskRowsOptions): TaskRowStores {
  const { db, group, logger, redact } = options;
  migrate(db, 'a2a', MIGRATIONS);

  const upsert = db.prepare(
    `INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts, history, metadata, generation, protocol_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '1.0')
     ON CONFLICT (tenant, owner, id) DO UPDATE SET context_id = excluded.context_id,
       status_last_updated = excluded.status_last_updated, status_state = excluded.status_state, status = excluded.status,
       artifacts = excluded.artifacts, history = excluded.history, metadata = excluded.metadata,
       generation = excluded.generation`,
  );
  const columns =
    'tenant, owner, id, context_id, status_state, status, artifacts, history, metadata, status_last_updated, generation';
  const select = db.prepare(`SELECT ${columns} FROM a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?`);
  const selectAnyOwner = db.prepare(`SELECT ${columns} FROM a2a_tasks WHERE tenant = ? AND id = ? LIMIT 1`);
  const claimable = CLAIMABLE_STATES.map(() => '?').join(',');
  const claim = db.prepare(
    `UPDATE a2a_tasks SET status_state = ?, status = ?, status_last_updated = ?, turn_message = ?
     WHERE tenant = ? AND owner = ? AND id = ? AND status_state IN (${claimable}) AND (? IS NULL OR generation = ?)
     RETURNING ${columns}`,
  );
  const selectHolder = db.prepare(
    `SELECT status_state, turn_message, generation FROM a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?`,
  );
  const selectInFlight = db.prepare(
    `SELECT tenant, owner, id, context_id FROM a2a_tasks WHERE status_state IN (${IN_FLIGHT.map(() => '?').join(',')})`,
  );
  const updateStatus = db.prepare(
    `UPDATE a2a_tasks SET status_state = ?, status = ?, status_last_updated = ? WHERE tenant = ? AND owner = ? AND id = ?`,
  );
  const countByState = db.prepare(
    'SELECT status_state AS state, COUNT(*) AS count FROM a2a_tasks GROUP BY status_state',
  );
  const finished = FINISHED.map(() => '?').join(',');
  const deleteFinishedPush = db.prepare(
    `DELETE FROM a2a_push_configs WHERE (tenant, owner, task_id) IN (SELECT tenant, owner, id FROM a2a_tasks
       WHERE status_state IN (${finished}) AND status_last_updated < ?)`,
  );
  const deleteFinished = db.prepare(
    `DELETE FROM a2a_tasks WHERE status_state IN (${finished}) AND status_last_updated < ?`,
  );
  const purged = `(tenant, owner, task_id) IN (SELECT tenant, owner, id FROM a2a_tasks
       WHERE status_state IN (${finished}) AND status_last_updated < ?)`;
  const deleteFinishedEvents = db.prepare(`DELETE FROM a2a_task_events WHERE ${purged}`);
  const deleteFinishedSnapshots = db.prepare(`DELETE FROM a2a_task_snapshots WHERE ${purged}`);
  // A purged task's keys go with it: the restart sweep must not take a key without its task for an unwritten one.
  const deleteFinishedKeys = db.prepare(`DELETE FROM a2a_send_keys WHERE ${purged}`);
  // An ended task's row holds all its events told: they go long before the row, all but the terminal one (the fence).
  const ended = `SELECT tenant, owner, task_id, seq FROM a2a_task_events WHERE terminal AND at < ?`;
  const pruneEndedEvents = db.prepare(
    `DELETE FROM a2a_task_events WHERE NOT terminal AND (tenant, owner, task_id) IN
       (SELECT tenant, owner, task_id FROM (${ended}))`,
  );
  const pruneEndedSnapshots = db.prepare(
    `DELETE FROM a2a_task_snapshots WHERE (tenant, owner, task_id) IN (SELECT tenant, owner, task_id FROM (${ended}))`,
  );
  const selectSendKey = db.prepare(
    'SELECT task_id, expires_at FROM a2a_send_keys WHERE tenant = ? AND owner = ? AND key = ?',
  );
  // A key that expired is taken over by the next send with it.
  const upsertSendKey = db.prepare(
    `INSERT INTO a2a_send_keys (tenant, owner, key, task_id, expires_at, context_id) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant, owner, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at,
       context_id = excluded.context_id`,
  );
  // Recorded unless a key not expired is: `changes` says which (an expired key is taken over).
  const deleteExpiredKeys = db.prepare('DELETE FROM a2a_send_keys WHERE expires_at < ?');
  const appendStarted = db.prepare(
    'INSERT INTO a2a_sends_started (tenant, owner, task_id, context_id) VALUES (?, ?, ?, ?)',
  );
  const deleteStarted = db.prepare('DELETE FROM a2a_sends_started WHERE rowid = ?');
  // A task a send created whose process ended before its first row: its entry names it, nothing else does.
  const selectUnwrittenSends = db.prepare(
    `SELECT DISTINCT s.tenant, s.owner, s.task_id AS id, s.context_id FROM a2a_sends_started s
     WHERE NOT EXISTS (SELECT 1 FROM a2a_tasks t WHERE t.tenant = s.tenant AND t.owner = s.owner AND t.id = s.task_id)`,
  );
  const clearStarted = db.prepare('DELETE FROM a2a_sends_started');
  const insertFailed = db.prepare(
    `INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, protocol_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, '1.0') ON CONFLICT DO NOTHING`,
  );
  const sql = createSqliteSql(db, group);
  const pushConfigs = createPushConfigRows({ sql, logger });
  /** Rows waiting for the next group commit, by scope and id (a later write replaces an earlier one). */
  const queued = new Map<string, TaskRow>();
  /**
   * Sends that created their task, by scope and task id, from their claim
   * until the task's first row is written: one process owns this database,
   * so a retry is told from these, the rows, and the keys of follow-ups.
   */
  const started = new Map<string, StartedSend>();
  /** Started sends waiting for the next group commit to append them. */
  let startsQueued: StartedSend[] = [];
  const writeQueued = () => {
    const rows = [...queued.values()];
    queued.clear();
    const starts = startsQueued;
    startsQueued = [];
    try {
      for (const start of starts) {
        if (start.contextId === undefined) continue;
        start.rowid = appendStarted.run(start.tenant, start.owner, start.taskId, start.contextId).lastInsertRowid;
      }
      // Bound by position: named parameters cost a property lookup each, on every row of every commit.
      for (const row of rows) {
        const key = scopedKey(row, row.id);
        const start = started.get(key);
        if (start) {
          if (start.rowid !== undefined) deleteStarted.run(start.rowid);
          started.delete(key);
        }
        upsert.run(
          row.tenant,
          row.owner,
          row.id,
          row.context_id,
          row.status_last_updated,
          row.status_state,
          row.status,
          row.artifacts,
          row.history,
          row.metadata,
          row.generation,
        );
      }
    } catch (err) {
      logger.error('task write failed', {
        tasks: rows.length,
        error: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  };
  const stored = (row: TaskRow): StoredTask => ({
    scope: { tenant: row.tenant, owner: row.owner },
    task: taskOfColumns(row),
    generation: row.generation,
  });

  const tasks: TaskRows = {
    async claimSend(send, taskId, row) {
      const { tenant, owner } = send.scope;
      // The first send of this key is found by the id it derived: this window's (`taskId`), or the last one's.
      for (const id of [taskId, sendTaskId(send, Date.now() - send.keptMs)]) {
        const first = started.get(scopedKey(send.scope, id));
        if (first) {
          // Answered once the first send's start has committed, after its caller heard it (and began its turn).
          await first.committed;
          return { taskId: id, created: false };
        }
        // Whether its row exists: the holder's three columns, not the task's history and artifacts.
        if (queued.has(scopedKey(send.scope, id)) || selectHolder.get(tenant, owner, id))
          return { taskId: id, created: false };
      }
      // A follow-up's key (recorded with its claim) may name a task too.
      const recorded = selectSendKey.get(tenant, owner, send.key) as SendKeyRow | undefined;
      if (recorded && recorded.expires_at >= Date.now()) return { taskId: recorded.task_id, created: false };
      // The new task is live in this process until its first row is written (one write fewer per send); should the
      // process end first, the restart sweep writes the task its start names, failed.
      const start: StartedSend = {
        tenant,
        owner,
        taskId,
        contextId: row?.task.contextId,
        committed: Promise.resolve(),
      };
      started.set(scopedKey(send.scope, taskId), start);
      startsQueued.push(start);
      start.committed = group.schedule(writeQueued);
      await start.committed;
      return { taskId, created: true };
    },
    write(rows) {
      for (const { scope, task, generation } of rows) {
        queued.set(scopedKey(scope, task.id), { ...scope, ...taskColumns(task, generation, redact) });
      }
      return group.schedule(writeQueued);
    },
    async get(reader, id) {
      // Written but not committed yet: the queued row is the latest.
      const pending = queued.get(scopedKey(reader, id));
      if (pending) return stored(pending);
      const own = select.get(reader.tenant, reader.owner, id) as TaskRow | undefined;
      if (own) return stored(own);
      if (!reader.everyone) return undefined;
      group.flush();
      const anyones = selectAnyOwner.get(reader.tenant, id) as TaskRow | undefined;
      return anyones ? stored(anyones) : undefined;
    },
    async claim(scope, id, turn) {
      // A write still waiting for its group commit would land after the claim: it goes first.
      if (queued.has(scopedKey(scope, id))) group.flush();
      const status = claimedStatus(turn.at);
      const { send } = turn;
      const expected = turn.generation ?? null;
      // The send's key refuses a retry; the claim and the key it records are one transaction.
      const claimed = db.transaction(() => {
        const recorded = send && (selectSendKey.get(send.scope.tenant, send.scope.owner, send.key) as SendKeyRow);
        if (recorded && recorded.expires_at >= Date.now()) return { sentAs: recorded.task_id };
        const row = claim.get(
          status.state,
          status.status,
          status.updated,
          turn.messageId ?? null,
          scope.tenant,
          scope.owner,
          id,
          ...CLAIMABLE_STATES,
          expected,
          expected,
        ) as TaskRow | undefined;
        if (row && send)
          upsertSendKey.run(send.scope.tenant, send.scope.owner, send.key, id, Date.now() + send.keptMs, null);
        return { row };
      })();
      if (claimed.row) return { won: true, claimed: stored(claimed.row) };
      const holder = selectHolder.get(scope.tenant, scope.owner, id) as
        { status_state: string | null; turn_message: string | null; generation: number } | undefined;
      return {
        won: false,
        state: holder?.status_state ? taskStateFromJSON(holder.status_state) : undefined,
        messageId: holder?.turn_message ?? undefined,
        ...(holder ? { generation: holder.generation } : {}),
        ...('sentAs' in claimed ? { sentAs: claimed.sentAs } : {}),
      };
    },
    async list(reader, query) {
      if (queued.size > 0) group.flush();
      return listTasks(sql, logger, reader, query);
    },
    async failInterrupted(reason, at) {
      // Rows still waiting for their group commit must be on disk before the sweep reads the table.
      group.flush();
      const rows = selectInFlight.all(...IN_FLIGHT) as {
        tenant: string;
        owner: string;
        id: string;
        context_id: string;
      }[];
      const unwritten = selectUnwrittenSends.all() as typeof rows;
      const failedStatus = (row: (typeof rows)[number]) => ({
        state: taskStateToJSON(TaskState.TASK_STATE_FAILED),
        timestamp: at.toISOString(),
        message: {
          messageId: `restart-${row.id}`,
          taskId: row.id,
          contextId: row.context_id,
          role: 'ROLE_AGENT',
          parts: [{ text: reason, mediaType: 'text/plain' }],
        },
      });
      db.transaction(() => {
        for (const row of rows) {
          const status = failedStatus(row);
          updateStatus.run(status.state, JSON.stringify(status), at.getTime(), row.tenant, row.owner, row.id);
        }
        for (const row of unwritten) {
          const status = failedStatus(row);
          insertFailed.run(
            row.tenant,
            row.owner,
            row.id,
            row.context_id,
            at.getTime(),
            status.state,
            JSON.stringify(status),
          );
        }
        // Every task a start names has its row now.
        clearStarted.run();
      })();
      const count = rows.length + unwritten.length;
      if (count > 0) logger.warn('tasks interrupted by a restart marked failed', { count });
      return count;
    },
    async countByState() {
      const counted = countByState.all() as { state: string; count: number }[];
      return Object.fromEntries(counted.map((row) => [row.state, row.count]));
    },
    async purgeFinished(olderThan) {
      group.flush();
      const cutoff = olderThan.getTime();
      const endedBefore = Date.now() - ENDED_TASK_EVENTS_KEPT_MS;
      const removed = db.transaction(() => {
        deleteFinishedPush.run(...FINISHED, cutoff);
        deleteFinishedEvents.run(...FINISHED, cutoff);
        deleteFinishedSnapshots.run(...FINISHED, cutoff);
        deleteFinishedKeys.run(...FINISHED, cutoff);
        pruneEndedEvents.run(endedBefore);
        pruneEndedSnapshots.run(endedBefore);
        deleteExpiredKeys.run(Date.now());
        return deleteFinished.run(...FINISHED, cutoff).changes;
      })();
      if (removed > 0) {
        await pushConfigs.reload();
        logger.info('finished tasks purged', { count: removed });
      }
      return removed;
    },
  };

  return { tasks, pushConfigs };
}
