import { randomUUID } from 'node:crypto';
import type { TurnRunner } from '../../agent/turn';
import { InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import { BgStore, type BgJob } from './bgStore';
import { runPrompt } from './runPrompt';

/** What the queue needs; one named options object. */
export interface BackgroundQueueOptions {
  store: BgStore;
  turns: () => TurnRunner;
  clock: () => Date;
  logger: Logger;
  /** Jobs running at once (`background.concurrency`). */
  concurrency: number;
}

/**
 * Runs submitted prompts in the background through the agent tree, each in
 * session `bg:<id>`, at most `concurrency` at a time, oldest first.
 *
 * Restart rule: jobs that were running when the process died are marked
 * failed ("node restarted") at start, since a half-done turn cannot be
 * resumed; jobs still queued had not started and run after the restart.
 * Jobs interrupted by {@link BackgroundQueue.close} are failed the same way.
 */
export class BackgroundQueue {
  private readonly queue: string[] = [];
  private readonly running = new Map<string, AbortController>();
  private readonly inflight = new Set<Promise<void>>();
  private started = false;
  private closed = false;

  constructor(private readonly options: BackgroundQueueOptions) {}

  /** Fails interrupted jobs, then runs what is queued. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    const interrupted = this.options.store.failInterrupted(this.now());
    if (interrupted > 0)
      this.options.logger.warn('background jobs interrupted by a restart marked failed', { count: interrupted });
    this.queue.push(...this.options.store.queuedIds().filter((id) => !this.queue.includes(id)));
    this.pump();
  }

  /** Queues a prompt; it starts as soon as a slot is free (after {@link start}). */
  submit(input: { prompt: string; label?: string }): BgJob {
    if (this.closed) throw new InputError('the background queue is shut down');
    const id = `bg-${randomUUID().slice(0, 8)}`;
    this.options.store.insert({ id, label: input.label ?? null, prompt: input.prompt, createdAt: this.now() });
    this.queue.push(id);
    this.pump();
    return this.require(id);
  }

  /** Cancels a queued or running job. @throws InputError when it is unknown or already finished. */
  cancel(id: string): BgJob {
    const job = this.require(id);
    if (job.status === 'queued') {
      this.queue.splice(this.queue.indexOf(id), 1);
      this.options.store.finish(id, {
        status: 'cancelled',
        finishedAt: this.now(),
        result: 'cancelled before it started',
        author: null,
      });
    } else if (job.status === 'running') {
      this.running.get(id)?.abort(new Error('cancelled by request'));
    } else {
      throw new InputError(`background job ${id} already finished (${job.status})`);
    }
    return this.require(id);
  }

  /** Looks a job up. @throws InputError when it is unknown. */
  require(id: string): BgJob {
    const job = this.options.store.get(id);
    if (!job) throw new InputError(`no background job with id "${id}"`);
    return job;
  }

  /** Stops starting jobs, fails the running ones and waits until they are recorded; queued jobs stay queued. */
  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.running.values()) controller.abort(new Error('node shutting down'));
    await Promise.allSettled([...this.inflight]);
  }

  private now(): string {
    return this.options.clock().toISOString();
  }

  private pump(): void {
    while (this.started && !this.closed && this.running.size < this.options.concurrency && this.queue.length > 0) {
      const id = this.queue.shift() as string;
      const run = this.execute(id).finally(() => {
        this.inflight.delete(run);
        this.pump();
      });
      this.inflight.add(run);
    }
  }

  private async execute(id: string): Promise<void> {
    const { store, logger, turns } = this.options;
    const controller = new AbortController();
    this.running.set(id, controller);
    try {
      const job = this.require(id);
      store.markRunning(id, this.now());
      const outcome = await runPrompt(turns, { sessionId: `bg:${id}`, text: job.prompt, signal: controller.signal });
      const shutDown = outcome.status === 'cancelled' && this.closed;
      store.finish(id, {
        status: shutDown ? 'failed' : outcome.status,
        finishedAt: this.now(),
        result: shutDown ? 'node shut down while the job was running' : outcome.text,
        author: outcome.author,
      });
      logger.info('background job finished', { id, status: shutDown ? 'failed' : outcome.status });
    } finally {
      this.running.delete(id);
    }
  }
}
