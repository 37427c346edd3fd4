import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import { applyEvent, LiveTasks, type FoldedEvent } from '../../src/a2a/tasks/liveTasks';
import { newTask, statusUpdate, textPart } from '../../src/a2a/tasks/messages';
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
    const held = live.begin(alice, ids, 'every-state');
    expect(live.begin(alice, ids, 'on-settle')).toBe(held);
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
    // An appended text chunk extends the text before it: a snapshot reads as the chunks concatenated.
    expect(seen?.artifacts[0].parts.map((p) => p.content)).toEqual([{ $case: 'text', value: 'Hello' }]);
    expect(seen?.history.map((m) => m.messageId)).toEqual(['m1', expect.any(String)]);
    expect(live.read({ tenant: '', owner: 'bob', everyone: false }, 't1')).toBeUndefined();
    expect(live.read({ tenant: '', owner: 'node', everyone: true }, 't1')?.task?.id).toBe('t1');

    await live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at)), userMessage);
    expect(rowState()).toBe('TASK_STATE_COMPLETED');
    expect(live.size).toBe(0);
    const stored = await rows.tasks.get({ ...alice, everyone: false }, 't1');
    expect(stored?.task.artifacts[0].parts.map((p) => p.content)).toEqual([{ $case: 'text', value: 'Hello' }]);
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
    const held = live.begin(alice, ids, 'on-settle');
    live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at)), userMessage);
    live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_CANCELED, at)), userMessage);
    live.fold(held, AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at)), userMessage);
    expect(held.phase).toBe('settled');
    expect(rowState()).toBeUndefined();
    await held.closed;
    expect(rowState()).toBe('TASK_STATE_CANCELED');
  });

  it('streams events to a subscriber in order, each once its state is written, and ends after the settling one', async () => {
    const live = new LiveTasks({ rows: rows.tasks });
    const held = live.begin(alice, ids, 'every-state');
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
    const held = live.begin(alice, ids, 'every-state');
    const events = live.subscribe(held, (heard) => heard.event.kind);
    const waiting = events.next();
    await events.return(undefined);
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(held.listeners).toEqual([]);
    await live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)), userMessage);
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  const reader = { ...alice, everyone: false };
  const submitted = () => AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at));
  const settledAs = (state: TaskState, text?: string) => AgentEvent.statusUpdate(statusUpdate(ids, state, at, text));
  /** A task of alice's whose turn ended waiting for her answer, as its row holds it. */
  const askedTask = async () => {
    const live = new LiveTasks({ rows: rows.tasks, clock: () => at });
    const held = live.begin(alice, ids, 'every-state');
    live.fold(held, submitted(), userMessage);
    await live.fold(held, settledAs(TaskState.TASK_STATE_INPUT_REQUIRED, 'May I?'), userMessage);
    return (await rows.tasks.get(reader, 't1'))!;
  };

  it('holds a task while its turn runs: waiting for its caller, it is written, let go and takes no more events', async () => {
    const live = new LiveTasks({ rows: rows.tasks });
    const held = live.begin(alice, ids, 'on-settle');
    expect(held.phase).toBe('running');
    live.fold(held, submitted(), userMessage);
    const written = live.fold(held, settledAs(TaskState.TASK_STATE_INPUT_REQUIRED, 'May I?'), userMessage);
    expect(held.phase).toBe('awaiting-input');
    // Written once, whatever the mode; nothing of it is held here any more.
    expect(written).toBe(held.closed);
    expect(live.size).toBe(0);
    expect(live.held(reader, 't1')).toBeUndefined();
    await written;
    expect(rowState()).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(live.fold(held, working('late'), userMessage)).toBeUndefined();
    expect(held.task?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(await live.locate(reader, 't1')).toMatchObject({ runs: 'nowhere', scope: alice });
  });

  it('claims a task waiting for its caller for one turn; another message is refused until the turn asks again', async () => {
    const found = await askedTask();
    const live = new LiveTasks({ rows: rows.tasks, clock: () => at });
    const claim = await live.claim(found, 'm2');
    if (!claim.won) throw new Error('the first claim lost');
    expect(claim.task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(claim.live.writeMode).toBe('every-state');
    expect(live.held(reader, 't1')).toBe(claim.live);
    // Before its first event the live task has nothing to show: readers read the claimed row.
    expect(await live.locate(reader, 't1')).toMatchObject({ runs: 'elsewhere' });
    expect(rowState()).toBe('TASK_STATE_WORKING');
    expect(await live.claim(found, 'm3')).toMatchObject({ won: false, state: TaskState.TASK_STATE_WORKING });

    void live.fold(claim.live, AgentEvent.task(claim.task), userMessage);
    expect(await live.locate(reader, 't1')).toMatchObject({ runs: 'here', live: claim.live });
    await live.fold(claim.live, settledAs(TaskState.TASK_STATE_INPUT_REQUIRED, 'And this?'), userMessage);
    expect((await live.claim(found, 'm4')).won).toBe(true);
  });

  it('cancels a turn running here: canceled is folded in, its signal aborts, its own end is dropped', async () => {
    const live = new LiveTasks({ rows: rows.tasks, clock: () => at });
    const held = live.begin(alice, ids, 'every-state');
    await live.fold(held, submitted(), userMessage);
    await live.cancel((await rows.tasks.get(reader, 't1'))!);
    expect(held.controller.signal.aborted).toBe(true);
    expect(held.phase).toBe('settled');
    expect(rowState()).toBe('TASK_STATE_CANCELED');
    expect(live.fold(held, settledAs(TaskState.TASK_STATE_COMPLETED), userMessage)).toBeUndefined();
    expect(live.cancelHere(alice, 't1')).toBeUndefined();
  });

  it('cancels a task waiting for its caller by claiming it: an answer racing the cancel finds it ended', async () => {
    const found = await askedTask();
    const live = new LiveTasks({ rows: rows.tasks, clock: () => at });
    await live.cancel(found);
    const canceled = (await rows.tasks.get(reader, 't1'))!.task;
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(canceled.history.at(-1)?.parts[0].content).toEqual({ $case: 'text', value: 'Task canceled by the caller.' });
    expect(live.size).toBe(0);
    expect(await live.claim(found, 'm2')).toMatchObject({ won: false, state: TaskState.TASK_STATE_CANCELED });
  });

  it('fails every running turn when the node stops, and waits for each to be written', async () => {
    const live = new LiveTasks({ rows: rows.tasks, clock: () => at });
    const held = live.begin(alice, ids, 'on-settle');
    // A turn that runs until its signal aborts, then returns as the executor does (its end is the failure folded in).
    const settled = live.run(held, async () => {
      live.fold(held, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at)), userMessage);
      await new Promise((resolve) => held.controller.signal.addEventListener('abort', resolve));
      await held.closed;
      return held.task!;
    });
    expect(held.settled).toBe(settled);
    expect(live.size).toBe(1);
    live.failAll('node shutting down');
    expect(live.size).toBe(0);
    await live.settleAll(5_000);
    expect((await settled).status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(rowState()).toBe('TASK_STATE_FAILED');
  });

  it('folds appended text chunks into one text part without changing the chunks, and keeps other parts apart', () => {
    const first = chunk('w1 ', false);
    const second = chunk('w2 ', true);
    const data = AgentEvent.artifactUpdate({
      ...ids,
      artifact: {
        artifactId: 'answer',
        name: 'answer',
        description: '',
        parts: [{ content: { $case: 'data', value: { n: 1 } }, metadata: undefined, filename: '', mediaType: '' }],
        metadata: undefined,
        extensions: [],
      },
      append: true,
      lastChunk: false,
      metadata: undefined,
    });
    let task = applyEvent(undefined, AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at)));
    for (const event of [first, second, data, chunk('w3 ', true), chunk('w4', true)]) task = applyEvent(task, event);
    expect(task?.artifacts[0].parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: 'w1 w2 ' },
      { $case: 'data', value: { n: 1 } },
      { $case: 'text', value: 'w3 w4' },
    ]);
    // The chunks may still be queued for the store or a follower: each keeps its own text.
    expect(first.kind === 'artifactUpdate' && first.data.artifact?.parts[0].content).toEqual({
      $case: 'text',
      value: 'w1 ',
    });
    expect(second.kind === 'artifactUpdate' && second.data.artifact?.parts[0].content).toEqual({
      $case: 'text',
      value: 'w2 ',
    });
  });
});
