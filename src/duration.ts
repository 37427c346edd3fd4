import { InputError } from './errors';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** The forms a duration takes, for error messages. */
export const DURATION_FORMS = 'a duration such as 500ms, 30s, 5m, 2h or 1d';

/**
 * Parses a short duration such as `500ms`, `30s`, `5m`, `2h` or `1d` into
 * milliseconds: the node's one duration grammar, read the same way in
 * config (`a2a.taskRetention`), cron intervals (`every 5m`) and workflow
 * step timeouts.
 * @throws InputError naming `what` and the accepted forms.
 * @example
 * parseDuration('1.5m', 'timeout'); // 90000
 */
export function parseDuration(text: string, what: string): number {
  const match = DURATION.exec(text.trim());
  const ms = match ? Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]) : NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new InputError(`invalid ${what} "${text}": expected ${DURATION_FORMS}`);
  }
  return ms;
}

/** True when `text` is a duration {@link parseDuration} reads. */
export function isDuration(text: string): boolean {
  const match = DURATION.exec(text.trim());
  return match !== null && Number(match[1]) > 0;
}
