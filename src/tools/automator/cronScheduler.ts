import type { TurnRunner } from '../../agent/turn';
import { InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import { CronStore, type CronJob, type CronTrigger } from './cronStore';
import { runPrompt } from './runPrompt';
import { parseSchedule } from './schedule';

/** setTimeout cannot wait longer than this; longer waits re-arm when it fires. */
const MAX_TIMER_MS = 2_147_483_647;
const JOB_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;

/** What the scheduler needs; one named options object. */
export interface CronSchedulerOptions {
  store: CronStore;
  turns: () => TurnRunner;
  clock: () => Date;
  logger: Logger;
}

/**
 * Fires persisted cron jobs through the agent tree, one session per job
 * (`cron:<name>`). The database is the source of truth; timers are only a
 * wake-up call, re-read the job when they fire, and are all cleared by
 * {@link CronScheduler.close}.
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
  private readonly running = new Map<string, AbortController>();
  private readonly inflight = new Set<Promise<void>>();
  private started = false;
  private closed = false;

  constructor(private readonly options: CronSchedulerOptions) {}

  /** Fails interrupted runs, catches up missed jobs once each and arms the rest. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    const now = this.now();
    const interrupted = this.options.store.failInterruptedRuns(now.toISOString());
    if (interrupted > 0)
      this.options.logger.warn('cron runs interrupted by a restart marked failed', { count: interrupted });
    for (const job of this.options.store.list()) {
      if (job.status !== 'active' || !job.nextRunAt) continue;
      if (Date.parse(job.nextRunAt) <= now.getTime()) this.fire(job, 'catch-up');
      else this.arm(job);
    }
  }

  /** Adds and arms a job. @throws InputError for a bad name, a duplicate or a bad schedule. */
  add(input: { name: string; schedule: string; prompt: string }): CronJob {
    if (!JOB_NAME.test(input.name)) {
      throw new InputError(`invalid job name "${input.name}": letters, digits, _ . and - only, at most 64`);
    }
    if (this.options.store.get(input.name)) throw new InputError(`a cron job named "${input.name}" already exists`);
    const now = this.now();
    const schedule = parseSchedule(input.schedule, now);
    const next = schedule.next(now);
    if (!next) throw new InputError(`invalid schedule "${input.schedule}": that time has already passed`);
    const job: CronJob = {
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
    this.options.store.insert(job);
    if (this.started) this.arm(job);
    return job;
  }

  /** Stops firing a job until {@link resume}; a run under way finishes. */
  pause(name: string): CronJob {
    const job = this.require(name);
    if (job.status === 'active') {
      this.disarm(name);
      this.options.store.update(name, { status: 'paused', nextRunAt: null });
    }
    return this.require(name);
  }

  /** Resumes a paused job from the current time (runs missed while paused are skipped). */
  resume(name: string): CronJob {
    const job = this.require(name);
    if (job.status !== 'paused') return job;
    const next = parseSchedule(job.schedule, new Date(job.anchorAt)).next(this.now());
    this.options.store.update(name, { status: next ? 'active' : 'done', nextRunAt: next?.toISOString() ?? null });
    const resumed = this.require(name);
    if (next && this.started) this.arm(resumed);
    return resumed;
  }

  /** Removes a job and its history, cancelling a run under way. */
  remove(name: string): void {
    this.require(name);
    this.disarm(name);
    this.running.get(name)?.abort(new Error('job removed'));
    this.options.store.remove(name);
  }

  /** Clears every timer, cancels runs under way and waits for them to be recorded. */
  async close(): Promise<void> {
    this.closed = true;
    for (const name of [...this.timers.keys()]) this.disarm(name);
    for (const controller of this.running.values()) controller.abort(new Error('node shutting down'));
    await Promise.allSettled([...this.inflight]);
  }

  private require(name: string): CronJob {
    const job = this.options.store.get(name);
    if (!job) throw new InputError(`no cron job named "${name}"`);
    return job;
  }

  private now(): Date {
    return this.options.clock();
  }

  private arm(job: CronJob): void {
    this.disarm(job.name);
    if (this.closed || !job.nextRunAt) return;
    const delay = Math.min(Math.max(Date.parse(job.nextRunAt) - this.now().getTime(), 0), MAX_TIMER_MS);
    const timer = setTimeout(() => this.onTimer(job.name), delay);
    timer.unref();
    this.timers.set(job.name, timer);
  }

  private disarm(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
  }

  private onTimer(name: string): void {
    this.timers.delete(name);
    const job = this.options.store.get(name);
    if (this.closed || !job || job.status !== 'active' || !job.nextRunAt) return;
    // A timer clamped to MAX_TIMER_MS (or an early wake-up) only re-arms.
    if (Date.parse(job.nextRunAt) > this.now().getTime()) this.arm(job);
    else this.fire(job, 'schedule');
  }

  /** Records the run, moves the job to its next time, then runs the prompt. */
  private fire(job: CronJob, trigger: CronTrigger): void {
    const now = this.now();
    const next = parseSchedule(job.schedule, new Date(job.anchorAt)).next(now);
    this.options.store.update(job.name, {
      status: next ? 'active' : 'done',
      nextRunAt: next?.toISOString() ?? null,
      lastRunAt: now.toISOString(),
    });
    const updated = this.options.store.get(job.name);
    if (updated && next) this.arm(updated);
    if (this.running.has(job.name)) {
      this.options.logger.warn('cron run skipped: the previous run is still going', { job: job.name });
      return;
    }
    const run = this.execute(job, trigger, now).finally(() => this.inflight.delete(run));
    this.inflight.add(run);
  }

  private async execute(job: CronJob, trigger: CronTrigger, startedAt: Date): Promise<void> {
    const { store, logger, turns } = this.options;
    const controller = new AbortController();
    this.running.set(job.name, controller);
    const runId = store.startRun({
      jobName: job.name,
      trigger,
      scheduledFor: job.nextRunAt ?? startedAt.toISOString(),
      startedAt: startedAt.toISOString(),
    });
    try {
      const outcome = await runPrompt(turns, {
        sessionId: `cron:${job.name}`,
        text: job.prompt,
        signal: controller.signal,
      });
      store.finishRun(runId, {
        status: outcome.status,
        result: outcome.text,
        author: outcome.author,
        finishedAt: this.now().toISOString(),
      });
      logger.info('cron job ran', { job: job.name, trigger, status: outcome.status });
    } finally {
      this.running.delete(job.name);
    }
  }
}
