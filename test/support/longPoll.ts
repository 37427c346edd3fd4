import type { MemoryLogger } from '../../src/log/logger';
import { waitFor } from './waitFor';

/**
 * Resolves once the node logging to `logger` holds a GetTask long poll
 * (`A2A-Current-Generation: after`) on `taskId`: it logs that as the wait
 * begins, so whatever moves the task from then on wakes that poll.
 * @example
 * const polled = post(url, rpc('GetTask', { id }), { 'A2A-Current-Generation': '3' });
 * await longPollWaiting(node.logger, id, 3);
 */
export async function longPollWaiting(logger: MemoryLogger, taskId: string, after: number): Promise<void> {
  await waitFor(
    () =>
      logger.records.some(
        (r) => r.message === 'long poll waiting' && r.meta.taskId === taskId && r.meta.after === after,
      ),
    20_000,
    `a long poll on ${taskId} waiting past generation ${after}`,
  );
}
