import { parseDuration } from '../../../src/duration';
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
});
