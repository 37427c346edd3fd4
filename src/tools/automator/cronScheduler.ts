import type { TurnRunner } from '../../agent/turn';
import { errorMessage, InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { Principal, PrincipalDirectory } from '../../principal';
import type { CronJob, CronStore, CronTrigger } from '../../store/jobs';
import { runPrompt } from './runPrompt';
import { RunningJobs } from './runningJobs';
import { parseSchedule } from './schedule';

/** setTimeout cannot wait longer than this; longer waits re-arm when it fires. */
const MAX_TIMER_MS = 2_147_483_647;
const JOB_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;

/** What the scheduler needs; one named options object. */
export interface CronSchedulerOptions {
  store: CronStore;
  /** Who a stored job runs as: the principal that created it. */
  principals: PrincipalDirectory;
  clock: () => Date;
  logger: Logger;
}

/** A job's key among every principal's jobs (names are unique within one principal's). */
export const cronJobKey = (job: Pick<CronJob, 'owner' | 'name'>) => `${job.owner}\u0000${job.name}`;

/**
 * Fires persisted cron jobs through the agent tree, each as the principal
 * that created it, one session per job (`cron:<name>` within that
 * principal's conversations). The store is the source of truth; timers are
 * only a wake-up call, re-read the job when they fire, and are all cleared
 * by {@link CronScheduler.close}.
 *
 * Missed runs (documented rule): when the scheduler starts, an active job
 * whose next run time passed while the node was down gets exactly ONE
 * catch-up run, recorded with trigger `catch-up`, however many times it was
 * missed; its next run is then computed from the current time. A one-time
 * job missed this way runs once and is done. Runs left `running` by a dead
 * process are marked failed ("node restarted"). Times missed while a job was
 * paused are skipped: `cron_resume` schedules from the current time. A fire
 * time that arrives while the job's previous run is still going is skipped.
 */
export class CronScheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly runs = new RunningJobs();
  /** Set by {@link start}: jobs run only once the agent tree exists. */
  private runner: TurnRunner | undefined;
  private closed = false;

  constructor(private readonly options: CronSchedulerOptions) {}

  /** Fails interrupted runs, catches up missed jobs once each and arms the rest; jobs run through `runner`. */
  async start(runner: TurnRunner): Promise<void> {
    if (this.runner || this.closed) return;
    this.runner = runner;
    const now = this.now();
    const interrupted = await this.options.store.failInterruptedRuns(now.toISOString());
    if (interrupted > 0)
      this.options.logger.warn('cron runs interrupted by a restart marked failed', { count: interrupted });
    for (const job of await this.options.store.all()) {
      if (job.status !== 'active' || !job.nextRunAt) continue;
      if (Date.parse(job.nextRunAt) <= now.getTime()) await this.fire(job, 'catch-up');
      else this.arm(job);
    }
  }

  /** Adds the principal's job and arms it. @throws InputError for a bad name, a duplicate or a bad schedule. */
  async add(principal: Principal, input: { name: string; schedule: string; prompt: string }): Promise<CronJob> {
    const job = await addCronJob(this.options.store, principal, input, this.now());
    if (this.runner) this.arm(job);
    return job;
  }

  /** Stops firing the principal's job until {@link resume}; a run under way finishes. */
  async pause(principal: Principal, name: string): Promise<CronJob> {
    const job = await this.require(principal, name);
    if (job.status === 'active') {
      this.disarm(job);
      await this.options.store.update(principal, name, { status: 'paused', nextRunAt: null });
    }
    return this.require(principal, name);
  }

  /** Resumes a paused job from the current time (runs missed while paused are skipped). */
  async resume(principal: Principal, name: string): Promise<CronJob> {
    const { job, resumed } = await resumeCronJob(this.options.store, principal, name, this.now());
    if (resumed && job.nextRunAt && this.runner) this.arm(job);
    return job;
  }

  /** Removes the principal's job and its history, cancelling a run under way. */
  async remove(principal: Principal, name: string): Promise<void> {
    const job = await this.require(principal, name);
    this.disarm(job);
    this.runs.abort(cronJobKey(job), new Error('job removed'));
    await this.options.store.remove(principal, name);
  }

  /** Clears every timer, cancels runs under way and waits for them to be recorded. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.runs.stopAll(new Error('node shutting down'));
  }

  private require(principal: Principal, name: string): Promise<CronJob> {
    return requireCronJob(this.options.store, principal, name);
  }

  private now(): Date {
    return this.options.clock();
  }

  private arm(job: CronJob): void {
    this.disarm(job);
    if (this.closed || !job.nextRunAt) return;
    const delay = Math.min(Math.max(Date.parse(job.nextRunAt) - this.now().getTime(), 0), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      this.timers.delete(cronJobKey(job));
      this.onTimer(job).catch((err: unknown) =>
        this.options.logger.error('cron job could not fire', { job: job.name, error: errorMessage(err) }),
      );
    }, delay);
    timer.unref();
    this.timers.set(cronJobKey(job), timer);
  }

  private disarm(job: Pick<CronJob, 'owner' | 'name'>): void {
    const key = cronJobKey(job);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  private async onTimer(armed: CronJob): Promise<void> {
    const job = await this.options.store.get(this.options.principals.byId(armed.owner), armed.name);
    if (this.closed || !job || job.status !== 'active' || !job.nextRunAt) return;
    // A timer clamped to MAX_TIMER_MS (or an early wake-up) only re-arms.
    if (Date.parse(job.nextRunAt) > this.now().getTime()) this.arm(job);
    else await this.fire(job, 'schedule');
  }

  /** Records the run, moves the job to its next time, then runs the prompt. */
  private async fire(job: CronJob, trigger: CronTrigger): Promise<void> {
    const runner = this.runner;
    if (!runner) return;
    const principal = this.options.principals.byId(job.owner);
    const now = this.now();
    const next = parseSchedule(job.schedule, new Date(job.anchorAt)).next(now);
    await this.options.store.update(principal, job.name, {
      status: next ? 'active' : 'done',
      nextRunAt: next?.toISOString() ?? null,
      lastRunAt: now.toISOString(),
    });
    const updated = await this.options.store.get(principal, job.name);
    if (updated && next) this.arm(updated);
    startCronRun(this.runs, this.options, {
      runner,
      principal,
      job,
      trigger,
      scheduledFor: job.nextRunAt ?? now.toISOString(),
      startedAt: now,
    });
  }
}

/**
 * Validates and stores the principal's new job, its first fire time
 * computed from `now`; the scheduler that runs it arms it.
 * @throws InputError for a bad name, a duplicate or a bad schedule.
 */
export async function addCronJob(
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
export async function requireCronJob(store: CronStore, principal: Principal, name: string): Promise<CronJob> {
  const job = await store.get(principal, name);
  if (!job) throw new InputError(`no cron job named "${name}"`);
  return job;
}

/**
 * Resumes the principal's paused job from `now` (runs missed while paused
 * are skipped): active again with its next fire time, or done when the
 * schedule has none left. `resumed` is false for a job that was not paused
 * (returned as it is); the scheduler arms or queues a resumed job.
 */
export async function resumeCronJob(
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
export function startCronRun(
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
export async function runCronJob(run: {
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
