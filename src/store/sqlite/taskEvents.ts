import type { Logger } from '../../log/logger';
import type { Redact } from '../../log/redactJson';
import * as events from '../taskEvents';
import type { SqliteDatabase } from './database';
import type { GroupCommit } from './groupCommit';

/**
 * The task event log of a single node on its SQLite file (issue 27): the
 * events of every task someone may watch, kept under their generations so
 * that a stream cut mid-answer resumes from its last event. The tables are
 * the task rows' (`taskRows.ts` migrations), written in the database's one
 * group commit; a follower is woken in this process once a batch holding
 * its task's events has committed. Cancels have no replica to reach: each
 * is told to the handlers at once.
 */

/** Events read per query by a follower. */
const PAGE = 500;

/** Options of {@link createSqliteTaskEventLog}. */
export interface SqliteTaskEventLogOptions {
  /** The database whose task rows hold the event tables (`createSqliteTaskRows` migrated them). */
  db: SqliteDatabase;
  group: GroupCommit;
  logger: Logger;
  /** Masks known secret values in every event written (issue 11 G), as the task rows do. */
  redact?: Redact;
}

/**
 * The task event log on `db`.
 * @example
 * const events = createSqliteTaskEventLog({ db, group, logger });
 * await events.append(key, { seq: 1, event, terminal: false });
 * for await (const record of events.follow(key, { after: 0 })) send(record.event);
 */
export function createSqliteTaskEventLog(options: SqliteTaskEventLogOptions): events.TaskEventLog {
  const { db, group, redact } = options;
  const log = options.logger.child({ component: 'task-events' });
  const followers = new events.TaskEventFollowers();
  const cancels = new events.CancelHandlers(log);
  let queue: events.QueuedEvent[] = [];
  const asText = events.eventText(redact);

  // One event per generation (the primary key: a second is ignored); nothing after a terminal event (the fence).
  const insert = db.prepare(
    `INSERT INTO a2a_task_events (tenant, owner, task_id, seq, event, terminal, at)
     SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM a2a_task_events
       WHERE tenant = ? AND owner = ? AND task_id = ? AND terminal)
     ON CONFLICT DO NOTHING`,
  );
  const upsertSnapshot = db.prepare(
    `INSERT INTO a2a_task_snapshots (tenant, owner, task_id, seq, task) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (tenant, owner, task_id) DO UPDATE SET seq = excluded.seq, task = excluded.task
       WHERE a2a_task_snapshots.seq < excluded.seq`,
  );
  const selectAfter = db.prepare(
    `SELECT seq, event, terminal FROM a2a_task_events
     WHERE tenant = ? AND owner = ? AND task_id = ? AND seq > ? ORDER BY seq LIMIT ${PAGE}`,
  );
  const selectSnapshot = db.prepare(
    'SELECT seq, task FROM a2a_task_snapshots WHERE tenant = ? AND owner = ? AND task_id = ?',
  );
  const deleteEvents = db.prepare('DELETE FROM a2a_task_events WHERE tenant = ? AND owner = ? AND task_id = ?');
  const deleteSnapshot = db.prepare('DELETE FROM a2a_task_snapshots WHERE tenant = ? AND owner = ? AND task_id = ?');

  /** The keys of the batch last written: woken once it has committed. */
  let written: events.TaskKey[] = [];
  const writeQueued = () => {
    const batch = queue;
    queue = [];
    // Wall-clock time, as the task rows' purge reads it: how long ago the task ended.
    const at = Date.now();
    for (const e of batch) {
      const { tenant, owner, taskId } = e.key;
      const stored =
        insert.run(tenant, owner, taskId, e.seq, e.event, e.terminal ? 1 : 0, at, tenant, owner, taskId).changes > 0;
      if (stored && e.snapshot !== null) upsertSnapshot.run(tenant, owner, taskId, e.seq, e.snapshot);
      else if (!stored) log.debug('task event not stored: its generation is taken or the task ended', { taskId });
    }
    for (const e of batch) written.push(e.key);
  };

  const read = async (key: events.TaskKey, after: number): Promise<events.TaskEventRecord[]> => {
    // Queued events must be on disk before a reader looks: it would otherwise miss them until the next wake.
    if (queue.some((e) => events.taskKeyText(e.key) === events.taskKeyText(key))) group.flush();
    return (
      selectAfter.all(key.tenant, key.owner, key.taskId, after) as { seq: number; event: string; terminal: number }[]
    ).map((row) => ({ seq: row.seq, event: JSON.parse(row.event) as unknown, terminal: row.terminal === 1 }));
  };

  return {
    append(key, record) {
      events.queueEvent(queue, key, record, asText);
      const committed = group.schedule(writeQueued);
      // Followers are woken by the batch that holds their task's events, once it has committed.
      return committed.then(() => {
        const keys = written;
        written = [];
        followers.wake(keys);
      });
    },
    read,
    async snapshot(key) {
      const found = selectSnapshot.get(key.tenant, key.owner, key.taskId) as { seq: number; task: string } | undefined;
      return found && { seq: found.seq, task: JSON.parse(found.task) as unknown };
    },
    follow: (key, { after, signal }) =>
      followers.follow(key, { after, signal, read: (last) => read(key, last), page: PAGE }),
    async requestCancel(key) {
      cancels.tell(key);
    },
    onCancel: (handler) => cancels.add(handler),
    async purge(keys) {
      group.flush();
      db.transaction(() => {
        for (const { tenant, owner, taskId } of keys) {
          deleteEvents.run(tenant, owner, taskId);
          deleteSnapshot.run(tenant, owner, taskId);
        }
      })();
    },
  };
}
