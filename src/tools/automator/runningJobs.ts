/**
 * The runs one scheduler or queue has under way in this process, by key (a
 * background job's id, a cron job's owner and name): each with the
 * controller that stops it, and the promise {@link stopAll} waits for: the
 * cron scheduler (`cronScheduler.ts`) and the background queue
 * (`bgQueue.ts`) keep their runs here alike.
 * @example
 * const runs = new RunningJobs();
 * runs.start(job.id, (signal) => runJob(job, signal), () => pump());
 * await runs.stopAll(new Error('node shutting down'));
 */
export class RunningJobs {
  private readonly controllers = new Map<string, AbortController>();
  private readonly inflight = new Set<Promise<void>>();

  /** How many runs are under way. */
  get size(): number {
    return this.controllers.size;
  }

  /** Whether the run `key` is under way. */
  has(key: string): boolean {
    return this.controllers.has(key);
  }

  /** The keys of the runs under way. */
  keys(): string[] {
    return [...this.controllers.keys()];
  }

  /** Stops the run `key`, if one is under way, with `reason`; resolves nothing (its end is recorded by the run). */
  abort(key: string, reason: Error): boolean {
    const controller = this.controllers.get(key);
    controller?.abort(reason);
    return controller !== undefined;
  }

  /**
   * Starts `run` under `key`: counted at once (before its first await, so a
   * slot is taken as soon as it is given), forgotten when it settles, and
   * then `ended` is called (to start the next). `run` must not reject.
   */
  start(key: string, run: (signal: AbortSignal) => Promise<void>, ended?: () => void): void {
    const controller = new AbortController();
    this.controllers.set(key, controller);
    const running = run(controller.signal).finally(() => {
      this.controllers.delete(key);
      this.inflight.delete(running);
      ended?.();
    });
    this.inflight.add(running);
  }

  /** Stops every run under way with `reason` and resolves once each has ended (and recorded its end). */
  async stopAll(reason: Error): Promise<void> {
    for (const controller of this.controllers.values()) controller.abort(reason);
    await Promise.allSettled([...this.inflight]);
  }
}
