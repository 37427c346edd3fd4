import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, ServerCallContext } from '@a2a-js/sdk/server';
import { userOf } from '../../src/identity/request';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import { createA2AStores, scopeOf, type A2AStores } from '../../src/a2a/tasks/taskStore';
import { parseDuration } from '../../src/duration';
import { LiveTasks } from '../../src/a2a/tasks/liveTasks';
import { statusUpdate, textPart } from '../../src/a2a/tasks/messages';
import { createMemoryLogger } from '../../src/log/logger';
import { NOOP_OBSERVER } from '../../src/observation/observer';
import { namedCaller, OWNER } from '../../src/principal';
import type { SqliteDatabase } from '../../src/store/sqlite/database';
import type { TaskRowStores } from '../../src/store/taskRows';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';

const as = (name: string, owner = false) =>
  new ServerCallContext({
    user: userOf(owner ? OWNER : namedCaller(name)),
    requestedVersion: '1.0',
  });

function task(id: string, state: TaskState, at: number, contextId = 'ctx-1'): Task {
  const message = {
    messageId: `m-${id}`,
    contextId,
    taskId: id,
    role: Role.ROLE_USER,
    parts: [textPart(`hello ${id}`)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return {
    id,
    contextId,
    status: { state, message: undefined, timestamp: new Date(at).toISOString() },
    artifacts: [
      {
        artifactId: `a-${id}`,
        name: 'answer',
        description: '',
        parts: [textPart('answer')],
        metadata: undefined,
        extensions: [],
      },
    ],
    history: [message],
    metadata: { source: 'test' },
  };
}

describe('the SQLite task and push stores', () => {
  let dir: string;
  let storage: SqliteStorage;
  let db: SqliteDatabase;
  let stores: A2AStores;
  let live: LiveTasks;
  let rows: TaskRowStores;
  /** Writes the task's row as `name`'s. */
  const save = (saved: Task, name: string) =>
    rows.tasks.write([{ scope: scopeOf(as(name)), task: structuredClone(saved) }]);
  const now = Date.parse('2026-01-01T00:00:00Z');
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-a2a-store-'));
    storage = openSqliteStorage({
      file: path.join(dir, 'lango.db'),
      logger: createMemoryLogger(),
      clock: () => new Date(now),
    });
    db = storage.db;
    rows = createSqliteTaskRows({ db, group: storage.group, logger: createMemoryLogger() });
    live = new LiveTasks({ rows: rows.tasks });
    stores = createA2AStores({ rows, live, clock: () => new Date(now) });
  });
  afterEach(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips a task and scopes it to its owner', async () => {
    const original = task('t1', TaskState.TASK_STATE_COMPLETED, now);
    await save(original, 'alice');
    expect(await stores.tasks.load('t1', as('alice'))).toEqual(original);
    expect(await stores.tasks.load('t1', as('bob'))).toBeUndefined();
  });

  it('lists newest first in pages, with filters, and leaves out artifacts and history when asked', async () => {
    for (let i = 0; i < 5; i++) {
      await save(
        task(
          `t${i}`,
          i % 2 ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_COMPLETED,
          now + i * 1000,
          i < 3 ? 'ctx-a' : 'ctx-b',
        ),
        'alice',
      );
    }
    await save(task('other', TaskState.TASK_STATE_COMPLETED, now), 'bob');
    const base = {
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    };
    const first = await stores.tasks.list({ ...base, pageSize: 2, includeArtifacts: true }, as('alice'));
    expect(first.tasks.map((t) => t.id)).toEqual(['t4', 't3']);
    expect(first.totalSize).toBe(5);
    expect(first.tasks[0].artifacts).toHaveLength(1);
    const second = await stores.tasks.list({ ...base, pageSize: 2, pageToken: first.nextPageToken }, as('alice'));
    expect(second.tasks.map((t) => t.id)).toEqual(['t2', 't1']);
    expect(second.tasks[0].artifacts).toEqual([]);
    const third = await stores.tasks.list({ ...base, pageSize: 2, pageToken: second.nextPageToken }, as('alice'));
    expect(third.tasks.map((t) => t.id)).toEqual(['t0']);
    expect(third.nextPageToken).toBe('');

    const failed = await stores.tasks.list({ ...base, status: TaskState.TASK_STATE_FAILED, pageSize: 10 }, as('alice'));
    expect(failed.tasks.map((t) => t.id)).toEqual(['t3', 't1']);
    const inB = await stores.tasks.list({ ...base, contextId: 'ctx-b', pageSize: 10, historyLength: 0 }, as('alice'));
    expect(inB.tasks.map((t) => t.id)).toEqual(['t4', 't3']);
    expect(inB.tasks[0].history).toEqual([]);
    const recent = await stores.tasks.list(
      { ...base, statusTimestampAfter: new Date(now + 2500).toISOString(), pageSize: 10 },
      as('alice'),
    );
    expect(recent.tasks.map((t) => t.id)).toEqual(['t4', 't3']);
    await expect(
      stores.tasks.list({ ...base, pageSize: 2, pageToken: 'bm90LWEtdG9rZW4' }, as('alice')),
    ).rejects.toThrow(/pageToken/);
  });

  it('writes an on-settle live task once, when it settles, unless a ListTasks asks first', async () => {
    const rows = () => (db.prepare('SELECT count(*) AS n FROM a2a_tasks').get() as { n: number }).n;
    const alice = { tenant: '', owner: 'alice' };
    const start = (id: string) => {
      const held = live.begin(alice, { taskId: id, contextId: 'ctx-1' }, 'on-settle');
      const first = task(id, TaskState.TASK_STATE_WORKING, now);
      live.fold(held, AgentEvent.task(first), first.history[0]);
      return { held, userMessage: first.history[0] };
    };
    const quiet = start('quiet');
    expect(rows()).toBe(0);
    // Anyone else reading it gets the latest state, as a copy the live one cannot be trimmed through.
    const seen = await stores.tasks.load('quiet', as('alice'));
    expect(seen?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    seen!.history.length = 0;
    expect((await stores.tasks.load('quiet', as('alice')))?.history).toHaveLength(1);
    expect(await stores.tasks.load('quiet', as('bob'))).toBeUndefined();
    expect((await stores.tasks.load('quiet', as('owner-of-node', true)))?.id).toBe('quiet');
    live.fold(
      quiet.held,
      AgentEvent.statusUpdate(
        statusUpdate({ taskId: 'quiet', contextId: 'ctx-1' }, TaskState.TASK_STATE_COMPLETED, new Date(now + 2)),
      ),
      quiet.userMessage,
    );
    // The settling event is written, once, in the next group commit.
    expect(rows()).toBe(0);
    await quiet.held.closed;
    expect(rows()).toBe(1);
    expect(live.size).toBe(0);

    // A list reads the table, so it writes live tasks first: what it shows survives a crash.
    start('listed');
    const listed = await stores.tasks.list({ pageSize: 10 } as never, as('alice'));
    expect(listed.tasks.map((t) => t.id).sort()).toEqual(['listed', 'quiet']);
    expect(await stores.failInterrupted('node restarted')).toBe(1);
    expect(live.size).toBe(0);
  });

  it('serves a settled task from its queued row until the group commit writes it', async () => {
    await save(task('settling', TaskState.TASK_STATE_WORKING, now), 'alice');
    const saved = save(task('settling', TaskState.TASK_STATE_COMPLETED, now + 1), 'alice');
    // The table still says working; readers must not see that (a cancel would act on it).
    expect((await stores.tasks.load('settling', as('alice')))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await stores.tasks.load('settling', as('bob'))).toBeUndefined();
    const listed = await stores.tasks.list({ pageSize: 10 } as never, as('alice'));
    expect(listed.tasks.map((t) => t.status?.state)).toEqual([TaskState.TASK_STATE_COMPLETED]);
    await saved;
  });

  it('group-commits the task and session writes of one event-loop turn in one transaction', async () => {
    // The group commit reports each transaction it commits to the observer: one for both stores' writes.
    let groupCommits = 0;
    const counted = openSqliteStorage({
      file: path.join(dir, 'counted.db'),
      logger: createMemoryLogger(),
      clock: () => new Date(now),
      observer: { ...NOOP_OBSERVER, active: true, storeWrite: () => (groupCommits += 1) },
    });
    try {
      const countedRows = createSqliteTaskRows({ db: counted.db, group: counted.group, logger: createMemoryLogger() });
      const { sessions } = counted.stores;
      const saved = countedRows.tasks.write([
        { scope: scopeOf(as('alice')), task: task('t1', TaskState.TASK_STATE_SUBMITTED, now) },
      ]);
      const turn = sessions.commitTurn(OWNER, 's1', [{ role: 'user', content: 'hi', visible: true }], {
        remoteState: {},
      });
      await Promise.all([saved, turn]);
      expect(groupCommits).toBe(1);
      expect((await sessions.messages(OWNER, 's1')).map((m) => m.seq)).toEqual([1]);
      const row = await countedRows.tasks.get({ ...scopeOf(as('alice')), everyone: false }, 't1');
      expect(row?.task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    } finally {
      await counted.close();
    }
  });

  it('marks submitted and working tasks failed after a restart, and leaves the others alone', async () => {
    await save(task('w', TaskState.TASK_STATE_WORKING, now), 'alice');
    await save(task('s', TaskState.TASK_STATE_SUBMITTED, now), 'alice');
    await save(task('i', TaskState.TASK_STATE_INPUT_REQUIRED, now), 'alice');
    await save(task('c', TaskState.TASK_STATE_COMPLETED, now), 'alice');
    expect(await stores.failInterrupted('node restarted')).toBe(2);
    const working = await stores.tasks.load('w', as('alice'));
    expect(working?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(working?.status?.message?.parts[0].content).toEqual({ $case: 'text', value: 'node restarted' });
    expect(working?.status?.message?.contextId).toBe('ctx-1');
    expect(working?.history).toHaveLength(1);
    expect((await stores.tasks.load('i', as('alice')))?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(await stores.failInterrupted('node restarted')).toBe(0);
  });

  it('purges finished tasks and their push configs past the cutoff, never unfinished ones', async () => {
    await save(task('old', TaskState.TASK_STATE_COMPLETED, now - 10_000), 'alice');
    await save(task('waiting', TaskState.TASK_STATE_INPUT_REQUIRED, now - 10_000), 'alice');
    await save(task('new', TaskState.TASK_STATE_COMPLETED, now), 'alice');
    const hook = {
      tenant: '',
      id: 'h',
      taskId: 'old',
      url: 'https://hooks.example.com',
      token: '',
      authentication: undefined,
    };
    await stores.pushConfigs.save('old', as('alice'), hook);
    expect(await stores.purgeFinished(new Date(now - 5_000))).toBe(1);
    expect(await stores.tasks.load('old', as('alice'))).toBeUndefined();
    expect(await stores.tasks.load('waiting', as('alice'))).toBeDefined();
    expect(await stores.tasks.load('new', as('alice'))).toBeDefined();
    expect(await stores.pushConfigs.load('old', as('alice'))).toEqual([]);
  });

  it('stores push configs per owner with the wire version they were registered over', async () => {
    const config = {
      tenant: '',
      id: '',
      taskId: 't1',
      url: 'https://hooks.example.com/x',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'c' },
    };
    await stores.pushConfigs.save('t1', as('alice'), config);
    expect(config.id).not.toBe('');
    const [stored] = await stores.pushConfigs.loadWithMetadata('t1', as('alice'));
    expect(stored).toEqual({ config: { ...config, tenant: '' }, wireVersion: '1.0' });
    expect(await stores.pushConfigs.load('t1', as('bob'))).toEqual([]);
    await stores.pushConfigs.delete('t1', as('alice'), config.id);
    expect(await stores.pushConfigs.load('t1', as('alice'))).toEqual([]);
  });

  it('parses retention durations', () => {
    expect(parseDuration('30s', 'a2a.taskRetention')).toBe(30_000);
    expect(parseDuration('7d', 'a2a.taskRetention')).toBe(7 * 86_400_000);
    expect(() => parseDuration('7 days', 'a2a.taskRetention')).toThrow('invalid a2a.taskRetention');
  });
});
