import { MAX_TIMER_MS } from '../../src/duration';
import { createDeadline } from '../../src/net/deadline';
import { collectGarbageEvery } from '../support/gc';

/**
 * Resolves once a timer of `ms` set now has fired: every timer set before it with as short a delay has fired
 * first (Node runs timers in the order they expire), so a deadline that would have fired by then had its chance.
 */
const timerFired = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the reason `signal` aborts with. */
const aborted = (signal: AbortSignal) =>
  new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));

describe('a deadline (net/deadline.ts)', () => {
  it('aborts with a TimeoutError once its time is up, whatever the collector does meanwhile', async () => {
    const parent = new AbortController();
    const stop = collectGarbageEvery(5);
    try {
      // Nothing but the deadline's own timer holds its controller: a weakly held timer would be collected here.
      const reason = await aborted(createDeadline(150, parent.signal).signal);
      expect(reason).toMatchObject({ name: 'TimeoutError', message: 'timed out after 150ms' });
    } finally {
      stop();
    }
    expect(parent.signal.aborted).toBe(false);
  });

  it("aborts with a parent's reason when a parent aborts first, and at once for one already aborted", async () => {
    const parent = new AbortController();
    const deadline = createDeadline(60_000, undefined, parent.signal);
    const heard = aborted(deadline.signal);
    parent.abort(new Error('shutting down'));
    expect(await heard).toMatchObject({ message: 'shutting down' });

    const early = createDeadline(60_000, AbortSignal.abort('gone'));
    expect(early.signal.aborted).toBe(true);
    expect(early.signal.reason).toBe('gone');
  });

  it('never aborts once cleared, and lets its parents go', async () => {
    const parent = new AbortController();
    const deadline = createDeadline(20, parent.signal);
    deadline.clear();
    await timerFired(21);
    expect(deadline.signal.aborted).toBe(false);
    parent.abort();
    expect(deadline.signal.aborted).toBe(false);
  });

  it('waits a delay past what a timer keeps as long as a timer can, instead of firing at once', async () => {
    const deadline = createDeadline(30 * 86_400_000);
    try {
      // An overflowing timer fires after 1 ms: past that, this one is still waiting.
      await timerFired(2);
      expect(deadline.signal.aborted).toBe(false);
    } finally {
      deadline.clear();
    }
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
  });
});
