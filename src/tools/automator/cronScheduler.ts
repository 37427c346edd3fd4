import type { TurnRunner } from '../../agent/turn';
import { errorMessage, InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { Principal, PrincipalDirectory } from '../../principal';
import type { CronOccurrence, JobQueue } from '../../store/jobQueue';
import type { CronJob, CronStore, CronTrigger } from '../../store/jobs';
import { startQueuePoller, type QueuePoller } from './queuePoller';
import { runPrompt } from './runPrompt';
import { RunningJobs } from './runningJobs';
import { parseSchedule, type Schedule } from './schedule';

/** Fire times taken from the queue per take. */
const TAKEN_PER_POLL = 16;
/** A one-time job's fire time this far past when it is taken was missed (nothing ran jobs), not just late. */
const MISSED_AFTER_MS = 60_000;
const JOB_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;

/** What the scheduler needs; one named options object. */
export interface CronSchedulerOptions {
  store: CronStore;
  /** Where fire times wait until taken (`Stores.jobQueue`). */
  queue: JobQueue;
  /** Who a stored job runs as: the principal that created it. */
  principals: PrincipalDirectory;
  clock: () => Date;
  logger: Logger;
}

/** A job's key among every principal's jobs (names are unique within one principal's). */
const cronJobKey = (job: Pick<CronJob, 'owner' | 'name'>) => `${job.owner}\u0000${job.name}`;

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
 * Fires persisted cron jobs through the agent tree, each as the principal
 * that created it, one session per job (`cron:<name>` within that
 * principal's conversations), on either database: each fire time of each
 * job is an entry of the job queue (`Stores.jobQueue`), due at that time,
 * and the process is woken by the queue when it comes due (no poll). With
 * replicas on PostgreSQL exactly one replica takes it, a job added, paused,
 * resumed or removed through any replica is seen by all, and a replica
 * stopped or dead leaves its jobs to the others. Taking a fire time claims
 * it on the job's row (its `nextRunAt` moves on and the next fire time is
 * queued, in one transaction), and the run record is unique per (job,
 * scheduled time, trigger). The store is the source of truth: a fire time
 * of a job paused, removed or rescheduled since it was queued is dropped
 * when taken.
 *
 * Missed runs (documented rule): while no process runs jobs, the job's one
 * queued fire time waits; the first to take it afterwards runs the job
 * ONCE, recorded with trigger `catch-up` (a later fire time also passed, or
 * a one-time job is more than a minute late), however many times it was
 * missed, and its next run is computed from the current time. Runs left
 * `running` by a dead process are marked failed ("node restarted"). Times
 * missed while a job was paused are skipped: `cron_resume` schedules from
 * the current time. A fire time that arrives while the job's previous run
 * in this process is still going is skipped.
 */
export class CronScheduler {
  private readonly runs = new RunningJobs();
  private runner: TurnRunner | undefined;
  private poller: QueuePoller | undefined;
  private stopWaking: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: CronSchedulerOptions) {}

  /**
   * Fails this process's runs left by its previous life, queues the current
   * fire time of every active job (a no-op for those already queued), then
   * takes due fire times from the queue; jobs run through `runner`.
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

  /**
   * Adds the principal's job and queues its first fire time (any replica may
   * run it; a process that runs no jobs leaves it to the one that does).
   * @throws InputError for a bad name, a duplicate or a bad schedule.
   */
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

  /** Removes the principal's job and its history, cancelling a run under way in this process. */
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

/**
 * Validates and stores the principal's new job, its first fire time
 * computed from `now`; the caller queues it.
 * @throws InputError for a bad name, a duplicate or a bad schedule.
 */
async function addCronJob(
  store: CronStore,
  principal: Principal,
  input: { name: string; schedule: string; prompt: string },
  now: Date,
): Promise<CronJob> {
  if (!JOB_NAME.test(input.name)) {
    throw new InputError(`invalid job name "${input.name}": letters, digits, _ . and - only, at most 64`);
  }
  const schedule = parseSchedule(input.schedule, now);
  const next = schedule.next(now);
  if (!next) throw new InputError(`invalid schedule "${input.schedule}": that time has already passed`);
  const job: CronJob = {
    owner: principal.id,
    name: input.name,
    kind: schedule.kind,
    schedule: schedule.text,
    prompt: input.prompt,
    status: 'active',
    anchorAt: now.toISOString(),
    nextRunAt: next.toISOString(),
    lastRunAt: null,
    createdAt: now.toISOString(),
  };
  const { owner: _owner, ...row } = job;
  if (!(await store.insert(principal, row))) throw new InputError(`a cron job named "${input.name}" already exists`);
  return job;
}

/** A job the principal has. @throws InputError when there is none. */
async function requireCronJob(store: CronStore, principal: Principal, name: string): Promise<CronJob> {
  const job = await store.get(principal, name);
  if (!job) throw new InputError(`no cron job named "${name}"`);
  return job;
}

/**
 * Resumes the principal's paused job from `now` (runs missed while paused
 * are skipped): active again with its next fire time, or done when the
 * schedule has none left. `resumed` is false for a job that was not paused
 * (returned as it is); the caller queues a resumed job.
 */
async function resumeCronJob(
  store: CronStore,
  principal: Principal,
  name: string,
  now: Date,
): Promise<{ job: CronJob; resumed: boolean }> {
  const job = await requireCronJob(store, principal, name);
  if (job.status !== 'paused') return { job, resumed: false };
  const next = parseSchedule(job.schedule, new Date(job.anchorAt)).next(now);
  await store.update(principal, name, { status: next ? 'active' : 'done', nextRunAt: next?.toISOString() ?? null });
  return { job: await requireCronJob(store, principal, name), resumed: true };
}

/**
 * Starts one run of a job among `runs` ({@link runCronJob}), unless the
 * job's previous run is still going: that fire time is skipped.
 */
function startCronRun(
  runs: RunningJobs,
  options: { store: CronStore; logger: Logger; clock: () => Date },
  run: Omit<Parameters<typeof runCronJob>[0], 'store' | 'logger' | 'clock' | 'signal'>,
): void {
  const key = cronJobKey(run.job);
  if (runs.has(key)) {
    options.logger.warn('cron run skipped: the previous run is still going', { job: run.job.name });
    return;
  }
  runs.start(key, (signal) => runCronJob({ ...options, ...run, signal }));
}

/**
 * One run of a job for its fire time `scheduledFor`: recorded first (a run
 * already recorded for that time and trigger was another replica's, and
 * this one does not run), then the prompt, then its outcome. Never throws.
 */
async function runCronJob(run: {
  store: CronStore;
  logger: Logger;
  clock: () => Date;
  runner: TurnRunner;
  principal: Principal;
  job: CronJob;
  trigger: CronTrigger;
  scheduledFor: string;
  startedAt: Date;
  signal: AbortSignal;
}): Promise<void> {
  const { store, logger, job, trigger } = run;
  try {
    const runId = await store.startRun(run.principal, {
      jobName: job.name,
      trigger,
      scheduledFor: run.scheduledFor,
      startedAt: run.startedAt.toISOString(),
    });
    if (runId === undefined) {
      logger.info('cron run skipped: another replica runs it', { job: job.name, trigger });
      return;
    }
    const outcome = await runPrompt(run.runner, {
      principal: run.principal,
      sessionId: `cron:${job.name}`,
      text: job.prompt,
      signal: run.signal,
    });
    await store.finishRun(runId, {
      status: outcome.status,
      result: outcome.text,
      author: outcome.author,
      finishedAt: run.clock().toISOString(),
    });
    logger.info('cron job ran', { job: job.name, trigger, status: outcome.status });
  } catch (err) {
    logger.error('cron run could not be recorded', { job: job.name, error: errorMessage(err) });
  }
}
