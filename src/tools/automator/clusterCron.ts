import type { TurnRunner } from '../../agent/turn';
import type { Principal } from '../../principal';
import type { CronOccurrence, JobQueue } from '../../store/jobQueue';
import type { CronJob, CronTrigger } from '../../store/jobs';
import {
  addCronJob,
  cronJobKey,
  requireCronJob,
  resumeCronJob,
  startCronRun,
  type CronSchedulerOptions,
} from './cronScheduler';
import { startQueuePoller, type QueuePoller } from './queuePoller';
import { RunningJobs } from './runningJobs';
import { parseSchedule, type Schedule } from './schedule';

/** Fire times taken from the queue per poll. */
const TAKEN_PER_POLL = 16;
/** A one-time job's fire time this far past when it is taken was missed (no replica was up), not just late. */
const MISSED_AFTER_MS = 60_000;

/**
 * Whether the fire time `scheduledFor`, taken at `now`, was missed rather
 * than merely late: a later fire time of the schedule has passed too (its
 * runs collapse into this one), or a one-time job's time is long past.
 */
export function wasMissed(schedule: Schedule, scheduledFor: string, now: Date): boolean {
  const due = new Date(scheduledFor);
  const following = schedule.next(due);
  if (following) return following.getTime() <= now.getTime();
  return now.getTime() - due.getTime() > MISSED_AFTER_MS;
}

/**
 * The cron scheduler of a replica among several on PostgreSQL: each fire
 * time of each job is an entry of the cluster's job queue, due at that
 * time, so exactly one replica takes it (whichever asks first when it
 * comes due: each replica is woken then by the queue, not by a short poll),
 * a job added, paused, resumed or removed through any replica is seen by
 * all, and a replica stopped or dead leaves its jobs to the others. Taking
 * a fire time claims it on the job's row (its `nextRunAt` moves on and the
 * next fire time is queued, in one transaction), and the run record is
 * unique per (job, scheduled time, trigger).
 *
 * Missed runs: the rule of the SQLite scheduler, cluster-wide. While no
 * replica is up, the job's one queued fire time waits; the first replica
 * to take it after the downtime runs the job ONCE, recorded with trigger
 * `catch-up` (a later fire time also passed, or a one-time job is more than
 * a minute late), and its next run is computed from the current time. A
 * fire time that arrives while the job's previous run on this replica is
 * still going is skipped.
 */
export class ClusterCronScheduler {
  private readonly runs = new RunningJobs();
  private runner: TurnRunner | undefined;
  private poller: QueuePoller | undefined;
  private stopWaking: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: CronSchedulerOptions & { queue: JobQueue }) {}

  /**
   * Fails this replica's runs left by its previous life, queues the current
   * fire time of every active job (a no-op for those already queued), then
   * takes due fire times from the queue.
   */
  async start(runner: TurnRunner): Promise<void> {
    if (this.runner || this.closed) return;
    this.runner = runner;
    const { store, queue, logger } = this.options;
    const interrupted = await store.failInterruptedRuns(this.now().toISOString());
    if (interrupted > 0) logger.warn('cron runs interrupted by a restart marked failed', { count: interrupted });
    for (const job of await store.all()) {
      if (job.status === 'active' && job.nextRunAt) await queue.scheduleCron(occurrenceOf(job, job.nextRunAt));
    }
    const poller = startQueuePoller({
      intervalMs: queue.idlePollMs,
      logger,
      poll: async () => {
        await queue.takeCron(TAKEN_PER_POLL, (occurrence) => this.take(occurrence));
      },
    });
    this.poller = poller;
    this.stopWaking = queue.onDue('cron', () => poller.wake());
  }

  /** Adds the principal's job and queues its first fire time (any replica may run it). */
  async add(principal: Principal, input: { name: string; schedule: string; prompt: string }): Promise<CronJob> {
    const job = await addCronJob(this.options.store, principal, input, this.now());
    await this.queueCurrent(job);
    return job;
  }

  /** Stops firing the principal's job until {@link resume}; its queued fire time is dropped when taken. */
  async pause(principal: Principal, name: string): Promise<CronJob> {
    const job = await this.require(principal, name);
    if (job.status === 'active')
      await this.options.store.update(principal, name, { status: 'paused', nextRunAt: null });
    return this.require(principal, name);
  }

  /** Resumes a paused job from the current time (runs missed while paused are skipped). */
  async resume(principal: Principal, name: string): Promise<CronJob> {
    const { job, resumed } = await resumeCronJob(this.options.store, principal, name, this.now());
    if (resumed) await this.queueCurrent(job);
    return job;
  }

  /** Removes the principal's job and its history, cancelling a run under way on this replica. */
  async remove(principal: Principal, name: string): Promise<void> {
    const job = await this.require(principal, name);
    this.runs.abort(cronJobKey(job), new Error('job removed'));
    await this.options.store.remove(principal, name);
  }

  /** Stops taking fire times, cancels runs under way and waits for them to be recorded. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWaking?.();
    await this.poller?.stop();
    await this.runs.stopAll(new Error('node shutting down'));
  }

  private now(): Date {
    return this.options.clock();
  }

  private require(principal: Principal, name: string): Promise<CronJob> {
    return requireCronJob(this.options.store, principal, name);
  }

  private async queueCurrent(job: CronJob): Promise<void> {
    if (job.status === 'active' && job.nextRunAt)
      await this.options.queue.scheduleCron(occurrenceOf(job, job.nextRunAt));
  }

  /** One fire time taken from the queue: claimed on the job's row, then run in the background. */
  private async take(occurrence: CronOccurrence): Promise<void> {
    const runner = this.runner;
    if (!runner || this.closed) throw new Error('the scheduler is closing');
    const principal = this.options.principals.byId(occurrence.owner);
    const job = await this.options.store.get(principal, occurrence.name);
    // Paused, removed or rescheduled since this fire time was queued: its current time (if any) is queued too.
    if (!job || job.status !== 'active' || job.nextRunAt !== occurrence.scheduledFor) return;
    const now = this.now();
    const schedule = parseSchedule(job.schedule, new Date(job.anchorAt));
    const next = schedule.next(now);
    const claimed = await this.options.queue.claimCron(occurrence, {
      status: next ? 'active' : 'done',
      nextRunAt: next?.toISOString() ?? null,
      lastRunAt: now.toISOString(),
    });
    if (!claimed) return;
    const trigger: CronTrigger = wasMissed(schedule, occurrence.scheduledFor, now) ? 'catch-up' : 'schedule';
    startCronRun(this.runs, this.options, {
      runner,
      principal,
      job,
      trigger,
      scheduledFor: occurrence.scheduledFor,
      startedAt: now,
    });
  }
}

function occurrenceOf(job: Pick<CronJob, 'owner' | 'name'>, scheduledFor: string): CronOccurrence {
  return { owner: job.owner, name: job.name, scheduledFor };
}
