import type { TurnRunner } from '../../agent/turn';
import { errorMessage, InputError } from '../../errors';
import { OWNER, type Principal } from '../../principal';
import type { JobQueue } from '../../store/jobQueue';
import type { BackgroundJob } from '../../store/jobs';
import {
  insertBackgroundJob,
  requireBackgroundJob,
  runClaimedBackgroundJob,
  type BackgroundQueueOptions,
} from './bgQueue';
import { startQueuePoller, type QueuePoller } from './queuePoller';
import { RunningJobs } from './runningJobs';

/** How often a replica running jobs looks for those of them cancelled through another replica. */
const CANCEL_CHECK_MS = 500;

/**
 * Background prompts of a replica among several on PostgreSQL: a submitted
 * job is a row (`bg_jobs`, queued) and an entry of the cluster's job queue;
 * the replica it was submitted to starts it at once when it has a free
 * slot; otherwise whichever replica has one (`background.concurrency`
 * each) takes the entry, claims the row (queued → running, naming the replica) and runs
 * it. A job queued on a replica that stops or dies before it starts runs on
 * another; one that was running when its replica died is failed "replica
 * lost" by the heartbeat sweep (`store/postgres/cluster.ts`), since a
 * half-done turn cannot be resumed.
 */
export class ClusterBackgroundQueue {
  private readonly runs = new RunningJobs();
  private runner: TurnRunner | undefined;
  private poller: QueuePoller | undefined;
  private stopWaking: (() => void) | undefined;
  /** Ticks while jobs run here: a cancel through another replica is a row to look at, not a wake-up. */
  private cancelCheck: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: BackgroundQueueOptions & { queue: JobQueue }) {}

  /** Fails this replica's jobs left by its previous life, re-queues every queued row, then takes jobs. */
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

  /** Queues the principal's prompt for the first replica with a free slot. */
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
