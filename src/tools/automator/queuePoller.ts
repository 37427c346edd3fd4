import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';

/** A running {@link startQueuePoller} loop. */
export interface QueuePoller {
  /** Polls as soon as the current poll (if any) ends: something came due or a slot freed. */
  wake(): void;
  /** Stops polling and resolves once the poll under way (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Asks the cluster's job queue for due work when woken ({@link
 * QueuePoller.wake}: the queue says entries are due, or a slot freed) and
 * otherwise every `intervalMs`, one poll at a time (a wake-up during a poll
 * polls again once it ends, never overlapping it). A failed poll (the
 * database briefly away) is logged and retried on the next tick: the queue
 * keeps what was not taken.
 */
export function startQueuePoller(options: {
  /** The wait after a poll when nothing wakes the poller sooner. */
  intervalMs: number;
  poll: () => Promise<void>;
  logger: Logger;
}): QueuePoller {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const schedule = (delay: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
    timer.unref();
  };
  const tick = () => {
    if (stopped || current) {
      again = true;
      return;
    }
    current = options
      .poll()
      .catch((err: unknown) => options.logger.warn('job queue poll failed', { error: errorMessage(err) }))
      .finally(() => {
        current = undefined;
        schedule(again ? 0 : options.intervalMs);
        again = false;
      });
  };
  schedule(0);
  return {
    wake: () => schedule(0),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
