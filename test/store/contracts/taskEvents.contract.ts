import type { TaskEventLog, TaskEventRecord, TaskKey } from '../../../src/store/taskEvents';
import type { TaskRows } from '../../../src/store/taskRows';

/** An open task event log (and the task rows whose purge prunes it) on a fresh, empty database. */
export interface OpenedTaskEvents {
  readonly events: TaskEventLog;
  readonly rows: TaskRows;
  /** Moves the events of these tasks `ms` into the past (as if written then). */
  backdate(taskIds: readonly string[], ms: number): Promise<void>;
  close(): Promise<void>;
}

/** How the task-events contract gets a database: SQLite, PostgreSQL, each run through the same suite. */
export interface TaskEventsFactory {
  name: string;
  open(): Promise<OpenedTaskEvents>;
}

const key = (taskId: string, owner = 'bearer:alice'): TaskKey => ({ tenant: '', owner, taskId });
const record = (seq: number, text: string, terminal = false): TaskEventRecord => ({
  seq,
  event: { statusUpdate: { text } },
  terminal,
});
const texts = (records: readonly TaskEventRecord[]) =>
  records.map((r) => `${r.seq}:${(r.event as { statusUpdate: { text: string } }).statusUpdate.text}`);
const collect = async (records: AsyncIterable<TaskEventRecord>) => {
  const seen: TaskEventRecord[] = [];
  for await (const r of records) seen.push(r);
  return seen;
};

/**
 * The task event log's contract (issue 27): each event under its
 * generation, one per generation, nothing after the end, read and followed
 * from any generation on with no gap and no duplicate.
 */
export function taskEventsContract(factory: TaskEventsFactory): void {
  describe(`task events (${factory.name})`, () => {
    let opened: OpenedTaskEvents;
    beforeEach(async () => {
      opened = await factory.open();
    });
    afterEach(() => opened.close());

    it('reads a task’s events after a generation, in order, and another caller sees none of them', async () => {
      const { events } = opened;
      const task = key('t-read-a-task-id-longer-than-any-uuid-0123456789');
      await Promise.all([1, 2, 3].map((n) => events.append(task, record(n, `chunk ${n}`))));
      await events.append(task, record(4, 'done', true));
      expect(texts(await events.read(task, 0))).toEqual(['1:chunk 1', '2:chunk 2', '3:chunk 3', '4:done']);
      expect(texts(await events.read(task, 2))).toEqual(['3:chunk 3', '4:done']);
      expect((await events.read(task, 4)).length).toBe(0);
      expect((await events.read(task, 0)).at(-1)?.terminal).toBe(true);
      expect(await events.read(key(task.taskId, 'bearer:mallory'), 0)).toEqual([]);
    });

    it('appends a group of 150 events of two tasks in one commit (more than one statement binds), fenced at the end', async () => {
      const { events } = opened;
      const [a, b] = [key('t-group-a'), key('t-group-b')];
      await Promise.all(
        Array.from({ length: 75 }, (_, i) => [
          events.append(a, record(i + 1, `a ${i + 1}`, i === 69)),
          events.append(b, record(i + 1, `b ${i + 1}`)),
        ]).flat(),
      );
      expect(texts(await events.read(a, 0))).toEqual(Array.from({ length: 70 }, (_, i) => `${i + 1}:a ${i + 1}`));
      expect(texts(await events.read(b, 0))).toEqual(Array.from({ length: 75 }, (_, i) => `${i + 1}:b ${i + 1}`));
    });

    it('keeps one event per generation: a second writer of a generation is dropped, the first stays', async () => {
      const { events } = opened;
      const task = key('t-one-per-generation');
      await events.append(task, record(1, 'first'));
      await Promise.all([events.append(task, record(2, 'by a')), events.append(task, record(2, 'by b'))]);
      await events.append(task, record(1, 'late first'));
      expect(texts(await events.read(task, 0))).toEqual(['1:first', '2:by a']);
    });

    it('refuses every event after the terminal one, in its batch and later', async () => {
      const { events } = opened;
      const task = key('t-fenced');
      await Promise.all([
        events.append(task, record(1, 'working')),
        events.append(task, record(2, 'failed', true)),
        events.append(task, record(3, 'in the same batch')),
      ]);
      await events.append(task, record(4, 'later'));
      await events.append(task, record(5, 'a second end', true));
      expect(texts(await events.read(task, 0))).toEqual(['1:working', '2:failed']);
    });

    it('follows from a generation on: what is stored, then what comes, once each, to the terminal event', async () => {
      const { events } = opened;
      const task = key('t-follow');
      await events.append(task, record(1, 'a'));
      await events.append(task, record(2, 'b'));
      const followed = collect(events.follow(task, { after: 1 }));
      for (let n = 3; n <= 30; n += 1) void events.append(task, record(n, `c${n}`));
      await events.append(task, record(31, 'end', true));
      const seen = await followed;
      expect(seen.map((r) => r.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
      expect(seen.at(-1)?.terminal).toBe(true);
    });

    it('gives a follower the events after a gap (generations never stored) as they are: the reader sees the jump', async () => {
      const { events } = opened;
      const task = key('t-gap');
      await events.append(task, record(1, 'first turn'));
      await events.append(task, record(7, 'a later turn', true));
      expect((await collect(events.follow(task, { after: 1 }))).map((r) => r.seq)).toEqual([7]);
    });

    it('stops following when the signal aborts', async () => {
      const { events } = opened;
      const task = key('t-abort');
      await events.append(task, record(1, 'only'));
      const stop = new AbortController();
      const seen: number[] = [];
      for await (const r of events.follow(task, { after: 0, signal: stop.signal })) {
        seen.push(r.seq);
        stop.abort();
      }
      expect(seen).toEqual([1]);
      const waiting = collect(events.follow(task, { after: 1, signal: AbortSignal.timeout(50) }));
      expect(await waiting).toEqual([]);
    });

    it('keeps the newest snapshot under its event’s generation, none for a dropped event, and purges both', async () => {
      const { events } = opened;
      const task = key('t-snapshot');
      await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          events.append(task, { ...record(n, `c${n}`), snapshot: n % 2 === 0 ? { upTo: n } : undefined }),
        ),
      );
      expect(await events.snapshot(task)).toEqual({ seq: 4, task: { upTo: 4 } });
      await events.append(task, { ...record(4, 'a second 4'), snapshot: { upTo: 'never' } });
      await events.append(task, { ...record(6, 'more'), snapshot: { upTo: 6 } });
      expect(await events.snapshot(task)).toEqual({ seq: 6, task: { upTo: 6 } });
      expect(await events.snapshot(key('t-none'))).toBeUndefined();
      await events.purge([task]);
      expect(await events.snapshot(task)).toBeUndefined();
      expect(await events.read(task, 0)).toEqual([]);
    });

    it('keeps text JSONB would refuse', async () => {
      const { events } = opened;
      const task = key('t-nul');
      await events.append(task, record(1, 'nul \u0000 here', true));
      expect(texts(await events.read(task, 0))).toEqual(['1:nul \u0000 here']);
    });

    it('prunes, with the task rows’ purge, the events of a task ended over five minutes ago but its terminal one', async () => {
      const { events, rows, backdate } = opened;
      const append = async (taskId: string, upTo: number, ended: boolean) => {
        for (let n = 1; n <= upTo; n += 1)
          await events.append(key(taskId), {
            ...record(n, `${n}`, ended && n === upTo),
            snapshot: n === 2 ? {} : undefined,
          });
      };
      await append('t-ended', 3, true);
      await append('t-ended-now', 3, true);
      await append('t-running', 2, false);
      await backdate(['t-ended', 't-running'], 6 * 60_000);
      await rows.purgeFinished(new Date(0));
      const seqs = async (taskId: string) => (await events.read(key(taskId), 0)).map((r) => r.seq);
      // The terminal event stays: it refuses a late writer's events.
      expect(await seqs('t-ended')).toEqual([3]);
      expect(await events.snapshot(key('t-ended'))).toBeUndefined();
      expect(await seqs('t-ended-now')).toEqual([1, 2, 3]);
      expect(await seqs('t-running')).toEqual([1, 2]);
      expect(await events.snapshot(key('t-running'))).toEqual({ seq: 2, task: {} });
      await events.append(key('t-ended'), record(4, 'late'));
      expect(await seqs('t-ended')).toEqual([3]);
    });
  });
}
