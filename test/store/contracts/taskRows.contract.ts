import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { textPart } from '../../../src/a2a/tasks/messages';
import type { Redact } from '../../../src/log/redactJson';
import {
  InvalidPageTokenError,
  sendTaskId,
  type PushConfigRows,
  type TaskQuery,
  type TaskReader,
  type TaskRows,
} from '../../../src/store/taskRows';

/** An open set of task and push-config rows on a fresh, empty database. */
export interface OpenedTaskRows {
  readonly tasks: TaskRows;
  readonly pushConfigs: PushConfigRows;
  /** Closes and opens the same database again (what survives a restart). */
  reopen(): Promise<void>;
  /** Closes the database and removes what the test created. */
  close(): Promise<void>;
}

/** How the task-rows contract gets a database: SQLite, PostgreSQL, each run through the same suite. */
export interface TaskRowsFactory {
  name: string;
  /** `redact` masks secret values in every row written (the node's redactor). */
  open(options: { redact?: Redact }): Promise<OpenedTaskRows>;
}

const alice: TaskReader = { tenant: '', owner: 'alice', everyone: false };
const bob: TaskReader = { tenant: '', owner: 'bob', everyone: false };
const owner: TaskReader = { tenant: '', owner: 'owner', everyone: true };
const now = Date.parse('2026-01-01T00:00:00Z');
const query = (fields: Partial<TaskQuery> = {}): TaskQuery => ({
  pageSize: 10,
  includeArtifacts: false,
  includeHistory: true,
  ...fields,
});

function task(id: string, state: TaskState, at: number, contextId = 'ctx-1', text = 'answer'): Task {
  return {
    id,
    contextId,
    status: { state, message: undefined, timestamp: new Date(at).toISOString() },
    artifacts: [
      {
        artifactId: `a-${id}`,
        name: 'answer',
        description: '',
        parts: [textPart(text)],
        metadata: undefined,
        extensions: [],
      },
    ],
    history: [
      {
        messageId: `m-${id}`,
        contextId,
        taskId: id,
        role: Role.ROLE_USER,
        parts: [textPart(`hello ${id}`)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    ],
    metadata: { source: 'test' },
  };
}

/** What every store of A2A task rows and push configs must do. */
export function taskRowsContract(factory: TaskRowsFactory): void {
  describe(`A2A task rows (${factory.name})`, () => {
    let opened: OpenedTaskRows | undefined;
    const open = async (options: { redact?: Redact } = {}) => {
      opened = await factory.open(options);
      return opened;
    };
    afterEach(async () => {
      await opened?.close();
      opened = undefined;
    });

    it('round-trips a task, scoped to its caller; the owner reads any caller’s', async () => {
      const { tasks } = await open();
      const original = task('t1', TaskState.TASK_STATE_COMPLETED, now);
      await tasks.write([{ scope: alice, task: original, generation: 7 }]);
      expect(await tasks.get(alice, 't1')).toEqual({
        scope: { tenant: '', owner: 'alice' },
        task: original,
        generation: 7,
      });
      expect(await tasks.get(bob, 't1')).toBeUndefined();
      expect(await tasks.get({ ...alice, tenant: 'other' }, 't1')).toBeUndefined();
      expect((await tasks.get(owner, 't1'))?.scope.owner).toBe('alice');
      expect(await tasks.get(owner, 'missing')).toBeUndefined();
    });

    it('takes each row when written; a later write replaces it; reads see a write before it commits', async () => {
      const { tasks } = await open();
      const live = task('live', TaskState.TASK_STATE_WORKING, now);
      const first = tasks.write([{ scope: alice, task: live, generation: 2 }]);
      expect((await tasks.get(alice, 'live'))?.generation).toBe(2);
      live.status!.state = TaskState.TASK_STATE_CANCELED; // changed after the write: not written
      expect((await tasks.get(alice, 'live'))?.task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      await first;
      const settled = tasks.write([
        { scope: alice, task: task('live', TaskState.TASK_STATE_COMPLETED, now + 1), generation: 5 },
      ]);
      expect((await tasks.get(alice, 'live'))?.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect((await tasks.list(alice, query())).tasks.map((t) => t.status?.state)).toEqual([
        TaskState.TASK_STATE_COMPLETED,
      ]);
      await settled;
      expect((await tasks.get(alice, 'live'))?.generation).toBe(5);
      await tasks.write([
        { scope: alice, task: task('a', TaskState.TASK_STATE_WORKING, now) },
        { scope: bob, task: task('a', TaskState.TASK_STATE_WORKING, now) },
      ]);
      expect((await tasks.list(owner, query())).totalSize).toBe(3);
    });

    it('lists newest first in pages, with filters, without artifacts or history unless asked', async () => {
      const { tasks } = await open();
      const rows = [0, 1, 2, 3, 4].map((i) => ({
        scope: alice,
        task: task(
          `t${i}`,
          i % 2 ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_COMPLETED,
          now + i * 1000,
          i < 3 ? 'ctx-a' : 'ctx-b',
        ),
      }));
      await tasks.write(rows);
      await tasks.write([{ scope: bob, task: task('other', TaskState.TASK_STATE_COMPLETED, now) }]);
      const first = await tasks.list(alice, query({ pageSize: 2, includeArtifacts: true }));
      expect(first.tasks.map((t) => t.id)).toEqual(['t4', 't3']);
      expect(first.totalSize).toBe(5);
      expect(first.tasks[0].artifacts).toHaveLength(1);
      const second = await tasks.list(alice, query({ pageSize: 2, pageToken: first.nextPageToken }));
      expect(second.tasks.map((t) => t.id)).toEqual(['t2', 't1']);
      expect(second.tasks[0].artifacts).toEqual([]);
      expect(second.totalSize).toBe(5);
      const third = await tasks.list(alice, query({ pageSize: 2, pageToken: second.nextPageToken }));
      expect(third.tasks.map((t) => t.id)).toEqual(['t0']);
      expect(third.nextPageToken).toBe('');

      const failed = await tasks.list(alice, query({ state: TaskState.TASK_STATE_FAILED }));
      expect(failed.tasks.map((t) => t.id)).toEqual(['t3', 't1']);
      const inB = await tasks.list(alice, query({ contextId: 'ctx-b', includeHistory: false }));
      expect(inB.tasks.map((t) => t.id)).toEqual(['t4', 't3']);
      expect(inB.tasks[0].history).toEqual([]);
      const recent = await tasks.list(alice, query({ updatedAfter: now + 2500 }));
      expect(recent.tasks.map((t) => t.id)).toEqual(['t4', 't3']);
      expect((await tasks.list(owner, query())).tasks.map((t) => t.id)).toEqual([
        't4',
        't3',
        't2',
        't1',
        't0', // the same time as bob's: ties go by id, descending
        'other',
      ]);
      await expect(tasks.list(alice, query({ pageToken: 'bm90LWEtdG9rZW4' }))).rejects.toBeInstanceOf(
        InvalidPageTokenError,
      );
    });

    it('claims a task waiting for its caller once, setting it working; never a running, finished or missing one', async () => {
      const { tasks } = await open();
      await tasks.write([
        { scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now) },
        { scope: alice, task: task('signs-in', TaskState.TASK_STATE_AUTH_REQUIRED, now) },
        { scope: alice, task: task('runs', TaskState.TASK_STATE_WORKING, now) },
        { scope: alice, task: task('waits', TaskState.TASK_STATE_SUBMITTED, now) },
        { scope: alice, task: task('done', TaskState.TASK_STATE_COMPLETED, now) },
      ]);
      const at = new Date(now + 10);
      const won = await tasks.claim(alice, 'asks', { messageId: 'm-2', at });
      expect(won.won).toBe(true);
      const claimed = won.won ? won.claimed : undefined;
      expect(claimed?.scope).toEqual({ tenant: '', owner: 'alice' });
      // The task as it was, but working since the claim: what the turn starts from.
      const asked = task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now);
      expect(claimed?.task).toEqual({
        ...asked,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: at.toISOString() },
      });
      expect((await tasks.get(alice, 'asks'))?.task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      // Held by the turn of m-2: the claim of another message loses, and says whose turn holds it.
      expect(await tasks.claim(alice, 'asks', { messageId: 'm-3', at })).toMatchObject({
        won: false,
        state: TaskState.TASK_STATE_WORKING,
        messageId: 'm-2',
      });
      for (const [id, state] of [
        ['runs', TaskState.TASK_STATE_WORKING],
        ['waits', TaskState.TASK_STATE_SUBMITTED],
        ['done', TaskState.TASK_STATE_COMPLETED],
      ] as const) {
        expect(await tasks.claim(alice, id, { messageId: 'm-4', at })).toMatchObject({ won: false, state });
      }
      expect((await tasks.get(alice, 'done'))?.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(await tasks.claim(alice, 'missing', { messageId: 'm-5', at })).toMatchObject({
        won: false,
        state: undefined,
      });
      // Scoped: another caller's claim finds no such task.
      expect(await tasks.claim(bob, 'signs-in', { messageId: 'm-6', at })).toMatchObject({
        won: false,
        state: undefined,
      });
      // A cancel claims with no message.
      expect((await tasks.claim(alice, 'signs-in', { at })).won).toBe(true);

      // The turn writes on over its claim; when it asks its caller again, the task can be claimed again.
      await tasks.write([{ scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now + 20) }]);
      expect((await tasks.claim(alice, 'asks', { messageId: 'm-7', at })).won).toBe(true);
    });

    it('lets exactly one of many concurrent claims of a task win', async () => {
      const { tasks } = await open();
      await tasks.write([{ scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now) }]);
      const at = new Date(now + 10);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => tasks.claim(alice, 'asks', { messageId: `m-${i}`, at })),
      );
      const winners = claims.flatMap((claim, i) => (claim.won ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const claim of claims.filter((c) => !c.won)) {
        expect(claim).toMatchObject({ won: false, state: TaskState.TASK_STATE_WORKING, messageId: `m-${winners[0]}` });
      }
    });

    it('records a follow-up’s send key with its claim: a retry, even after the turn, is told the task and claims nothing', async () => {
      const { tasks } = await open();
      await tasks.write([
        { scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now), generation: 3 },
      ]);
      const send = { scope: alice, key: 'message:m-answer', keptMs: 60_000 };
      const at = new Date(now + 10);
      const claims = await Promise.all(
        Array.from({ length: 8 }, () => tasks.claim(alice, 'asks', { messageId: 'm-answer', at, send })),
      );
      expect(claims.filter((c) => c.won)).toHaveLength(1);
      for (const lost of claims.filter((c) => !c.won)) expect(lost).toMatchObject({ won: false, sentAs: 'asks' });
      // The turn asks again: the task is claimable, but not by a retry of the answer already taken.
      await tasks.write([
        { scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now + 20), generation: 6 },
      ]);
      expect(await tasks.claim(alice, 'asks', { messageId: 'm-answer', at, send })).toMatchObject({
        won: false,
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        sentAs: 'asks',
      });
      // A claim that loses for another reason records no key.
      const other = { ...send, key: 'message:m-other' };
      await tasks.write([{ scope: alice, task: task('done', TaskState.TASK_STATE_COMPLETED, now) }]);
      expect((await tasks.claim(alice, 'done', { messageId: 'm-other', at, send: other })).won).toBe(false);
      expect((await tasks.claim(alice, 'asks', { messageId: 'm-other', at, send: other })).won).toBe(true);
    });

    it('claims a task only at the generation the caller expects, and says which it is at', async () => {
      const { tasks } = await open();
      await tasks.write([
        { scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now), generation: 7 },
      ]);
      const at = new Date(now + 10);
      expect(await tasks.claim(alice, 'asks', { messageId: 'm-1', at, generation: 6 })).toMatchObject({
        won: false,
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        generation: 7,
      });
      const won = await tasks.claim(alice, 'asks', { messageId: 'm-1', at, generation: 7 });
      expect(won.won && won.claimed.generation).toBe(7);
    });

    it('claims a task whose row is written but not committed yet, after that write', async () => {
      const { tasks } = await open();
      const written = tasks.write([{ scope: alice, task: task('asks', TaskState.TASK_STATE_INPUT_REQUIRED, now) }]);
      const claim = await tasks.claim(alice, 'asks', { messageId: 'm-2', at: new Date(now + 10) });
      await written;
      expect(claim.won).toBe(true);
      expect((await tasks.get(alice, 'asks'))?.task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    });

    it('counts every caller’s tasks by state', async () => {
      const { tasks } = await open();
      await tasks.write([
        { scope: alice, task: task('w', TaskState.TASK_STATE_WORKING, now) },
        { scope: alice, task: task('c1', TaskState.TASK_STATE_COMPLETED, now) },
        { scope: bob, task: task('c2', TaskState.TASK_STATE_COMPLETED, now) },
      ]);
      expect(await tasks.countByState()).toEqual({ TASK_STATE_WORKING: 1, TASK_STATE_COMPLETED: 2 });
    });

    it('masks secret values in every column it writes', async () => {
      const { tasks } = await open({ redact: (text) => text.split('hunter22').join('[REDACTED]') });
      await tasks.write([
        { scope: alice, task: task('s', TaskState.TASK_STATE_COMPLETED, now, 'ctx-1', 'the key is hunter22') },
      ]);
      const read = await tasks.get(alice, 's');
      expect(JSON.stringify(read)).not.toContain('hunter22');
      expect(read?.task.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'the key is [REDACTED]' });
    });

    it('fails submitted and working tasks after a restart, leaves the others, and keeps rows across it', async () => {
      const store = await open();
      await store.tasks.write([
        { scope: alice, task: task('w', TaskState.TASK_STATE_WORKING, now) },
        { scope: alice, task: task('s', TaskState.TASK_STATE_SUBMITTED, now) },
        { scope: bob, task: task('i', TaskState.TASK_STATE_INPUT_REQUIRED, now) },
        { scope: bob, task: task('c', TaskState.TASK_STATE_COMPLETED, now) },
      ]);
      await store.reopen();
      expect(await store.tasks.failInterrupted('node restarted', new Date(now + 5))).toBe(2);
      const working = (await store.tasks.get(alice, 'w'))?.task;
      expect(working?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(working?.status?.timestamp).toBe(new Date(now + 5).toISOString());
      expect(working?.status?.message?.parts[0].content).toEqual({ $case: 'text', value: 'node restarted' });
      expect(working?.status?.message?.contextId).toBe('ctx-1');
      expect(working?.history).toHaveLength(1);
      expect((await store.tasks.get(bob, 'i'))?.task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(await store.tasks.failInterrupted('node restarted', new Date(now + 6))).toBe(0);
    });

    it('purges finished tasks and their push configs past the cutoff, never unfinished ones', async () => {
      const { tasks, pushConfigs } = await open();
      await tasks.write([
        { scope: alice, task: task('old', TaskState.TASK_STATE_COMPLETED, now - 10_000) },
        { scope: alice, task: task('waiting', TaskState.TASK_STATE_INPUT_REQUIRED, now - 10_000) },
        { scope: alice, task: task('new', TaskState.TASK_STATE_COMPLETED, now) },
      ]);
      const hook = {
        tenant: '',
        id: 'h',
        taskId: 'old',
        url: 'https://hooks.example.com',
        token: '',
        authentication: undefined,
      };
      await pushConfigs.save(alice, 'old', hook, '1.0');
      expect(await pushConfigs.hasAny(alice, 'old')).toBe(true);
      expect(await tasks.purgeFinished(new Date(now - 5_000))).toBe(1);
      expect(await tasks.get(alice, 'old')).toBeUndefined();
      expect(await tasks.get(alice, 'waiting')).toBeDefined();
      expect(await tasks.get(alice, 'new')).toBeDefined();
      expect(await pushConfigs.load(alice, 'old')).toEqual([]);
      expect(await pushConfigs.hasAny(alice, 'old')).toBe(false);
    });

    it('records a send’s key once: a retry gets its task, of a racing hundred one wins; after a restart the task is there', async () => {
      const store = await open();
      const day = 86_400_000;
      const send = { scope: alice, key: 'message:m-1', keptMs: day };
      const first = sendTaskId(send, Date.now());
      const row = (id: string) => ({
        scope: alice,
        task: task(id, TaskState.TASK_STATE_SUBMITTED, now),
        generation: 0,
      });
      expect(await store.tasks.claimSend(send, first, row(first))).toEqual({ taskId: first, created: true });
      expect(await store.tasks.claimSend(send, first, row(first))).toEqual({ taskId: first, created: false });
      // Keys are per caller: Bob's message with the same id is his own send, with a task id of its own.
      const bobs = sendTaskId({ ...send, scope: bob }, Date.now());
      expect(bobs).not.toBe(first);
      expect(await store.tasks.claimSend({ ...send, scope: bob }, bobs)).toEqual({ taskId: bobs, created: true });

      const raced = { ...send, key: 'idempotency:k-9' };
      const racedId = sendTaskId(raced, Date.now());
      const racing = await Promise.all(
        Array.from({ length: 100 }, () => store.tasks.claimSend(raced, racedId, row(racedId))),
      );
      expect(racing.filter((c) => c.created)).toHaveLength(1);
      expect(new Set(racing.map((c) => c.taskId))).toEqual(new Set([racedId]));

      // The process that ran them ended before their turns wrote anything: the sweep leaves each send's task failed.
      await store.reopen();
      await store.tasks.failInterrupted('node restarted', new Date(now + 1));
      expect(await store.tasks.claimSend(send, first, row(first))).toEqual({ taskId: first, created: false });
      expect((await store.tasks.get(alice, first))?.task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect((await store.tasks.get(alice, racedId))?.task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect((await store.tasks.list(alice, query({ pageSize: 100 }))).tasks.map((t) => t.id).sort()).toEqual(
        [first, racedId].sort(),
      );
      expect(await store.tasks.failInterrupted('node restarted', new Date(now + 2))).toBe(0);
    });

    it('writes and claims a group of 150 sends (more than one statement binds) in one commit, each once', async () => {
      const { tasks } = await open();
      const sends = Array.from({ length: 150 }, (_, i) => ({
        scope: alice,
        key: `message:g-${i}`,
        keptMs: 86_400_000,
      }));
      const ids = sends.map((send) => sendTaskId(send, Date.now()));
      const claimed = await Promise.all(
        sends.map((send, i) =>
          tasks.claimSend(send, ids[i]!, { scope: alice, task: task(ids[i]!, TaskState.TASK_STATE_SUBMITTED, now) }),
        ),
      );
      expect(claimed.filter((c) => c.created)).toHaveLength(150);
      expect(claimed.map((c) => c.taskId)).toEqual(ids);
      await tasks.write(
        ids.map((id, i) => ({ scope: alice, task: task(id, TaskState.TASK_STATE_COMPLETED, now + i), generation: i })),
      );
      const listed = await tasks.list(alice, query({ pageSize: 100 }));
      expect(listed.totalSize).toBe(150);
      expect(listed.tasks.every((t) => t.status?.state === TaskState.TASK_STATE_COMPLETED)).toBe(true);
      expect((await tasks.get(alice, ids[149]!))?.generation).toBe(149);
      const retried = await Promise.all(sends.map((send, i) => tasks.claimSend(send, ids[i]!)));
      expect(retried.every((c, i) => !c.created && c.taskId === ids[i])).toBe(true);
    });

    it('finds a send’s task by the id it derives, until the window after the one it was sent in ends', async () => {
      const store = await open();
      const send = { scope: alice, key: 'message:m-window', keptMs: 60_000 };
      const sentAt = Date.now();
      const first = sendTaskId(send, sentAt);
      await store.tasks.claimSend(send, first, {
        scope: alice,
        task: task(first, TaskState.TASK_STATE_SUBMITTED, now),
      });
      // Its turn wrote the task: a retry finds it by its row.
      await store.tasks.write([{ scope: alice, task: task(first, TaskState.TASK_STATE_COMPLETED, now) }]);
      expect(await store.tasks.claimSend(send, first)).toEqual({ taskId: first, created: false });
      // A retry in the next window derives another id and is still told the first task.
      const later = sentAt + 60_000;
      const next = sendTaskId(send, later);
      expect(next).not.toBe(first);
      const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
      try {
        expect(await store.tasks.claimSend(send, next)).toEqual({ taskId: first, created: false });
      } finally {
        clock.mockRestore();
      }
    });

    it('lets a send take over a key past its window; the purge keeps the keys within theirs', async () => {
      const store = await open();
      const short = { scope: alice, key: 'message:m-short', keptMs: 1 };
      const sentAt = Date.now();
      const old = sendTaskId(short, sentAt);
      expect(await store.tasks.claimSend(short, old)).toEqual({ taskId: old, created: true });
      // A second later by the clock the store reads: past the 1 ms window, and the next one.
      const clock = jest.spyOn(Date, 'now').mockReturnValue(sentAt + 1_100);
      const send = { ...short, keptMs: 60_000 };
      let taken: string;
      try {
        taken = sendTaskId(send, Date.now());
        expect(await store.tasks.claimSend(send, taken)).toEqual({ taskId: taken, created: true });
        expect(await store.tasks.claimSend(send, taken)).toEqual({ taskId: taken, created: false });
      } finally {
        clock.mockRestore();
      }
      await store.tasks.purgeFinished(new Date(0));
      expect(await store.tasks.claimSend(send, taken)).toEqual({ taskId: taken, created: false });
    });

    it('keeps push configs per scope and task with their wire version, across a restart', async () => {
      const store = await open();
      const config = {
        tenant: '',
        id: 'c1',
        taskId: 't1',
        url: 'https://hooks.example.com/x',
        token: 'tok',
        authentication: { scheme: 'Bearer', credentials: 'c' },
      };
      expect(await store.pushConfigs.hasAny(alice, 't1')).toBe(false);
      const savesBefore = store.pushConfigs.saves;
      await store.pushConfigs.save(alice, 't1', config, '0.3');
      // A cached "no configs" answer is good only while nothing was saved.
      expect(store.pushConfigs.saves).toBeGreaterThan(savesBefore);
      await store.pushConfigs.save(alice, 't1', { ...config, id: 'c2', url: 'https://hooks.example.com/y' }, '1.0');
      await store.pushConfigs.save(alice, 't1', { ...config, token: 'tok2' }, '0.3'); // replaces c1
      await store.reopen();
      expect(await store.pushConfigs.hasAny(alice, 't1')).toBe(true);
      expect(await store.pushConfigs.hasAny(bob, 't1')).toBe(false);
      const stored = (await store.pushConfigs.load(alice, 't1')).sort((a, b) => a.config.id.localeCompare(b.config.id));
      expect(stored).toEqual([
        { config: { ...config, token: 'tok2' }, wireVersion: '0.3' },
        { config: { ...config, id: 'c2', url: 'https://hooks.example.com/y' }, wireVersion: '1.0' },
      ]);
      expect(await store.pushConfigs.load(bob, 't1')).toEqual([]);
      await store.pushConfigs.delete(alice, 't1', 'c1');
      expect(await store.pushConfigs.hasAny(alice, 't1')).toBe(true);
      await store.pushConfigs.delete(alice, 't1', 'c2');
      await store.pushConfigs.delete(alice, 't1', 'c2');
      expect(await store.pushConfigs.load(alice, 't1')).toEqual([]);
      expect(await store.pushConfigs.hasAny(alice, 't1')).toBe(false);
    });

    it('records how the latest notification went on the config, until it is saved again', async () => {
      const { pushConfigs } = await open();
      const config = {
        tenant: '',
        id: 'd1',
        taskId: 't2',
        url: 'https://hooks.example.com/d',
        token: '',
        authentication: { scheme: 'Bearer', credentials: 'c' },
      };
      await pushConfigs.save(alice, 't2', config, '1.0');
      const failed = {
        outcome: 'failed' as const,
        attempts: 3,
        status: 503,
        error: 'HTTP 503',
        at: '2026-01-01T00:00:00.000Z',
      };
      await pushConfigs.recordDelivery(alice, 't2', 'd1', failed);
      await pushConfigs.recordDelivery(bob, 't2', 'd1', { ...failed, outcome: 'delivered' });
      await pushConfigs.recordDelivery(alice, 't2', 'gone', failed);
      expect(await pushConfigs.load(alice, 't2')).toEqual([{ config, wireVersion: '1.0', delivery: failed }]);
      const delivered = { outcome: 'delivered' as const, attempts: 1, status: 200, at: '2026-01-01T00:00:01.000Z' };
      await pushConfigs.recordDelivery(alice, 't2', 'd1', delivered);
      expect((await pushConfigs.load(alice, 't2'))[0].delivery).toEqual(delivered);
      await pushConfigs.save(alice, 't2', config, '1.0');
      expect((await pushConfigs.load(alice, 't2'))[0].delivery).toBeUndefined();
    });
  });
}
