import { newContextId } from '../../src/a2a/tasks/contextIds';

describe('new contextIds', () => {
  it('are RFC 9562 version 7 UUIDs ordered by creation time', () => {
    const earlier = newContextId(Date.parse('2026-01-01T00:00:00Z'));
    const later = newContextId(Date.parse('2026-01-01T00:00:00.001Z'));
    for (const id of [earlier, later])
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(earlier < later).toBe(true);
    expect(earlier.slice(0, 13)).toBe('019b76da-a800'); // 2026-01-01T00:00:00Z in milliseconds, hex
    expect(newContextId()).not.toBe(newContextId());
  });
});
