import { taskStateToJSON } from '@a2a-js/sdk';
import { FINISHED_STATES, RUNNING_STATES } from '../../protocol/taskStates';
import { CLAIMABLE_STATES } from '../taskRows';
import type { SqliteDatabase, SqliteStatement } from './database';

/**
 * The schema of the A2A task rows in the node's SQLite file (tasks, push
 * configs, task events and snapshots, send keys, sends started) and the
 * statements on it, prepared once per database.
 */

/** The schema, step by step: applied once by `migrate` under the store name `a2a`. */
export const TASK_ROW_MIGRATIONS = [
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

/** `sql` prepared on `db`. */
const prepare = (db: SqliteDatabase, sql: string): SqliteStatement => db.prepare(sql);

/** States that end a task, as stored; only these are purged. */
export const FINISHED = FINISHED_STATES.map(taskStateToJSON);
/** States a live task is in, as stored; after the process ends nobody runs them. */
export const IN_FLIGHT = RUNNING_STATES.map(taskStateToJSON);

/** The statements on the task rows themselves: write, read, claim, sweep and count. */
function prepareRowStatements(db: SqliteDatabase) {
  const upsert = prepare(
    db,
    `INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts, history, metadata, generation, protocol_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '1.0')
     ON CONFLICT (tenant, owner, id) DO UPDATE SET context_id = excluded.context_id,
       status_last_updated = excluded.status_last_updated, status_state = excluded.status_state, status = excluded.status,
       artifacts = excluded.artifacts, history = excluded.history, metadata = excluded.metadata,
       generation = excluded.generation`,
  );
  const columns =
    'tenant, owner, id, context_id, status_state, status, artifacts, history, metadata, status_last_updated, generation';
  const select = prepare(db, `SELECT ${columns} FROM a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?`);
  const selectAnyOwner = prepare(db, `SELECT ${columns} FROM a2a_tasks WHERE tenant = ? AND id = ? LIMIT 1`);
  const claimable = CLAIMABLE_STATES.map(() => '?').join(',');
  const claim = prepare(
    db,
    `UPDATE a2a_tasks SET status_state = ?, status = ?, status_last_updated = ?, turn_message = ?
     WHERE tenant = ? AND owner = ? AND id = ? AND status_state IN (${claimable}) AND (? IS NULL OR generation = ?)
     RETURNING ${columns}`,
  );
  const selectHolder = prepare(
    db,
    `SELECT status_state, turn_message, generation FROM a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?`,
  );
  const selectInFlight = prepare(
    db,
    `SELECT tenant, owner, id, context_id FROM a2a_tasks WHERE status_state IN (${IN_FLIGHT.map(() => '?').join(',')})`,
  );
  const updateStatus = prepare(
    db,
    `UPDATE a2a_tasks SET status_state = ?, status = ?, status_last_updated = ? WHERE tenant = ? AND owner = ? AND id = ?`,
  );
  const countByState = prepare(
    db,
    'SELECT status_state AS state, COUNT(*) AS count FROM a2a_tasks GROUP BY status_state',
  );
  const insertFailed = prepare(
    db,
    `INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, protocol_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, '1.0') ON CONFLICT DO NOTHING`,
  );
  return {
    upsert,
    select,
    selectAnyOwner,
    claim,
    selectHolder,
    selectInFlight,
    updateStatus,
    countByState,
    insertFailed,
  };
}

/** The statements that purge finished tasks, everything kept beside them, and expired send keys. */
function preparePurgeStatements(db: SqliteDatabase) {
  const finished = FINISHED.map(() => '?').join(',');
  const deleteFinishedPush = prepare(
    db,
    `DELETE FROM a2a_push_configs WHERE (tenant, owner, task_id) IN (SELECT tenant, owner, id FROM a2a_tasks
       WHERE status_state IN (${finished}) AND status_last_updated < ?)`,
  );
  const deleteFinished = prepare(
    db,
    `DELETE FROM a2a_tasks WHERE status_state IN (${finished}) AND status_last_updated < ?`,
  );
  const purged = `(tenant, owner, task_id) IN (SELECT tenant, owner, id FROM a2a_tasks
       WHERE status_state IN (${finished}) AND status_last_updated < ?)`;
  const deleteFinishedEvents = prepare(db, `DELETE FROM a2a_task_events WHERE ${purged}`);
  const deleteFinishedSnapshots = prepare(db, `DELETE FROM a2a_task_snapshots WHERE ${purged}`);
  // A purged task's keys go with it: the restart sweep must not take a key without its task for an unwritten one.
  const deleteFinishedKeys = prepare(db, `DELETE FROM a2a_send_keys WHERE ${purged}`);
  // An ended task's row holds all its events told: they go long before the row, all but the terminal one (the fence).
  const ended = `SELECT tenant, owner, task_id, seq FROM a2a_task_events WHERE terminal AND at < ?`;
  const pruneEndedEvents = prepare(
    db,
    `DELETE FROM a2a_task_events WHERE NOT terminal AND (tenant, owner, task_id) IN
       (SELECT tenant, owner, task_id FROM (${ended}))`,
  );
  const pruneEndedSnapshots = prepare(
    db,
    `DELETE FROM a2a_task_snapshots WHERE (tenant, owner, task_id) IN (SELECT tenant, owner, task_id FROM (${ended}))`,
  );
  const deleteExpiredKeys = prepare(db, 'DELETE FROM a2a_send_keys WHERE expires_at < ?');
  return {
    deleteFinishedPush,
    deleteFinished,
    deleteFinishedEvents,
    deleteFinishedSnapshots,
    deleteFinishedKeys,
    pruneEndedEvents,
    pruneEndedSnapshots,
    deleteExpiredKeys,
  };
}

/** The statements on sends: their idempotency keys, and the sends started whose task has no row yet. */
function prepareSendStatements(db: SqliteDatabase) {
  const selectSendKey = prepare(
    db,
    'SELECT task_id, expires_at FROM a2a_send_keys WHERE tenant = ? AND owner = ? AND key = ?',
  );
  // What a send's key already names, in the order a claim asks (one statement: each costs its own call):
  // a task under this window's id, under the last window's, or a follow-up's key recorded and not expired.
  const selectSent = prepare(
    db,
    `SELECT 0 AS rank, id AS task_id FROM a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?
     UNION ALL SELECT 1, id FROM a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?
     UNION ALL SELECT 2, task_id FROM a2a_send_keys WHERE tenant = ? AND owner = ? AND key = ? AND expires_at >= ?
     ORDER BY rank LIMIT 1`,
  );
  // A key that expired is taken over by the next send with it.
  const upsertSendKey = prepare(
    db,
    `INSERT INTO a2a_send_keys (tenant, owner, key, task_id, expires_at, context_id) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant, owner, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at,
       context_id = excluded.context_id`,
  );
  const appendStarted = prepare(
    db,
    'INSERT INTO a2a_sends_started (tenant, owner, task_id, context_id) VALUES (?, ?, ?, ?)',
  );
  const deleteStarted = prepare(db, 'DELETE FROM a2a_sends_started WHERE rowid = ?');
  // A task a send created whose process ended before its first row: its entry names it, nothing else does.
  const selectUnwrittenSends = prepare(
    db,
    `SELECT DISTINCT s.tenant, s.owner, s.task_id AS id, s.context_id FROM a2a_sends_started s
     WHERE NOT EXISTS (SELECT 1 FROM a2a_tasks t WHERE t.tenant = s.tenant AND t.owner = s.owner AND t.id = s.task_id)`,
  );
  const clearStarted = prepare(db, 'DELETE FROM a2a_sends_started');
  return { selectSendKey, selectSent, upsertSendKey, appendStarted, deleteStarted, selectUnwrittenSends, clearStarted };
}

/** Every prepared statement of the task rows on `db`, made once. */
export function prepareTaskStatements(db: SqliteDatabase) {
  return { ...prepareRowStatements(db), ...preparePurgeStatements(db), ...prepareSendStatements(db) };
}

/** Every prepared statement of the task rows. */
export type TaskStatements = ReturnType<typeof prepareTaskStatements>;
