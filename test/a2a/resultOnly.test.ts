import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SendMessageRequest } from '@a2a-js/sdk';
import { AgentEvent, ServerCallContext } from '@a2a-js/sdk/server';
import type { PublishEvent, TaskTurn } from '../../src/a2a/tasks/executor';
import { applyEvent } from '../../src/a2a/tasks/applyEvent';
import type { LiveTask } from '../../src/a2a/tasks/liveTask';
import { LiveTasks } from '../../src/a2a/tasks/liveTasks';
import { TaskHandler } from '../../src/a2a/tasks/taskHandler';
import { createA2AStores } from '../../src/a2a/tasks/taskStore';
import { createSqliteTaskEventLog } from '../../src/store/sqlite/taskEvents';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import { createMemoryLogger } from '../../src/log/logger';
import { openDatabase } from '../../src/store/sqlite/database';
import { createGroupCommit } from '../../src/store/sqlite/groupCommit';
import { statusUpdate, textPart } from '../../src/a2a/tasks/messages';
import { a2aClient, asTask, findWorkingTask, partsText, textRequest } from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { ScriptedA2ARunner } from '../support/a2aRunner';
import { waitFor } from '../support/waitFor';
import { answerChunk } from '../support/taskEvents';

const { TASK_STATE_WORKING: WORKING, TASK_STATE_COMPLETED: COMPLETED, TASK_STATE_CANCELED: CANCELED } = TaskState;

describe('a blocking SendMessage without a webhook, run on the direct path', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    // `[hold]` turns wait before their answer until released or aborted: another client finds and cancels one.
    node = await startA2ANode({ runner: new ScriptedA2ARunner() });
  });
  afterAll(() => node.close());

  it('is listed, read and canceled by another request while it runs, and its caller gets the canceled task', async () => {
    const caller = await a2aClient(node.url, 'JSONRPC');
    const other = await a2aClient(node.url, 'HTTP+JSON');
    const pending = caller.sendMessage(textRequest('[hold] cancel me from elsewhere'));
    const running = await findWorkingTask(other, (first) => first === '[hold] cancel me from elsewhere');
    expect(running).toBeDefined();
    expect((await other.getTask({ tenant: '', id: running!.id })).status?.state).toBe(WORKING);
    const canceled = await other.cancelTask({ tenant: '', id: running!.id, metadata: undefined });
    expect(canceled.status?.state).toBe(CANCELED);
    const answered = asTask(await pending);
    expect(answered.id).toBe(running!.id);
    expect(answered.status?.state).toBe(CANCELED);
    expect(answered.artifacts).toHaveLength(0);
    const stored = await other.getTask({ tenant: '', id: running!.id });
    expect(stored.status?.state).toBe(CANCELED);
    expect((node.runner as ScriptedA2ARunner).aborted.length).toBeGreaterThan(0);
  });

  it('tells a webhook registered on the task while it ran (by another request) how it ended', async () => {
    const bodies: string[] = [];
    const hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const caller = await a2aClient(node.url, 'JSONRPC');
      const other = await a2aClient(node.url, 'JSONRPC');
      const pending = caller.sendMessage(textRequest('[hold] watched by a webhook'));
      const running = await findWorkingTask(other, (first) => first === '[hold] watched by a webhook');
      await other.createTaskPushNotificationConfig({
        tenant: '',
        id: 'late',
        taskId: running!.id,
        url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
        token: '',
        authentication: undefined,
      });
      (node.runner as ScriptedA2ARunner).release('[hold] watched by a webhook');
      expect(asTask(await pending).status?.state).toBe(COMPLETED);
      await waitFor(() => bodies.length > 0, 20_000, 'the late webhook to hear the answer');
      expect(bodies.map((b) => JSON.parse(b).statusUpdate?.status?.state)).toEqual(['TASK_STATE_COMPLETED']);
    } finally {
      hook.closeAllConnections();
      await new Promise((resolve) => hook.close(resolve));
    }
  });

  it('refuses a message to a task whose turn is still running, over both bindings, and the task carries on', async () => {
    const caller = await a2aClient(node.url, 'JSONRPC');
    const pending = caller.sendMessage(textRequest('[hold] do not interrupt'));
    const running = await findWorkingTask(caller, (first) => first === '[hold] do not interrupt');
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const other = await a2aClient(node.url, binding);
      await expect(
        other.sendMessage(textRequest('me too', { taskId: running!.id, contextId: running!.contextId })),
      ).rejects.toThrow(/still working/);
    }
    (node.runner as ScriptedA2ARunner).release('[hold] do not interrupt');
    expect(asTask(await pending).status?.state).toBe(COMPLETED);
  });

  it('answers the completed task, trims only the answer to historyLength, and stores the full task', async () => {
    const client = await a2aClient(node.url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('hello direct', {}, { historyLength: 1 })));
    expect(task.status?.state).toBe(COMPLETED);
    expect(partsText(task.artifacts[0]?.parts)).toBe('echo: hello direct');
    expect(task.history).toHaveLength(1);
    // The answer is the artifact's alone: the history holds the question, not a copy of the answer.
    expect(partsText(task.history[0]?.parts)).toBe('hello direct');
    const stored = await client.getTask({ tenant: '', id: task.id });
    expect(stored.history.map((m) => m.role)).toEqual([Role.ROLE_USER]);
    expect(stored.status?.state).toBe(COMPLETED);
  });

  it('leaves an input-required task open for its answer, which completes it', async () => {
    const client = await a2aClient(node.url, 'JSONRPC');
    const asked = asTask(await client.sendMessage(textRequest('approve the plan')));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = asTask(await client.sendMessage(textRequest('yes', { taskId: asked.id, contextId: asked.contextId })));
    expect(done.id).toBe(asked.id);
    expect(done.status?.state).toBe(COMPLETED);
  });
});

describe('a blocking SendMessage in flight when the node stops', () => {
  it('is written failed ("node shutting down") before the database closes, though nobody saw it before', async () => {
    const node = await startA2ANode({ runner: new ScriptedA2ARunner() });
    try {
      const caller = await a2aClient(node.url, 'JSONRPC');
      const pending = caller.sendMessage(textRequest('[hold] stopped midway')).catch((err: unknown) => err);
      const running = await findWorkingTask(caller, (first) => first === '[hold] stopped midway');
      expect(running).toBeDefined();
      await node.stop();
      await pending;
      const db = openDatabase(node.dbFile);
      try {
        const row = db.prepare('SELECT status_state, status FROM a2a_tasks WHERE id = ?').get(running!.id) as
          { status_state: string; status: string } | undefined;
        expect(row?.status_state).toBe('TASK_STATE_FAILED');
        expect(row?.status).toContain('node shutting down');
      } finally {
        db.close();
      }
    } finally {
      await node.close();
    }
  });
});

describe('folding executor events into the task (the SDK ResultManager rules)', () => {
  const ids = { taskId: 't1', contextId: 'c1' };
  const user: Message = {
    messageId: 'u1',
    ...ids,
    role: Role.ROLE_USER,
    parts: [textPart('hi')],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const first = (): Task => ({
    id: 't1',
    contextId: 'c1',
    status: { state: WORKING, message: undefined, timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [],
    history: [],
    metadata: undefined,
  });
  const artifact = (text: string, append: boolean) =>
    answerChunk(ids, text, { append, artifactId: 'a1', metadata: { chunk: text } });

  it('heads the history with the user message, appends status messages once, and merges metadata', () => {
    let task = applyEvent(undefined, AgentEvent.task(first()), user)!;
    expect(task.history.map((m) => m.messageId)).toEqual(['u1']);
    const update = statusUpdate(ids, WORKING, new Date(), 'working on it', { step: 1 });
    task = applyEvent(task, AgentEvent.statusUpdate(update), user)!;
    task = applyEvent(task, AgentEvent.statusUpdate(update), user)!;
    expect(task.history.map((m) => partsText(m.parts))).toEqual(['hi', 'working on it']);
    expect(task.metadata).toEqual({ step: 1 });
  });

  it('appends artifact chunks, replaces an artifact sent whole, and ignores events for other tasks', () => {
    let task = applyEvent(undefined, AgentEvent.task(first()), user)!;
    task = applyEvent(task, artifact('Hel', false), user)!;
    task = applyEvent(task, artifact('lo', true), user)!;
    expect(partsText(task.artifacts[0]!.parts)).toBe('Hello');
    task = applyEvent(task, artifact('Bye', false), user)!;
    expect(task.artifacts).toHaveLength(1);
    expect(partsText(task.artifacts[0]!.parts)).toBe('Bye');
    const elsewhere = statusUpdate({ taskId: 't2', contextId: 'c1' }, COMPLETED, new Date());
    expect(applyEvent(task, AgentEvent.statusUpdate(elsewhere), user)!.status?.state).toBe(WORKING);
  });

  it('changes nothing once the task has ended', () => {
    let task = applyEvent(undefined, AgentEvent.task(first()), user)!;
    task = applyEvent(task, AgentEvent.statusUpdate(statusUpdate(ids, CANCELED, new Date(), 'canceled')), user)!;
    task = applyEvent(task, AgentEvent.statusUpdate(statusUpdate(ids, COMPLETED, new Date(), 'too late')), user)!;
    expect(task.status?.state).toBe(CANCELED);
    expect(task.history.map((m) => partsText(m.parts))).toEqual(['hi', 'canceled']);
  });
});

describe('a blocking send whose executor misbehaves', () => {
  /** Publishes its task (working) and then `after` decides: return, throw. */
  class HalfExecutor {
    constructor(private readonly after: 'return' | 'throw') {}
    execute = async (turn: TaskTurn, _live: LiveTask, publish: PublishEvent) => {
      void publish(
        AgentEvent.task({
          id: turn.taskId,
          contextId: turn.contextId,
          status: { state: WORKING, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [turn.userMessage],
          metadata: undefined,
        }),
      );
      if (this.after === 'throw') throw new Error('tool exploded');
    };
  }

  it.each(['return', 'throw'] as const)(
    'fails the task, writes it and lets it go when the executor %ss without settling it',
    async (after) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-direct-'));
      const db = openDatabase(path.join(dir, 'lango.db'));
      try {
        const logger = createMemoryLogger();
        const group = createGroupCommit(db);
        const rows = createSqliteTaskRows({ db, group, logger });
        const live = new LiveTasks({ rows: rows.tasks });
        const stores = createA2AStores({ rows, live, clock: () => new Date() });
        const handler = new TaskHandler({
          executor: new HalfExecutor(after),
          live,
          tasks: stores.tasks,
          push: { store: stores.pushConfigs, sender: { send: async () => undefined } },
          cards: undefined as never, // no card is asked for
          extendedCardEnabled: false,
          events: createSqliteTaskEventLog({ db, group, logger }),
          sends: rows.tasks,
          idempotencyWindowMs: 60_000,
          longPollTimeoutMs: 20_000,
          logger,
          clock: () => new Date(),
        });
        const context = new ServerCallContext({ requestedVersion: '1.0' });
        const params = SendMessageRequest.fromJSON({
          message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }], contextId: 'c1' },
        });
        const task = asTask(await handler.sendMessage(params, context));
        expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
        expect(partsText(task.status?.message?.parts)).toMatch(
          after === 'throw' ? /tool exploded/ : /without an answer/,
        );
        expect(live.size).toBe(0);
        const row = db.prepare('SELECT status_state FROM a2a_tasks WHERE id = ?').get(task.id) as {
          status_state: string;
        };
        expect(row.status_state).toBe('TASK_STATE_FAILED');
      } finally {
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
