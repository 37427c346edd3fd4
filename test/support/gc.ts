import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Runs the garbage collector every `everyMs` until the returned function is
 * called: a test of a deadline proves that nothing but a weak reference
 * holds its timer when the deadline still fires under constant collection
 * (Node 20 collects an `AbortSignal.timeout` held only by `AbortSignal.any`).
 * The collector is exposed at run time (`--expose-gc` for a context made
 * after it), so the suite needs no flag of its own.
 * @example
 * const stop = collectGarbageEvery(5);
 * try { await deliveryFailed; } finally { stop(); }
 */
export function collectGarbageEvery(everyMs: number): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const timer = setInterval(() => gc(), everyMs);
  return () => clearInterval(timer);
}
