import { formatDuration, MAX_TIMER_MS, parseDuration, timerDelay } from '../../../src/duration';
import { parseSchedule } from '../../../src/tools/automator/schedule';

const anchor = new Date('2026-01-01T00:00:00.000Z');

describe('parseSchedule', () => {
  it('reads "every 5m" as an interval counted from the anchor', () => {
    const schedule = parseSchedule('every 5m', anchor);
    expect(schedule.kind).toBe('every');
    expect(schedule.next(anchor)?.toISOString()).toBe('2026-01-01T00:05:00.000Z');
    expect(schedule.next(new Date('2026-01-01T00:12:00.000Z'))?.toISOString()).toBe('2026-01-01T00:15:00.000Z');
  });

  it('reads a five-field cron expression through croner', () => {
    const schedule = parseSchedule('0 9 * * *', anchor);
    expect(schedule.kind).toBe('cron');
    expect(schedule.next(anchor)?.getTime()).toBeGreaterThan(anchor.getTime());
  });

  it('reads an ISO date as one time that has no next run once passed', () => {
    const schedule = parseSchedule('2026-01-02T10:00:00Z', anchor);
    expect(schedule.kind).toBe('at');
    expect(schedule.next(anchor)?.toISOString()).toBe('2026-01-02T10:00:00.000Z');
    expect(schedule.next(new Date('2026-01-03T00:00:00Z'))).toBeNull();
  });

  it('names the bad field of a cron expression', () => {
    expect(() => parseSchedule('61 * * * *', anchor)).toThrow(/invalid schedule "61 \* \* \* \*".*minute: 61/);
  });

  it('refuses text that is neither cron, interval nor date, saying what is accepted', () => {
    expect(() => parseSchedule('tomorrow morning', anchor)).toThrow(/not a cron expression .*"every 5m".*ISO date/);
  });

  it('refuses an interval with an unknown unit or below 100ms', () => {
    expect(() => parseSchedule('every 5 weeks', anchor)).toThrow(/invalid interval in schedule "every 5 weeks"/);
    expect(() => parseSchedule('every 10ms', anchor)).toThrow(/at least 100ms/);
  });

  it('refuses an interval over a year, naming the maximum', () => {
    expect(parseSchedule('every 365d', anchor).next(anchor)).toEqual(new Date(anchor.getTime() + 365 * 86_400_000));
    expect(() => parseSchedule('every 366d', anchor)).toThrow(
      'invalid interval in schedule "every 366d" "366d": at most 365d',
    );
    expect(() => parseSchedule('every 1000000000d', anchor)).toThrow(/at most 365d/);
  });
});

describe('parseDuration', () => {
  it('converts each unit to milliseconds', () => {
    expect([
      parseDuration('250ms', 't'),
      parseDuration('2s', 't'),
      parseDuration('1.5m', 't'),
      parseDuration('1h', 't'),
    ]).toEqual([250, 2000, 90_000, 3_600_000]);
  });

  it('names what was being parsed when it refuses', () => {
    expect(() => parseDuration('soon', 'timeout of step "a"')).toThrow('invalid timeout of step "a" "soon"');
  });

  it('refuses a duration past its maximum, naming the maximum in the largest whole unit', () => {
    expect(parseDuration('10m', 'a2a.longPollTimeout', 600_000)).toBe(600_000);
    expect(() => parseDuration('30d', 'a2a.longPollTimeout', 600_000)).toThrow(
      'invalid a2a.longPollTimeout "30d": at most 10m',
    );
    expect([formatDuration(1500), formatDuration(90_000), formatDuration(86_400_000)]).toEqual(['1500ms', '90s', '1d']);
  });

  it('keeps every timer delay within what a Node timer keeps', () => {
    expect([timerDelay(-5), timerDelay(1000), timerDelay(30 * 86_400_000)]).toEqual([0, 1000, MAX_TIMER_MS]);
  });
});
