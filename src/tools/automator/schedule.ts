import { Cron } from 'croner';
import { errorMessage, InputError } from '../../errors';
import { parseDuration } from '../../duration';
import type { ScheduleKind } from '../../store/jobs';

/**
 * A parsed schedule: `next(after)` gives the first fire time strictly after
 * `after`, or null when the schedule has no more (a one-time job that fired).
 */
export interface Schedule {
  kind: ScheduleKind;
  /** The text the user wrote, kept so the job can be re-parsed after a restart. */
  text: string;
  next(after: Date): Date | null;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const EVERY = /^every\s+(.+)$/i;
/** Intervals below this are refused: a runaway job would flood the model. */
const MIN_INTERVAL_MS = 100;
/** Intervals above a year are refused: no job waits that long, and a fire time must stay a date. */
const MAX_INTERVAL_MS = 365 * 86_400_000;

/**
 * Parses a schedule written as a cron expression (`*\/5 * * * *`, six fields
 * for seconds), an interval (`every 5m`, `every 300ms`) or one time at an ISO
 * date (`2026-01-01T09:00:00Z`). Intervals count from `anchor` (the job's
 * creation), so a restart does not shift them. Cron expressions follow the
 * node's local time zone (croner's default).
 * @throws InputError naming the schedule and why it was refused.
 * @example
 * parseSchedule('every 5m', new Date()).next(new Date()); // five minutes after the anchor
 */
export function parseSchedule(text: string, anchor: Date): Schedule {
  const trimmed = text.trim();
  const every = EVERY.exec(trimmed);
  if (every) {
    const intervalMs = parseDuration(every[1], `interval in schedule "${trimmed}"`, MAX_INTERVAL_MS);
    if (intervalMs < MIN_INTERVAL_MS) {
      throw new InputError(`invalid schedule "${trimmed}": the interval must be at least ${MIN_INTERVAL_MS}ms`);
    }
    return {
      kind: 'every',
      text: trimmed,
      next: (after) => {
        const elapsed = after.getTime() - anchor.getTime();
        const periods = elapsed < 0 ? 0 : Math.floor(elapsed / intervalMs) + 1;
        return new Date(anchor.getTime() + periods * intervalMs);
      },
    };
  }
  if (ISO_DATE.test(trimmed)) {
    const at = new Date(trimmed);
    if (Number.isNaN(at.getTime())) throw new InputError(`invalid schedule "${trimmed}": not a valid date`);
    return { kind: 'at', text: trimmed, next: (after) => (at.getTime() > after.getTime() ? at : null) };
  }
  let pattern: Cron;
  try {
    // No callback: croner only computes dates and never starts a timer of its own.
    pattern = new Cron(trimmed);
  } catch (error) {
    const reason = errorMessage(error).replace(/^CronPattern: /, '');
    throw new InputError(
      `invalid schedule "${trimmed}": not a cron expression (${reason}), an interval such as "every 5m", or an ISO date`,
    );
  }
  return { kind: 'cron', text: trimmed, next: (after) => pattern.nextRun(after) };
}
