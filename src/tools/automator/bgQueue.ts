import { randomUUID } from 'node:crypto';
import type { TurnRunner } from '../../agent/turn';
import { errorMessage, InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { Principal, PrincipalDirectory } from '../../principal';
import type { BackgroundJob, BackgroundJobStore } from '../../store/jobs';
import { runPrompt } from './runPrompt';
import { RunningJobs } from './runningJobs';

/** What the queue needs; one named options object. */
export interface BackgroundQueueOptions {
  store: BackgroundJobStore;
  /** Who a stored job runs as: the principal that submitted it. */
  principals: PrincipalDirectory;
  clock: () => Date;
  logger: Logger;
  /** Jobs running at once (`background.concurrency`). */
  concurrency: number;
}

/**
 * Runs submitted prompts in the background through the agent tree, each as
 * the principal that submitted it in session `bg:<id>`, at most
 * `concurrency` at a time, oldest first.
 *
 * Restart rule: jobs that were running when the process died are marked
 * failed ("node restarted") at start, since a half-done turn cannot be
 * resumed; jobs still queued had not started and run after the restart.
 * Jobs interrupted by {@link BackgroundQueue.close} are failed the same way.
 */
export class BackgroundQueue {
  private readonly queue: BackgroundJob[] = [];
  private readonly runs = new RunningJobs();
  /** Set by {@link start}: jobs run only once the agent tree exists. */
  private runner: TurnRunner | undefined;
  private closed = false;

  constructor(private readonly options: BackgroundQueueOptions) {}

  /** Fails interrupted jobs, then runs what is queued through `runner`. */
  async start(runner: TurnRunner): Promise<void> {
    if (this.runner || this.closed) return;
    this.runner = runner;
    const interrupted = await this.options.store.failInterrupted(this.now());
    if (interrupted > 0)
      this.options.logger.warn('background jobs interrupted by a restart marked failed', { count: interrupted });
    const known = new Set(this.queue.map((job) => job.id));
    this.queue.push(...(await this.options.store.queued()).filter((job) => !known.has(job.id)));
    this.pump();
  }

  /** Queues the principal's prompt; it starts as soon as a slot is free (after {@link start}). */
  async submit(principal: Principal, input: { prompt: string; label?: string }): Promise<BackgroundJob> {
    if (this.closed) throw new InputError('the background queue is shut down');
    const id = await insertBackgroundJob(this.options, principal, input);
    const job = await this.require(principal, id);
    this.queue.push(job);
    this.pump();
    return job;
  }

  /** Cancels a queued or running job the principal can see. @throws InputError when it is unknown or already finished. */
  async cancel(principal: Principal, id: string): Promise<BackgroundJob> {
    const job = await this.require(principal, id);
    const queued = this.queue.findIndex((entry) => entry.id === id);
    if (job.status === 'queued' && queued >= 0) {
      this.queue.splice(queued, 1);
      await this.options.store.finish(id, {
        status: 'cancelled',
        finishedAt: this.now(),
        result: 'cancelled before it started',
        author: null,
      });
    } else if (job.status === 'running' || job.status === 'queued') {
      this.runs.abort(id, new Error('cancelled by request'));
    } else {
      throw new InputError(`background job ${id} already finished (${job.status})`);
    }
    return this.require(principal, id);
  }

  /** A job the principal can see. @throws InputError when there is none. */
  require(principal: Principal, id: string): Promise<BackgroundJob> {
    return requireBackgroundJob(this.options.store, principal, id);
  }

  /** Stops starting jobs, fails the running ones and waits until they are recorded; queued jobs stay queued. */
  async close(): Promise<void> {
    this.closed = true;
    await this.runs.stopAll(new Error('node shutting down'));
  }

  private now(): string {
    return this.options.clock().toISOString();
  }

  private pump(): void {
    const runner = this.runner;
    while (runner && !this.closed && this.runs.size < this.options.concurrency && this.queue.length > 0) {
      const job = this.queue.shift() as BackgroundJob;
      this.runs.start(
        job.id,
        (signal) =>
          this.execute(runner, job, signal).catch((err: unknown) =>
            this.options.logger.error('background job could not be recorded', { id: job.id, error: errorMessage(err) }),
          ),
        () => this.pump(),
      );
    }
  }

  private async execute(runner: TurnRunner, job: BackgroundJob, signal: AbortSignal): Promise<void> {
    // Another replica on the same database may have claimed it (or it was cancelled meanwhile).
    if (!(await this.options.store.markRunning(job.id, this.now()))) return;
    await runClaimedBackgroundJob({ ...this.options, runner, job, signal, closing: () => this.closed });
  }
}

/** Stores the principal's new job, queued, under a new id; resolves with the id. */
export async function insertBackgroundJob(
  run: { store: BackgroundJobStore; clock: () => Date },
  principal: Principal,
  input: { prompt: string; label?: string },
): Promise<string> {
  const id = `bg-${randomUUID().slice(0, 8)}`;
  await run.store.insert(principal, {
    id,
    label: input.label ?? null,
    prompt: input.prompt,
    createdAt: run.clock().toISOString(),
  });
  return id;
}

/** A job the principal can see. @throws InputError when there is none. */
export async function requireBackgroundJob(
  store: BackgroundJobStore,
  principal: Principal,
  id: string,
): Promise<BackgroundJob> {
  const job = await store.get(principal, id);
  if (!job) throw new InputError(`no background job with id "${id}"`);
  return job;
}

/**
 * Runs a background job this process has claimed (`markRunning`) and
 * records its end; a job cancelled because the node is `closing` is
 * recorded failed, as the restart rule says.
 */
export async function runClaimedBackgroundJob(run: {
  store: BackgroundJobStore;
  principals: PrincipalDirectory;
  clock: () => Date;
  logger: Logger;
  runner: TurnRunner;
  job: BackgroundJob;
  signal: AbortSignal;
  closing: () => boolean;
}): Promise<void> {
  const { store, job } = run;
  const outcome = await runPrompt(run.runner, {
    principal: run.principals.byId(job.owner),
    sessionId: `bg:${job.id}`,
    text: job.prompt,
    signal: run.signal,
  });
  const shutDown = outcome.status === 'cancelled' && run.closing();
  await store.finish(job.id, {
    status: shutDown ? 'failed' : outcome.status,
    finishedAt: run.clock().toISOString(),
    result: shutDown ? 'node shut down while the job was running' : outcome.text,
    author: outcome.author,
  });
  run.logger.info('background job finished', { id: job.id, status: shutDown ? 'failed' : outcome.status });
}
