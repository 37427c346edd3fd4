import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import { LiveTasks, type FoldedEvent } from '../../src/a2a/liveTasks';
import { newTask, statusUpdate, textPart } from '../../src/a2a/messages';
import { createMemoryLogger } from '../../src/log/logger';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import type { TaskRowStores } from '../../src/store/taskRows';
import { answerChunk } from '../support/taskEvents';

const alice = { tenant: '', owner: 'alice' };
const ids = { taskId: 't1', contextId: 'c1' };
const at = new Date('2026-01-01T00:00:00Z');
const userMessage: Message = {
  messageId: 'm1',
  ...ids,
  role: Role.ROLE_USER,
  parts: [textPart('hi')],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
};
const working = (text?: string) => AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_WORKING, at, text));
const chunk = (text: string, append: boolean) => answerChunk(ids, text, { append });

describe('LiveTasks', () => {
  let dir: string;
  let storage: SqliteStorage;
  let rows: TaskRowStores;
  const rowState = () =>
    (
      storage.db.prepare('SELECT status_state FROM a2a_tasks WHERE id = ?').get('t1') as
        { status_state: string } | undefined
    )?.status_state;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-live-'));
    const logger = createMemoryLogger();
    storage = openSqliteStorage({ file: path.join(dir, 'lango.db'), logger, clock: () => at });
    rows = createSqliteTaskRows({ db: storage.db, group: storage.group, logger });
  });
  afterEach(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes an every-state task at each state change, keeps progress in memory, and lets it go settled', async () => {
    const folded: FoldedEvent[] = [];
    const live = new LiveTasks({ rows: rows.tasks, onFolded: (event) => folded.push(event) });
    const held = live.begin(alice, 't1', 'every-state');
    expect(live.begin(alice, 't1', 'on-settle')).toBe(held);
    expect(live.read({ ...alice, everyone: false }, 't1')).toEqual({ task: undefined });

    await live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)), userMessage);
    expect(rowState()).toBe('TASK_STATE_SUBMITTED');
    await live.fold(held, working(), userMessage);
    expect(rowState()).toBe('TASK_STATE_WORKING');
    // Progress and chunks: no write (the fold returns nothing to await), the live task has them.
    expect(live.fold(held, working('operator started exec_shell'), userMessage)).toBeUndefined();
    expect(live.fold(held, chunk('Hel', false), userMessage)).toBeUndefined();
    expect(live.fold(held, chunk('lo', true), userMessage)).toBeUndefined();
    const seen = live.read({ ...alice, everyone: false }, 't1')?.task;
    expect(seen?.artifacts[0].parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: 'Hel' },
      { $case: 'text', value: 'lo' },
    ]);
    expect(seen?.history.map((m) => m.messageId)).toEqual(['m1', expect.any(String)]);
    expect(live.read({ tenant: '', owner: 'bob', everyone: false }, 't1')).toBeUndefined();
    expect(live.read({ tenant: '', owner: 'node', everyone: true }, 't1')?.task?.id).toBe('t1');

    await live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at)), userMessage);
    expect(rowState()).toBe('TASK_STATE_COMPLETED');
    expect(live.size).toBe(0);
    const stored = await rows.tasks.get({ ...alice, everyone: false }, 't1');
    expect(stored?.task.artifacts[0].parts).toHaveLength(2);
    expect(folded.map((event) => [event.generation, event.event.kind])).toEqual([
      [1, 'task'],
      [2, 'statusUpdate'],
      [3, 'statusUpdate'],
      [4, 'artifactUpdate'],
      [5, 'artifactUpdate'],
      [6, 'statusUpdate'],
    ]);
  });

  it('ignores what follows a finished state in the fold', async () => {
    const live = new LiveTasks({ rows: rows.tasks });
    const held = live.begin(alice, 't1', 'on-settle');
    live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at)), userMessage);
    live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_CANCELED, at)), userMessage);
    live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at)), userMessage);
    expect(rowState()).toBeUndefined();
    await live.settle(held);
    expect(rowState()).toBe('TASK_STATE_CANCELED');
  });

  it('streams events to a subscriber in order, each once its state is written, and ends after the settling one', async () => {
    const live = new LiveTasks({ rows: rows.tasks });
    const held = live.begin(alice, 't1', 'every-state');
    const events = live.subscribe(held, (heard) => ({ kind: heard.event.kind, state: heard.state, row: rowState() }));
    // Reads asked before anything is folded are answered in order as events come.
    const first = events.next();
    const second = events.next();
    void live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)), userMessage);
    void live.fold(held, working(), userMessage);
    live.fold(held, chunk('Hel', false), userMessage);
    // A state is sent only once written (the two states may share one write); the chunk after it waits its turn.
    const submitted = await first;
    expect(submitted.done).toBe(false);
    expect(submitted.value).toMatchObject({ kind: 'task', state: TaskState.TASK_STATE_SUBMITTED });
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(submitted.value!.row);
    expect((await second).value).toEqual({
      kind: 'statusUpdate',
      state: TaskState.TASK_STATE_WORKING,
      row: 'TASK_STATE_WORKING',
    });
    expect((await events.next()).value).toMatchObject({ kind: 'artifactUpdate' });
    void live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at)), userMessage);
    expect((await events.next()).value).toEqual({
      kind: 'statusUpdate',
      state: TaskState.TASK_STATE_COMPLETED,
      row: 'TASK_STATE_COMPLETED',
    });
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('stops a subscriber that returns: waiting reads end, later events are not heard', async () => {
    const live = new LiveTasks({ rows: rows.tasks });
    const held = live.begin(alice, 't1', 'every-state');
    const events = live.subscribe(held, (heard) => heard.event.kind);
    const waiting = events.next();
    await events.return(undefined);
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(held.listeners).toEqual([]);
    await live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)), userMessage);
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });
});
