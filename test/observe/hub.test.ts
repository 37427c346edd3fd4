import { createObservationHub } from '../../src/observation/hub';
import type { Observer } from '../../src/observation/observer';

/** A sink that counts what reaches it. */
function countingSink(): Observer & { writes: number[]; turns: string[] } {
  const writes: number[] = [];
  const turns: string[] = [];
  return {
    writes,
    turns,
    active: true,
    turn: (start) => {
      turns.push(start.sessionId);
      return { child: () => ({}) as never, set: () => {}, end: () => {}, traceparent: () => undefined };
    },
    storeWrite: (ms) => void writes.push(ms),
    storeNotification: () => {},
  };
}

describe('the observation hub', () => {
  it('listens to nothing until its sinks are attached, then passes every report on, once attached only', () => {
    const hub = createObservationHub();
    expect(hub.active).toBe(false);
    hub.storeWrite(1);
    const sink = countingSink();
    hub.attach([sink]);
    expect(hub.active).toBe(true);
    hub.storeWrite(2);
    hub.turn({ caller: 'owner', sessionId: 's1' });
    expect([sink.writes, sink.turns]).toEqual([[2], ['s1']]);
    expect(() => hub.attach([countingSink()])).toThrow('the observation hub has its sinks already');
  });

  it('stays a no-op when no sink listens, and closes the sinks it was given, going quiet first', async () => {
    const quiet = createObservationHub();
    quiet.attach([]);
    expect(quiet.active).toBe(false);
    await quiet.close();

    const hub = createObservationHub();
    const sink = countingSink();
    const closed: number[] = [];
    hub.attach([sink], async () => void closed.push(sink.writes.length));
    hub.storeWrite(3);
    await hub.close();
    hub.storeWrite(4);
    expect([closed, sink.writes, hub.active]).toEqual([[1], [3], false]);
  });
});
