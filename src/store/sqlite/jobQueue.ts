import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { createDueAlarm } from '../dueAlarm';
import type { CronOccurrence, JobQueue } from '../jobQueue';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
  // One waiting entry per (queue, key): a cron job's fire time, a background job's id.
  `CREATE TABLE job_queue (
     queue TEXT NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL, due_at INTEGER NOT NULL,
     taken INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (queue, key));
   CREATE INDEX job_queue_due ON job_queue (queue, taken, due_at);`,
];

type QueueName = 'cron' | 'background';

/** How long an entry whose claim threw waits before it is handed out again. */
const RETRY_AFTER_MS = 1_000;

const cronKey = (o: CronOccurrence) => JSON.stringify([o.owner, o.name, o.scheduledFor]);

/**
 * The {@link JobQueue} in SQLite: a table of entries, each due at a time
 * (milliseconds of the storage's clock), and one timer per queue for the
 * earliest (`dueAlarm.ts`), armed as entries are queued and after each
 * take; no poll. One process holds the file (the data folder's lock), so
 * an entry taken when that process died is simply waiting again when the
 * next one opens it. A taken entry is removed once its claim resolved (the
 * claim made the job's row say so: `cron_jobs.next_run_at` moved,
 * `bg_jobs.status` running), put back for a second try if it threw.
 * @example
 * const jobQueue = createSqliteJobQueue({ db, clock, logger });
 * await jobQueue.scheduleCron({ owner: 'owner', name: 'daily', scheduledFor: job.nextRunAt });
 */
export function createSqliteJobQueue(options: { db: SqliteDatabase; clock: () => Date; logger: Logger }): JobQueue {
  const { db } = options;
  const log = options.logger.child({ component: 'job-queue' });
  migrate(db, 'automator.jobQueue', STEPS);
  // Taken by a process that is gone: waiting again.
  db.prepare('UPDATE job_queue SET taken = 0 WHERE taken = 1').run();
  const now = () => options.clock().getTime();
  const alarms = { cron: createDueAlarm(now), background: createDueAlarm(now) };

  const queue = (name: QueueName, key: string, data: object, dueAt: number) => {
    const added = db
      .prepare('INSERT OR IGNORE INTO job_queue (queue, key, data, due_at) VALUES (?, ?, ?, ?)')
      .run(name, key, JSON.stringify(data), dueAt).changes;
    if (added > 0) alarms[name].setFor(dueAt);
  };
  const claimCron = db.transaction(
    (occurrence: CronOccurrence, next: { status: string; nextRunAt: string | null; lastRunAt: string }) => {
      const moved = db
        .prepare(
          `UPDATE cron_jobs SET status = ?, next_run_at = ?, last_run_at = ?
           WHERE owner = ? AND name = ? AND status = 'active' AND next_run_at = ?`,
        )
        .run(next.status, next.nextRunAt, next.lastRunAt, occurrence.owner, occurrence.name, occurrence.scheduledFor);
      if (moved.changes === 0) return false;
      if (next.status === 'active' && next.nextRunAt) {
        const following = { owner: occurrence.owner, name: occurrence.name, scheduledFor: next.nextRunAt };
        queue('cron', cronKey(following), following, Date.parse(next.nextRunAt));
      }
      return true;
    },
  );

  /** Arms the queue's alarm for its earliest waiting entry, after a take that left some (at once if it was full). */
  function armForNext(name: QueueName, taken: number, limit: number) {
    if (taken === limit) return alarms[name].setFor(now());
    const next = db.prepare('SELECT min(due_at) AS dueAt FROM job_queue WHERE queue = ? AND taken = 0').get(name) as {
      dueAt: number | null;
    };
    if (next.dueAt !== null) alarms[name].setFor(next.dueAt);
  }
  /** Marks up to `limit` due entries of a queue taken, oldest first, and returns them. */
  const takeDue = db.transaction((name: QueueName, limit: number) => {
    const due = db
      .prepare(
        `SELECT rowid AS id, key, data FROM job_queue WHERE queue = ? AND taken = 0 AND due_at <= ?
         ORDER BY due_at, rowid LIMIT ?`,
      )
      .all(name, now(), limit) as { id: number; key: string; data: string }[];
    const mark = db.prepare('UPDATE job_queue SET taken = 1 WHERE rowid = ?');
    for (const entry of due) mark.run(entry.id);
    return due;
  });
  async function take<T>(name: QueueName, limit: number, handle: (data: T) => Promise<void>): Promise<number> {
    const entries = takeDue(name, limit);
    for (const entry of entries) {
      try {
        await handle(JSON.parse(entry.data) as T);
        db.prepare('DELETE FROM job_queue WHERE rowid = ?').run(entry.id);
      } catch (err) {
        log.warn('a queued job could not be claimed; it is retried', { queue: name, error: errorMessage(err) });
        db.prepare('UPDATE job_queue SET taken = 0, due_at = ? WHERE rowid = ?').run(now() + RETRY_AFTER_MS, entry.id);
        alarms[name].setFor(now() + RETRY_AFTER_MS);
      }
    }
    armForNext(name, entries.length, limit);
    return entries.length;
  }

  return {
    handOffMs: 0,
    onDue(kind, wake) {
      const { wakers } = alarms[kind];
      wakers.add(wake);
      return () => wakers.delete(wake);
    },
    async scheduleCron(occurrence) {
      queue('cron', cronKey(occurrence), occurrence, Date.parse(occurrence.scheduledFor));
    },
    claimCron: async (occurrence, next) => claimCron(occurrence, next),
    takeCron: (limit, handle) => take<CronOccurrence>('cron', limit, handle),
    async enqueueBackground(id, delayMs = 0) {
      queue('background', id, { id }, now() + delayMs);
    },
    takeBackground: (limit, handle) => take<{ id: string }>('background', limit, ({ id }) => handle(id)),
    async close() {
      alarms.cron.stop();
      alarms.background.stop();
    },
  };
}
