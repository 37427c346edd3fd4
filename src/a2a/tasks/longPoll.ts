import { timerDelay } from '../../duration';
import type { TaskEventLog, TaskKey } from '../../store/taskEvents';
import type { LiveTask, LiveTasks } from './liveTasks';

/**
 * GetTask as a long poll (issue 27; the 1.1 draft's `currentGeneration`):
 * the answer waits until the task's generation passes the caller's, or a
 * bounded time ends. Nothing polls: a task live here wakes it through its
 * listeners as each event is folded; any other is woken by its event log
 * (PostgreSQL: the `LISTEN` the replicas share; SQLite: the commit).
 */

/** What a long poll waits on. */
export interface LongPoll {
  /** The task's live copy in this process, when it runs here. */
  held: LiveTask | undefined;
  key: TaskKey;
  /** The caller's generation: the wait ends once the task's is greater. */
  after: number;
  timeoutMs: number;
}

/**
 * Resolves once the task's generation is greater than `after` (true), or
 * after `timeoutMs` (false). The caller then reads the task as it stands.
 * @example
 * await waitForGeneration(liveTasks, events, { held, key, after: 5, timeoutMs: 30_000 });
 */
export async function waitForGeneration(live: LiveTasks, events: TaskEventLog, poll: LongPoll): Promise<boolean> {
  const { held, key, after, timeoutMs } = poll;
  if (held && held.generation > after) return true;
  const stop = new AbortController();
  // Within what a timer keeps: an overflowing one would answer at once, and a client polling again would spin.
  const timer = setTimeout(() => stop.abort(), timerDelay(timeoutMs));
  try {
    if (held) {
      return await new Promise<boolean>((resolve) => {
        const unlisten = live.listen(held, (heard) => {
          if (heard.generation <= after) return;
          unlisten();
          resolve(true);
        });
        stop.signal.addEventListener('abort', () => {
          unlisten();
          resolve(false);
        });
      });
    }
    for await (const record of events.follow(key, { after, signal: stop.signal })) if (record.seq > after) return true;
    return false;
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
}
