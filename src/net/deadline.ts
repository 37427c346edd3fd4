import { formatDuration, timerDelay } from '../duration';

/** A signal that aborts once its time is up or any of its parents aborts, and the way to let it go. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Stops the timer and unhooks the parents: call it once the guarded work is over, aborted or not. */
  clear(): void;
}

/**
 * A deadline that holds on Node 20. `AbortSignal.any([signal,
 * AbortSignal.timeout(ms)])` does not: `any` keeps its sources weakly and a
 * timeout signal nothing listens to is collected with its timer, so the
 * deadline silently never fires (a push receiver that never answers kept
 * its delivery pending forever). Here the timer holds the controller and
 * each parent holds a listener to it, so the signal aborts when its time is
 * up whatever the collector does. The reason is a `TimeoutError`
 * `DOMException` ("timed out after 15s"), as `AbortSignal.timeout` gives; a parent's abort passes
 * its own reason. The delay is capped at the longest a timer keeps.
 * @example
 * const deadline = createDeadline(15_000, shutdown.signal);
 * try {
 *   await fetch(url, { signal: deadline.signal });
 * } finally {
 *   deadline.clear();
 * }
 */
export function createDeadline(ms: number, ...parents: Array<AbortSignal | undefined>): Deadline {
  const controller = new AbortController();
  const unhooks: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
    for (const unhook of unhooks.splice(0)) unhook();
  };
  const abort = (reason: unknown) => {
    clear();
    controller.abort(reason);
  };
  for (const parent of parents) {
    if (!parent) continue;
    if (parent.aborted) {
      abort(parent.reason);
      return { signal: controller.signal, clear };
    }
    const onAbort = () => abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    unhooks.push(() => parent.removeEventListener('abort', onAbort));
  }
  timer = setTimeout(
    () => abort(new DOMException(`timed out after ${formatDuration(ms)}`, 'TimeoutError')),
    timerDelay(ms),
  );
  // Unreferenced, not weak: the timer list still holds it, it just keeps no process alive by itself.
  timer.unref();
  return { signal: controller.signal, clear };
}
