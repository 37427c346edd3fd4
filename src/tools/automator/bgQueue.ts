import { randomUUID } from 'node:crypto';
import type { TurnRunner } from '../../agent/turn';
import { errorMessage, InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import { OWNER, type Principal, type PrincipalDirectory } from '../../principal';
import type { JobQueue } from '../../store/jobQueue';
import type { BackgroundJob, BackgroundJobStore } from '../../store/jobs';
import { startQueuePoller, type QueuePoller } from './queuePoller';
import { runPrompt } from './runPrompt';
import { RunningJobs } from './runningJobs';

/** What the queue needs; one named options object. */
export interface BackgroundQueueOptions {
  store: BackgroundJobStore;
  /** Where queued jobs wait until a process with a free slot takes them (`Stores.jobQueue`). */
  queue: JobQueue;
  /** Who a stored job runs as: the principal that submitted it. */
  principals: PrincipalDirectory;
  clock: () => Date;
  logger: Logger;
  /** Jobs running at once (`background.concurrency`). */
  concurrency: number;
}

/** How often a process running jobs looks for those of them cancelled through another replica. */
const CANCEL_CHECK_MS = 500;

/**
 * Runs submitted prompts in the background through the agent tree, each as
 * the principal that submitted it in session `bg:<id>`, at most
 * `background.concurrency` at a time in this process, oldest first, on
 * either database: a submitted job is a row (`bg_jobs`, queued) and an
 * entry of the job queue (`Stores.jobQueue`); the process it was submitted
 * to starts it at once when it has a free slot; otherwise whichever process
 * has one takes the entry when woken (a slot freed, an entry came due),
 * claims the row (queued → running) and runs it. With replicas on
 * PostgreSQL a job queued on a replica that stops or dies before it starts
 * runs on another; one that was running when its replica died is failed
 * "replica lost" by the heartbeat sweep (`store/postgres/cluster.ts`).
 *
 * Restart rule: jobs that were running when the process died are marked
 * failed ("node restarted") at start, since a half-done turn cannot be
 * resumed; jobs still queued had not started and run after the restart.
 * Jobs interrupted by {@link BackgroundQueue.close} are failed the same way.
 */
export class BackgroundQueue {
  private readonly runs = new RunningJobs();
  private runner: TurnRunner | undefined;
  private poller: QueuePoller | undefined;
  private stopWaking: (() => void) | undefined;
  /** Ticks while jobs run here: a cancel through another replica is a row to look at, not a wake-up. */
  private cancelCheck: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: BackgroundQueueOptions) {}

  /** Fails this process's jobs left by its previous life, re-queues every queued row, then takes jobs through `runner`. */
  async start(runner: TurnRunner): Promise<void> {
    if (this.runner || this.closed) return;
    this.runner = runner;
    const { store, queue, logger } = this.options;
    const interrupted = await store.failInterrupted(this.now());
    if (interrupted > 0) logger.warn('background jobs interrupted by a restart marked failed', { count: interrupted });
    // A no-op for rows whose entry waits; puts back one whose entry was lost (queued before the queue existed).
    for (const job of await store.queued()) await queue.enqueueBackground(job.id);
    const poller = startQueuePoller({ intervalMs: queue.idlePollMs, logger, poll: () => this.poll() });
    this.poller = poller;
    this.stopWaking = queue.onDue('background', () => poller.wake());
  }

  /** Queues the principal's prompt for the first process with a free slot (this one, when it has one). */
  async submit(principal: Principal, input: { prompt: string; label?: string }): Promise<BackgroundJob> {
    if (this.closed) throw new InputError('the background queue is shut down');
    const id = await insertBackgroundJob(this.options, principal, input);
    const { queue } = this.options;
    // This replica goes first when it has a slot (the job starts at once, where it was asked for); the
    // others see the entry after the hand-off delay, in time to take it if this replica is full or gone.
    await queue.enqueueBackground(id, queue.handOffMs);
    if (this.runner && !this.closed && this.runs.size < this.options.concurrency) {
      await this.take(id).catch((err: unknown) =>
        this.options.logger.warn('background job left to the queue', { id, error: errorMessage(err) }),
      );
    }
    return this.require(principal, id);
  }

  /**
   * Cancels a job the principal can see: one running here is stopped; any
   * other is recorded cancelled, so its queue entry is dropped when taken,
   * or the replica running it stops it at its next check (within {@link CANCEL_CHECK_MS}). @throws
   * InputError when it is unknown or finished.
   */
  async cancel(principal: Principal, id: string): Promise<BackgroundJob> {
    const job = await this.require(principal, id);
    // Running here: its turn stops and records the cancel.
    if (this.runs.abort(id, new Error('cancelled by request'))) return this.require(principal, id);
    if (job.status === 'queued' || job.status === 'running') {
      // A job running on another replica: that replica sees the row cancelled at its next check and stops the turn.
      await this.options.store.finish(id, {
        status: 'cancelled',
        finishedAt: this.now(),
        result: job.status === 'queued' ? 'cancelled before it started' : 'cancelled by request',
        author: null,
      });
    } else {
      throw new InputError(`background job ${id} already finished (${job.status})`);
    }
    return this.require(principal, id);
  }

  /** A job the principal can see. @throws InputError when there is none. */
  require(principal: Principal, id: string): Promise<BackgroundJob> {
    return requireBackgroundJob(this.options.store, principal, id);
  }

  /** Stops taking jobs, fails the running ones and waits until they are recorded; queued jobs stay queued. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWaking?.();
    clearInterval(this.cancelCheck);
    await this.poller?.stop();
    await this.runs.stopAll(new Error('node shutting down'));
  }

  private now(): string {
    return this.options.clock().toISOString();
  }

  private async poll(): Promise<void> {
    const free = this.options.concurrency - this.runs.size;
    if (free <= 0 || this.closed) return;
    await this.options.queue.takeBackground(free, (id) => this.take(id));
  }

  /** Stops the turns of jobs running here that were cancelled through another replica. */
  private async stopCancelledElsewhere(): Promise<void> {
    for (const id of this.runs.keys()) {
      const row = await this.options.store.get(OWNER, id);
      if (row?.status === 'cancelled') this.runs.abort(id, new Error('cancelled by request'));
    }
  }

  /** Checks for cancels every {@link CANCEL_CHECK_MS} while a job runs here, one check at a time. */
  private checkCancelsWhileRunning(): void {
    if (this.cancelCheck) return;
    let checking = false;
    this.cancelCheck = setInterval(() => {
      if (checking) return;
      checking = true;
      this.stopCancelledElsewhere()
        .catch((err: unknown) => this.options.logger.warn('cancel check failed', { error: errorMessage(err) }))
        .finally(() => (checking = false));
    }, CANCEL_CHECK_MS);
    this.cancelCheck.unref();
  }

  /** One job taken from the queue: claimed on its row, then run in the background. */
  private async take(id: string): Promise<void> {
    const runner = this.runner;
    if (!runner || this.closed) throw new Error('the background queue is closing');
    const { store, logger } = this.options;
    // Cancelled or taken already: nothing to run.
    if (!(await store.markRunning(id, this.now()))) return;
    const job = await store.get(OWNER, id);
    if (!job) return;
    this.runs.start(
      id,
      (signal) =>
        runClaimedBackgroundJob({ ...this.options, runner, job, signal, closing: () => this.closed }).catch(
          (err: unknown) => logger.error('background job could not be recorded', { id, error: errorMessage(err) }),
        ),
      () => {
        if (this.runs.size === 0) {
          clearInterval(this.cancelCheck);
          this.cancelCheck = undefined;
        }
        this.poller?.wake();
      },
    );
    this.checkCancelsWhileRunning();
  }
}

/** Stores the principal's new job, queued, under a new id; resolves with the id. */
async function insertBackgroundJob(
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
async function requireBackgroundJob(
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
async function runClaimedBackgroundJob(run: {
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
