import { InputError } from './errors';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** The forms a duration takes, for error messages. */
export const DURATION_FORMS = 'a duration such as 500ms, 30s, 5m, 2h or 1d';

/**
 * The longest delay a Node timer keeps (2^31 − 1 ms, about 24.8 days): a
 * longer one overflows and fires after 1 ms, so a wait meant to last a month
 * would spin. Every timer the node sets from configuration or input is at
 * most this ({@link timerDelay}).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Parses a short duration such as `500ms`, `30s`, `5m`, `2h` or `1d` into
 * milliseconds: the node's one duration grammar, read the same way in
 * config (`a2a.taskRetention`), cron intervals (`every 5m`) and workflow
 * step timeouts. With `maxMs`, a longer duration is refused too.
 * @throws InputError naming `what`, and the accepted forms or the maximum.
 * @example
 * parseDuration('1.5m', 'timeout'); // 90000
 * parseDuration('30d', 'a2a.longPollTimeout', 600_000); // throws: at most 10m
 */
export function parseDuration(text: string, what: string, maxMs?: number): number {
  const ms = durationMs(text);
  if (ms === undefined) throw new InputError(`invalid ${what} "${text}": expected ${DURATION_FORMS}`);
  if (maxMs !== undefined && ms > maxMs)
    throw new InputError(`invalid ${what} "${text}": at most ${formatDuration(maxMs)}`);
  return ms;
}

/** The milliseconds of a duration {@link parseDuration} reads, or undefined when `text` is not one. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  const ms = match ? Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]) : NaN;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** `ms` in the largest unit that writes it whole (`600000` → `10m`, `1500` → `1500ms`): how maxima are named. */
export function formatDuration(ms: number): string {
  const units = Object.entries(UNIT_MS).reverse() as [keyof typeof UNIT_MS, number][];
  const [unit, size] = units.find(([, size]) => ms % size === 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}

/** `ms` as a timer may wait it: never past {@link MAX_TIMER_MS}, never negative. */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}
