import type { CronJob } from './jobs';

/** One fire time of a cron job, as the queue hands it to a replica. */
export interface CronOccurrence {
  owner: string;
  name: string;
  /** The fire time (ISO), equal to the job's `nextRunAt` while it is current. */
  scheduledFor: string;
}

/**
 * The job queue: where cron fire times and background jobs wait until a
 * process takes them, the one path of the automator's scheduler and queue
 * on either database. On PostgreSQL (`store/postgres/jobQueue.ts`, pg-boss)
 * each entry is handed to one replica of many, a job queued on a replica
 * that dies is taken by another, and what one replica adds the others see
 * without a restart; on SQLite (`store/sqlite/jobQueue.ts`, a table) the
 * one process holding the file takes them, and they outlive its restarts.
 * Takers are woken by the queue when an entry comes due, not by polling.
 */
export interface JobQueue {
  /**
   * How long a background job queued here waits (milliseconds) before the
   * other replicas may take it: this replica goes first (0 with one process).
   */
  readonly handOffMs: number;
  /**
   * How often a taker asks for due work when nothing woke it
   * (milliseconds): a guard for a wake-up lost in a way the queue cannot
   * see, and the most an entry handed back by a replica that died after
   * taking it waits. Undefined when no wake-up can be lost (one process,
   * whose every entry arms its own timer): takers ask only when woken.
   */
  readonly idlePollMs?: number;
  /**
   * Calls `wake` whenever entries of `kind` may be due, instead of a poll
   * on a short timer: when one is queued due now (through any replica: a
   * notification on PostgreSQL), when the earliest waiting entry's time
   * comes (a timer the queue arms after each take and each entry queued),
   * and when notifications may have been missed (PostgreSQL's listening
   * connection came back). Returns the function that stops it.
   */
  onDue(kind: 'cron' | 'background', wake: () => void): () => void;
  /** Queues the job's fire at `scheduledFor`: one waiting entry per (job, time), however often it is queued. */
  scheduleCron(occurrence: CronOccurrence): Promise<void>;
  /**
   * Moves the job from the occurrence's time to `next` and queues the next
   * fire time, in one transaction: true for the one replica that did, false
   * when the job no longer waits for this time (another replica claimed it,
   * it was paused, removed or rescheduled).
   */
  claimCron(
    occurrence: CronOccurrence,
    next: Pick<CronJob, 'status' | 'nextRunAt'> & { lastRunAt: string },
  ): Promise<boolean>;
  /**
   * Takes up to `limit` cron fire times due now and hands each to `claim`
   * (which should claim the job and return quickly); resolves with how many
   * were taken. An entry whose claim throws goes back to the queue.
   */
  takeCron(limit: number, claim: (occurrence: CronOccurrence) => Promise<void>): Promise<number>;
  /**
   * Queues a background job (by its `bg_jobs` id) for the first replica
   * with a free slot, visible to them after `delayMs` (0 when unset).
   */
  enqueueBackground(id: string, delayMs?: number): Promise<void>;
  /** Takes up to `limit` waiting background jobs and hands each id to `claim`, as {@link takeCron} does. */
  takeBackground(limit: number, claim: (id: string) => Promise<void>): Promise<number>;
  /** Stops the queue's timers and maintenance; the database stays open. */
  close(): Promise<void>;
}
