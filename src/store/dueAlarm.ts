/** The longest timer Node keeps (a longer one fires at once): an entry due later is looked at again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Wakes the takers of one job queue when its earliest known entry comes due. */
export interface DueAlarm {
  /** The takers' wake-ups (`JobQueue.onDue`). */
  readonly wakers: Set<() => void>;
  /** Wakes every taker now, and disarms. */
  ring(): void;
  /** Rings at `dueAt` (milliseconds since the epoch; at once when past) unless it rings sooner already. */
  setFor(dueAt: number): void;
  /** Disarms and forgets the takers. */
  stop(): void;
}

/**
 * The alarm of one queue, shared by both job queues (`sqlite/jobQueue.ts`,
 * `postgres/jobQueue.ts`): a single timer, moved earlier by each entry
 * learned of, cleared when it rings (the takers' next take arms it again
 * for the earliest entry left). No polling: a queue with nothing due keeps
 * no timer shorter than its earliest entry.
 * @example
 * const alarm = createDueAlarm(() => clock().getTime());
 * alarm.wakers.add(() => poller.wake());
 * alarm.setFor(Date.parse(occurrence.scheduledFor));
 */
export function createDueAlarm(now: () => number = Date.now): DueAlarm {
  const wakers = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;
  let ringsAt = Infinity;
  const ring = () => {
    clearTimeout(timer);
    ringsAt = Infinity;
    for (const wake of wakers) wake();
  };
  return {
    wakers,
    ring,
    setFor(dueAt) {
      if (!(dueAt < ringsAt)) return;
      clearTimeout(timer);
      ringsAt = dueAt;
      timer = setTimeout(ring, Math.min(Math.max(0, dueAt - now()), LONGEST_TIMER_MS));
      timer.unref();
    },
    stop() {
      clearTimeout(timer);
      ringsAt = Infinity;
      wakers.clear();
    },
  };
}
