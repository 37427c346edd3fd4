import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** Median of a list of numbers (NaN when empty). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Milliseconds on the wall clock, to a fraction of a millisecond: comparable
 * between processes on one machine (the scripted model stamps its tokens with
 * it, the stream client subtracts).
 */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
