import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { LangoExecutor } from '../../src/a2a/tasks/executor';
import { LiveTasks } from '../../src/a2a/tasks/liveTasks';
import { TaskHandler } from '../../src/a2a/tasks/taskHandler';
import { createA2AStores } from '../../src/a2a/tasks/taskStore';
import { createMemoryLogger } from '../../src/log/logger';
import { openDatabase, type SqliteDatabase } from '../../src/store/sqlite/database';
import { createGroupCommit } from '../../src/store/sqlite/groupCommit';
import { createSqliteTaskEventLog } from '../../src/store/sqlite/taskEvents';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import { answerText, asTask } from '../support/a2aClient';
import { PacedRunner } from '../support/pacedRunner';

/**
 * Idempotent sends inside one process (issue 27), at the request handler:
 * identical sends started in one turn of the event loop — their keys in
 * one group commit — run one turn, and every one of them gets the task
 * settled, as the first does.
 */
describe('identical sends in one turn of the event loop', () => {
  let dir: string;
  let db: SqliteDatabase;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-sendkeys-'));
    db = openDatabase(path.join(dir, 'lango.db'));
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const handlerOver = (runner: PacedRunner) => {
    const logger = createMemoryLogger();
    const group = createGroupCommit(db);
    const rows = createSqliteTaskRows({ db, group, logger });
    const live = new LiveTasks({ rows: rows.tasks });
    const stores = createA2AStores({ rows, live, clock: () => new Date() });
    return new TaskHandler({
      executor: new LangoExecutor({ runner, logger, clock: () => new Date() }),
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
  };

  it('runs one turn for five sends of one message started together; each gets the settled task', async () => {
    const runner = new PacedRunner(2);
    runner.release();
    const handler = handlerOver(runner);
    const params = SendMessageRequest.fromJSON({
      message: { messageId: 'same', role: 'ROLE_USER', parts: [{ text: 'once' }] },
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => handler.sendMessage(params, new ServerCallContext({ requestedVersion: '1.0' }))),
    );
    const tasks = answers.map(asTask);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(1);
    expect(tasks.map((t) => t.status?.state)).toEqual(tasks.map(() => TaskState.TASK_STATE_COMPLETED));
    expect(tasks.map(answerText)).toEqual(tasks.map(() => runner.answer));
    expect(runner.turns).toEqual(['once']);
  });
});
