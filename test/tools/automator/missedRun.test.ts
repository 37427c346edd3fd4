import { wasMissed } from '../../../src/tools/automator/cronScheduler';
import { parseSchedule } from '../../../src/tools/automator/schedule';

describe('the scheduler’s missed-run rule', () => {
  const anchor = new Date('2026-01-01T00:00:00.000Z');
  const at = (ms: number) => new Date(anchor.getTime() + ms);

  it('calls a fire time missed once a later fire time of the schedule has passed too, late but not missed before', () => {
    const every2s = parseSchedule('every 2s', anchor);
    const due = at(2_000).toISOString();
    expect(wasMissed(every2s, due, at(2_000))).toBe(false);
    expect(wasMissed(every2s, due, at(3_900))).toBe(false);
    expect(wasMissed(every2s, due, at(4_000))).toBe(true);
    expect(wasMissed(every2s, due, at(60_000))).toBe(true);
  });

  it('calls a one-time job missed when it is taken more than a minute after its time', () => {
    const once = parseSchedule(at(1_000).toISOString(), anchor);
    const due = at(1_000).toISOString();
    expect(wasMissed(once, due, at(30_000))).toBe(false);
    expect(wasMissed(once, due, at(62_000))).toBe(true);
  });
});
