import PgBoss from 'pg-boss';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { createDueAlarm } from '../dueAlarm';
import type { CronOccurrence, JobQueue } from '../jobQueue';
import { rows, transaction, type PgDatabase, type PgQueryable } from './database';
import type { PgListener } from './listener';

/**
 * pg-boss 10 is the queue (not graphile-worker, not pg-boss 11+): both later
 * majors require Node 22, the node supports Node 20; pg-boss 10 runs on the
 * node's own pool (no second pool, no second service) and its "short"
 * queue policy keeps one waiting entry per key, which is the (job, scheduled
 * time) key cron fire times need. Its own cron (minute granularity) is not
 * used: the node's schedules go down to a fraction of a second.
 */
const SCHEMA = 'pgboss';
const CRON_QUEUE = 'lango-cron';
const BACKGROUND_QUEUE = 'lango-background';

/**
 * A taken entry not completed within this (its replica died between taking
 * and claiming it) goes back to the queue for another replica; the claim
 * takes milliseconds, so this only bounds how long such a rare entry waits.
 */
const TAKEN_EXPIRY_SECONDS = 30;

const QUEUE_OPTIONS: PgBoss.Queue = {
  name: '',
  policy: 'short',
  expireInSeconds: TAKEN_EXPIRY_SECONDS,
  retryLimit: 100,
  retryDelay: 1,
};

/** pg-boss's connection seam over the node's pool or one client of a transaction. */
function adapter(db: PgQueryable): PgBoss.Db {
  return { executeSql: (text, values) => db.query(text, values) };
}

function bossOn(db: PgQueryable, options: { migrate: boolean; supervise: boolean }): PgBoss {
  return new PgBoss({
    db: adapter(db),
    schema: SCHEMA,
    migrate: options.migrate,
    supervise: options.supervise,
    schedule: false,
    maintenanceIntervalSeconds: TAKEN_EXPIRY_SECONDS,
  });
}

/**
 * The advisory lock the queue's migration runs under: pg-boss's own check
 * for an existing schema is not atomic with creating it, so replicas
 * starting together would both try to create it.
 */
const QUEUE_MIGRATION_LOCK = 0x6c716271; // 'lqbq'

/**
 * Creates or upgrades the queue's schema (`pgboss`) and creates its queues
 * (a queue that exists is left as is), replicas taking turns under an
 * advisory lock. Part of `lango migrate` and of every replica's start.
 */
export async function migrateJobQueue(db: PgDatabase): Promise<void> {
  const client = await db.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [QUEUE_MIGRATION_LOCK]);
    try {
      const boss = bossOn(client, { migrate: true, supervise: false });
      boss.on('error', () => {});
      await boss.start();
      try {
        for (const name of [CRON_QUEUE, BACKGROUND_QUEUE]) await boss.createQueue(name, { ...QUEUE_OPTIONS, name });
      } finally {
        await boss.stop({ close: false, graceful: false });
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [QUEUE_MIGRATION_LOCK]).catch(() => {});
    }
  } finally {
    client.release();
  }
}

const cronKey = (o: CronOccurrence) => JSON.stringify([o.owner, o.name, o.scheduledFor]);

/**
 * Told of every entry queued through any replica: `{"queue", "dueAt"}`
 * (milliseconds since the epoch), so each replica arms its timer for the
 * earliest due entry instead of asking the queue every half second.
 */
export const JOB_QUEUE_CHANNEL = 'lango_job_queue';

/** Polls when nothing woke the replica (the guard of {@link JobQueue.idlePollMs}). */
const IDLE_POLL_MS = 10_000;
/** The wait after a take found nothing although an entry looked due (another replica had it locked). */
const RETAKE_AFTER_MS = 50;
/**
 * The {@link JobQueue} on pg-boss over the node's pool. A cron fire time is
 * an entry due at that time, keyed by (job, time); a background job an entry
 * keyed by its id. Taking an entry marks it active; it completes once the
 * handler has claimed the job's row (`cron_jobs.next_run_at` moved,
 * `bg_jobs.status` running), so a replica dying in between leaves the entry
 * to expire back to the others, and the claim makes a second take harmless.
 */
export async function openPgJobQueue(options: {
  db: PgDatabase;
  /** This replica's listening connection, listening on {@link JOB_QUEUE_CHANNEL}. */
  listener: PgListener;
  logger: Logger;
  /** How long a background job queued here is left to this replica (1 s unless set). */
  handOffMs?: number;
}): Promise<JobQueue> {
  const { db, listener } = options;
  const log = options.logger.child({ component: 'job-queue' });
  await migrateJobQueue(db);
  const boss = bossOn(db, { migrate: false, supervise: true });
  boss.on('error', (err: Error) => log.warn('job queue maintenance failed', { error: errorMessage(err) }));
  await boss.start();

  const alarms = new Map([CRON_QUEUE, BACKGROUND_QUEUE].map((name) => [name, createDueAlarm()]));
  const alarmOf = (name: string) => alarms.get(name)!;
  const stopListening = [
    listener.on(JOB_QUEUE_CHANNEL, (payload) => {
      try {
        const { queue, dueAt } = JSON.parse(payload) as { queue?: unknown; dueAt?: unknown };
        if (typeof queue === 'string' && typeof dueAt === 'number') alarms.get(queue)?.setFor(dueAt);
      } catch {
        // Not ours: nothing to wake for.
      }
    }),
    // Entries queued while the connection was down were announced to nobody here.
    listener.onReconnect(() => alarms.forEach((alarm) => alarm.ring())),
  ];

  /** Queues an entry and, when it is new, tells every replica when it comes due. */
  async function send(via: PgQueryable, name: string, data: object, sendOptions: PgBoss.SendOptions) {
    const id = await boss.send(name, data, { ...sendOptions, db: adapter(via) });
    // An entry already waiting under the key was announced when it was queued.
    if (id === null) return undefined;
    const dueAt = sendOptions.startAfter instanceof Date ? sendOptions.startAfter.getTime() : Date.now();
    const announce = via.query('SELECT pg_notify($1, $2)', [JOB_QUEUE_CHANNEL, JSON.stringify({ queue: name, dueAt })]);
    // On the pool the entry is queued whatever happens to its announcement: the idle poll finds it. In a
    // transaction a failed statement fails the transaction anyway, and the caller hears that.
    if (via === db)
      await announce.catch((err: unknown) => log.warn('a queued job was not announced', { error: errorMessage(err) }));
    else await announce;
    return dueAt;
  }
  /**
   * This replica's own takers are woken by its own timer for an entry it
   * queued (committed), not by its own notification coming back: that
   * needs the listening connection to be listening already, and on a busy
   * machine it may not yet be (the entry then waited for the idle poll).
   */
  const wakeHere = (name: string, dueAt: number | undefined) => {
    if (dueAt !== undefined) alarmOf(name).setFor(dueAt);
  };
  /** Arms the queue's alarm for its earliest waiting entry (database time), after a take that left some. */
  async function armForNext(name: string, taken: number, limit: number) {
    if (taken === limit) return alarmOf(name).setFor(Date.now());
    const [next] = await rows<{ delay: number | null }>(
      db,
      `SELECT ceil(extract(epoch FROM min(start_after) - now()) * 1000)::float8 AS delay
       FROM ${SCHEMA}.job WHERE name = $1 AND state < 'active'`,
      [name],
    );
    if (next?.delay == null) return;
    alarmOf(name).setFor(Date.now() + Math.max(next.delay, taken === 0 ? RETAKE_AFTER_MS : 0));
  }
  async function take<T>(name: string, limit: number, handle: (data: T) => Promise<void>): Promise<number> {
    const jobs = await boss.fetch<T>(name, { batchSize: limit });
    for (const job of jobs) {
      try {
        await handle(job.data);
        await boss.complete(name, job.id);
      } catch (err) {
        log.warn('a queued job could not be claimed; it is retried', { queue: name, error: errorMessage(err) });
        await boss.fail(name, job.id).catch(() => {});
      }
    }
    await armForNext(name, jobs.length, limit);
    return jobs.length;
  }

  return {
    handOffMs: options.handOffMs ?? 1_000,
    idlePollMs: IDLE_POLL_MS,
    onDue(kind, wake) {
      const { wakers } = alarmOf(kind === 'cron' ? CRON_QUEUE : BACKGROUND_QUEUE);
      wakers.add(wake);
      return () => wakers.delete(wake);
    },
    async scheduleCron(occurrence) {
      const dueAt = await send(db, CRON_QUEUE, occurrence, {
        startAfter: new Date(occurrence.scheduledFor),
        singletonKey: cronKey(occurrence),
      });
      wakeHere(CRON_QUEUE, dueAt);
    },
    async claimCron(occurrence, next) {
      let dueAt: number | undefined;
      const claimed = await transaction(db, async (client) => {
        const moved = await client.query(
          `UPDATE cron_jobs SET status = $4, next_run_at = $5, last_run_at = $6
           WHERE owner = $1 AND name = $2 AND status = 'active' AND next_run_at = $3`,
          [occurrence.owner, occurrence.name, occurrence.scheduledFor, next.status, next.nextRunAt, next.lastRunAt],
        );
        if ((moved.rowCount ?? 0) === 0) return false;
        if (next.status === 'active' && next.nextRunAt) {
          const following = { owner: occurrence.owner, name: occurrence.name, scheduledFor: next.nextRunAt };
          // In the same transaction: a replica dying here leaves neither the move nor the next fire time.
          dueAt = await send(client, CRON_QUEUE, following, {
            startAfter: new Date(next.nextRunAt),
            singletonKey: cronKey(following),
          });
        }
        return true;
      });
      // Committed: the next fire time is there to take when this replica's alarm rings.
      if (claimed) wakeHere(CRON_QUEUE, dueAt);
      return claimed;
    },
    takeCron: (limit, handle) => take<CronOccurrence>(CRON_QUEUE, limit, handle),
    async enqueueBackground(id, delayMs = 0) {
      wakeHere(
        BACKGROUND_QUEUE,
        await send(db, BACKGROUND_QUEUE, { id }, { singletonKey: id, startAfter: new Date(Date.now() + delayMs) }),
      );
    },
    takeBackground: (limit, handle) => take<{ id: string }>(BACKGROUND_QUEUE, limit, ({ id }) => handle(id)),
    async close() {
      stopListening.forEach((stop) => stop());
      alarms.forEach((alarm) => alarm.stop());
      await boss.stop({ close: false, graceful: false });
    },
  };
}
