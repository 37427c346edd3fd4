import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { textPart } from '../../src/a2a/tasks/messages';
import { createMemoryLogger } from '../../src/log/logger';
import { SecretRegistry } from '../../src/log/redact';
import { namedCaller, OWNER } from '../../src/principal';
import { redactedStorage, type RedactedStorage } from '../../src/store/redacted';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';
import { createSqliteTaskEventLog } from '../../src/store/sqlite/taskEvents';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import type { TaskKey } from '../../src/store/taskEvents';
import { sqliteCellsHolding } from '../support/secretScan';

/**
 * The one redaction point of stored text (issue 37, `store/redacted.ts`):
 * every store's writes of text pass the node's secrets on their way into
 * the database, on a real SQLite file; reads, identifiers and the members
 * a store does not write through are its own.
 */

const SECRET = 'hunter2-Zq8vL3pX';
const NOW = '2026-05-01T10:00:00.000Z';

const task = (id: string, state: TaskState, text: string): Task => ({
  id,
  contextId: 'ctx-1',
  status: { state, message: undefined, timestamp: NOW },
  artifacts: [{ artifactId: 'a', name: 'answer', description: '', parts: [textPart(text)], extensions: [] } as never],
  history: [
    {
      messageId: 'm-1',
      contextId: 'ctx-1',
      taskId: id,
      role: Role.ROLE_USER,
      parts: [textPart(`please keep ${SECRET}`)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  ],
  metadata: { note: `from ${SECRET}` },
});

describe('stored text behind the node’s secrets (store/redacted.ts)', () => {
  let dir: string;
  let file: string;
  let storage: SqliteStorage;
  let secrets: SecretRegistry;
  let masked: RedactedStorage;
  const alice = namedCaller('alice');
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-redacted-'));
    file = path.join(dir, 'lango.db');
    const logger = createMemoryLogger();
    storage = openSqliteStorage({ file, logger, clock: () => new Date(NOW) });
    const { db, group } = storage;
    secrets = new SecretRegistry();
    masked = redactedStorage(
      {
        stores: storage.stores,
        taskRows: createSqliteTaskRows({ db, group, logger }),
        taskEvents: createSqliteTaskEventLog({ db, group, logger }),
      },
      secrets,
      logger,
    );
  });
  afterEach(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('masks every text a store writes, so no table of the file holds the value', async () => {
    secrets.add(SECRET);
    const { stores, taskRows, taskEvents } = masked;
    const said = `the key is ${SECRET}`;
    await stores.sessions.commitTurn(
      OWNER,
      's-1',
      [
        { role: 'user', content: said, visible: true },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c1', name: 'exec_shell', arguments: JSON.stringify({ command: `echo ${SECRET}` }) }],
          visible: false,
        },
      ],
      {
        remoteState: {},
        pendingApproval: {
          agentName: 'operator',
          call: { id: 'c1', name: 'exec_shell', arguments: `{"command":"echo ${SECRET}"}` },
          question: `run echo ${SECRET}?`,
        },
      },
    );
    await stores.sessions.rename(OWNER, 's-1', said);
    const [observation] = await stores.memory.addObservations(OWNER, 's-1', [said], 'event');
    await stores.memory.addReflection(OWNER, 's-1', said, [observation!.id]);
    await stores.knowledge.saveKnowledge(OWNER, { kind: 'fact', content: said, source: said, tags: [SECRET] });
    await stores.knowledge.saveLearning(OWNER, { errorPattern: said, diagnosis: said, fix: said });
    const inquiry = await stores.inquiries.raise(OWNER, { question: said, origin: 'search_knowledge' });
    await stores.inquiries.dismiss(OWNER, inquiry.id, said);
    await stores.graph.add(OWNER, [{ subject: 'key', predicate: 'is', object: SECRET }], said);
    const payment = await stores.ledger.begin(
      OWNER,
      { at: new Date(NOW), chainId: 8453, token: '0xt', from: '0xf', to: '0xa', amount: '1', units: 1n, memo: said },
      10n,
    );
    if (!payment.ok) throw new Error('the payment was refused');
    await stores.ledger.settle(payment.id, { status: 'failed', error: said, at: new Date(NOW) });
    const job = { kind: 'every' as const, schedule: 'every 1h', prompt: said, status: 'active' as const };
    await stores.cron.insert(OWNER, {
      name: 'c',
      ...job,
      anchorAt: NOW,
      nextRunAt: NOW,
      lastRunAt: null,
      createdAt: NOW,
    });
    const run = await stores.cron.startRun(OWNER, {
      jobName: 'c',
      trigger: 'schedule',
      scheduledFor: NOW,
      startedAt: NOW,
    });
    await stores.cron.finishRun(run!, { status: 'completed', finishedAt: NOW, result: said, author: 'operator' });
    await stores.background.insert(OWNER, { id: 'bg-1', label: said, prompt: said, createdAt: NOW });
    await stores.background.finish('bg-1', { status: 'completed', finishedAt: NOW, result: said, author: null });
    await stores.workflows.save(OWNER, { name: 'w', description: said, yaml: `prompt: ${said}`, savedAt: NOW });
    await stores.workflows.createRun(OWNER, { id: 'wf-1', workflowName: 'w', yaml: said, startedAt: NOW }, [
      { id: 'a' },
    ]);
    await stores.workflows.finishStep('wf-1', 'a', { status: 'failed', finishedAt: NOW, result: said, author: null });
    await stores.workflows.finishRun('wf-1', { status: 'failed', finishedAt: NOW, error: said });
    await stores.execJobs.insert(OWNER, {
      id: 'x-1',
      command: `echo ${SECRET}`,
      cwd: SECRET,
      pid: null,
      startedAt: NOW,
    });
    await stores.timelines.save([
      {
        id: 't-1',
        sessionId: 's-1',
        caller: 'owner',
        asked: said,
        startedAt: NOW,
        error: said,
        steps: [{ kind: 'tool', name: 'exec_shell', atMs: 1, args: said, result: said }],
        exchanges: [
          {
            step: 0,
            instruction: said,
            messages: [{ role: 'user', content: said }],
            tools: [],
            answer: { text: said, toolCalls: [] },
          },
        ],
      },
    ]);
    const scope = { tenant: '', owner: 'alice' };
    await taskRows.tasks.write([{ scope, task: task('t-1', TaskState.TASK_STATE_COMPLETED, said), generation: 3 }]);
    const send = { scope, key: 'k-1', keptMs: 60_000 };
    await taskRows.tasks.claimSend(send, 't-2', { scope, task: task('t-2', TaskState.TASK_STATE_WORKING, said) });
    await taskRows.pushConfigs.save(
      scope,
      't-1',
      { id: 'p', taskId: 't-1', url: 'https://hooks.example/x' } as never,
      '1.0',
    );
    await taskRows.pushConfigs.recordDelivery(scope, 't-1', 'p', {
      outcome: 'failed',
      attempts: 1,
      error: said,
      at: NOW,
    });
    const key: TaskKey = { ...scope, taskId: 't-1' };
    await taskEvents.append(key, {
      seq: 1,
      event: { statusUpdate: { text: said } },
      terminal: false,
      snapshot: { said },
    });
    await taskRows.tasks.failInterrupted(`restarted by ${SECRET}`, new Date(NOW));
    storage.stores.timelines.flush();
    storage.group.flush();

    // Each text went in, masked: the scan reads what was written.
    expect(sqliteCellsHolding(file, '[REDACTED]').length).toBeGreaterThan(30);
    expect(sqliteCellsHolding(file, SECRET)).toEqual([]);
    // And reads give back the masked text, through the same stores.
    expect((await stores.sessions.messages(OWNER, 's-1'))[0]!.content).toBe('the key is [REDACTED]');
    expect((await stores.sessions.state(OWNER, 's-1')).pendingApproval?.question).toBe('run echo [REDACTED]?');
    expect((await stores.sessions.list(OWNER)).find((s) => s.id === 's-1')?.title).toBe('the key is [REDACTED]');
    expect((await taskRows.tasks.get({ ...scope, everyone: false }, 't-1'))?.task).toMatchObject({
      id: 't-1',
      contextId: 'ctx-1',
      metadata: { note: 'from [REDACTED]' },
    });
  });

  it('writes a running task’s events again, masked, once a value in them has become a secret', async () => {
    const { taskEvents } = masked;
    const key: TaskKey = { tenant: '', owner: 'alice', taskId: 't-9' };
    const message = `secrets_store {"name":"k","value":"${SECRET}"}`;
    // The task's first event carries the message before its tool has stored the value.
    await taskEvents.append(key, { seq: 1, event: { task: { history: [message] } }, terminal: false });
    await taskEvents.append(key, {
      seq: 2,
      event: { status: 'working' },
      terminal: false,
      snapshot: { said: message },
    });
    expect(JSON.stringify(await taskEvents.read(key, 0))).toContain(SECRET);
    secrets.add(SECRET);
    await taskEvents.append(key, { seq: 3, event: { status: 'completed' }, terminal: true });
    const events = await taskEvents.read(key, 0);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(events[0]!.event).toEqual({ task: { history: ['secrets_store {"name":"k","value":"[REDACTED]"}'] } });
    expect(await taskEvents.snapshot(key)).toEqual({ seq: 2, task: { said: expect.stringContaining('[REDACTED]') } });
    expect(sqliteCellsHolding(file, SECRET)).toEqual([]);
  });

  it('leaves identifiers, reads and live members as the stores have them', async () => {
    secrets.add(SECRET);
    const { stores, taskRows } = masked;
    // A job's name is how it is found again: matched as written, never masked.
    const job = { kind: 'every' as const, schedule: 'every 1h', prompt: 'p', status: 'active' as const };
    await stores.cron.insert(alice, {
      name: SECRET,
      ...job,
      anchorAt: NOW,
      nextRunAt: NOW,
      lastRunAt: null,
      createdAt: NOW,
    });
    expect((await stores.cron.get(alice, SECRET))?.prompt).toBe('p');
    // A push config's URL and token are its receiver's: delivered with them verbatim.
    const scope = { tenant: '', owner: 'alice' };
    const before = taskRows.pushConfigs.saves;
    const config = { id: 'p', taskId: 't', url: 'https://hooks.example/x', token: SECRET } as never;
    await taskRows.pushConfigs.save(scope, 't', config, '1.0');
    expect(taskRows.pushConfigs.saves).toBe(before + 1);
    expect((await taskRows.pushConfigs.load(scope, 't'))[0]?.config).toMatchObject({ token: SECRET });
    // What holds no secret is handed to the store as the very same object.
    expect(masked.stores.jobQueue).toBe(storage.stores.jobQueue);
  });
});
