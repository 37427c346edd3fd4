import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';

/** How soon a poll that failed is tried again when no interval would bring it back sooner. */
const RETRY_FAILED_POLL_MS = 5_000;

/** A running {@link startQueuePoller} loop. */
export interface QueuePoller {
  /** Polls as soon as the current poll (if any) ends: something came due or a slot freed. */
  wake(): void;
  /** Stops polling and resolves once the poll under way (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Asks the job queue for due work at start and when woken ({@link
 * QueuePoller.wake}: the queue says entries are due, or a slot freed), and
 * with `intervalMs` also that long after each poll; one poll at a time (a
 * wake-up during a poll polls again once it ends, never overlapping it). A
 * failed poll (the database briefly away) is logged and retried after
 * {@link RETRY_FAILED_POLL_MS} (or the interval): the queue keeps what was
 * not taken.
 */
export function startQueuePoller(options: {
  /** The wait after a poll when nothing wakes the poller sooner; unset, it polls only when woken (`JobQueue.idlePollMs`). */
  intervalMs?: number;
  poll: () => Promise<void>;
  logger: Logger;
}): QueuePoller {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const schedule = (delay: number | undefined) => {
    if (stopped || delay === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
    timer.unref();
  };
  const tick = () => {
    if (stopped || current) {
      again = true;
      return;
    }
    let failed = false;
    current = options
      .poll()
      .catch((err: unknown) => {
        failed = true;
        options.logger.warn('job queue poll failed', { error: errorMessage(err) });
      })
      .finally(() => {
        current = undefined;
        schedule(
          again ? 0 : failed ? Math.min(options.intervalMs ?? Infinity, RETRY_FAILED_POLL_MS) : options.intervalMs,
        );
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
