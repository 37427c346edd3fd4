import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { textPart } from '../../src/a2a/tasks/messages';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import type { TaskEventRecord } from '../../src/store/taskEvents';
import type { TaskScope } from '../../src/store/taskRows';
import { emptyAllTables } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';
import { taskRowsContract, type TaskRowsFactory } from './contracts/taskRows.contract';

/** A replica whose heartbeat never fires during a test (its first beat is at open). */
const QUIET = { heartbeatMs: 3_600_000, leaseMs: 15_000 };

if (!skipWithoutPostgres('the A2A task rows on PostgreSQL')) {
  /** One database with every schema applied, shared by the suite's tests. */
  const database = useMigratedDatabase();

  const postgres: TaskRowsFactory = {
    name: 'PostgreSQL',
    async open({ redact }) {
      await emptyAllTables(database.url());
      const open = () =>
        openPostgresStorage({
          url: database.url(),
          cluster: { replicaId: 'contract', ...QUIET },
          logger: createMemoryLogger(),
          clock: () => new Date(),
          redact,
        });
      let storage = await open();
      return {
        get tasks() {
          return storage.taskRows.tasks;
        },
        get pushConfigs() {
          return storage.taskRows.pushConfigs;
        },
        async reopen() {
          await storage.close();
          storage = await open();
        },
        close: () => storage.close(),
      };
    },
  };
  taskRowsContract(postgres);

  describe('A2A task rows shared by replicas on PostgreSQL', () => {
    const alice: TaskScope = { tenant: '', owner: 'bearer:alice' };
    const opened: PostgresStorage[] = [];
    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });
    const replica = async (
      replicaId: string,
      timing: { heartbeatMs: number; leaseMs: number } = QUIET,
      logger: MemoryLogger = createMemoryLogger(),
    ) => {
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, ...timing },
        logger,
        clock: () => new Date(),
      });
      opened.push(storage);
      return storage;
    };
    const task = (id: string, state: TaskState, text = 'working on it'): Task => ({
      id,
      contextId: 'ctx-1',
      status: { state, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [
        {
          messageId: `m-${id}`,
          contextId: 'ctx-1',
          taskId: id,
          role: Role.ROLE_USER,
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      ],
      metadata: undefined,
    });

    it("fails a lost replica's running task with its terminal event, ends a follower, and fences the late write", async () => {
      const logger = createMemoryLogger();
      // A beats once (at open) and then falls silent, as a replica killed with -9 would.
      const a = await replica('a', QUIET, logger);
      await a.taskRows.tasks.write([{ scope: alice, task: task('t-lost', TaskState.TASK_STATE_WORKING) }]);
      await a.taskRows.tasks.write([{ scope: alice, task: task('t-waits', TaskState.TASK_STATE_INPUT_REQUIRED) }]);
      const key = { ...alice, taskId: 't-lost' };
      await a.taskEvents.append(key, { seq: 1, event: { statusUpdate: { taskId: 't-lost' } }, terminal: false });
      const b = await replica('b');
      const followed: TaskEventRecord[] = [];
      const following = (async () => {
        for await (const record of b.taskEvents.follow(key, { after: 0 })) followed.push(record);
      })();
      // C beats every 100 ms with a 400 ms lease: A is lost to it within a lease and a beat.
      const c = await replica('c', { heartbeatMs: 100, leaseMs: 400 });
      await following;
      expect(followed.map((r) => [r.seq, r.terminal])).toEqual([
        [1, false],
        [2, true],
      ]);
      expect(followed[1].event).toMatchObject({
        statusUpdate: {
          taskId: 't-lost',
          contextId: 'ctx-1',
          status: { state: 'TASK_STATE_FAILED', message: { parts: [{ text: 'replica lost' }] } },
        },
      });
      const failedRow = await c.taskRows.tasks.get({ ...alice, everyone: false }, 't-lost');
      // The failure is the task's next generation, on its row as on its event.
      expect(failedRow?.generation).toBe(2);
      const failed = failedRow?.task;
      expect(failed?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(failed?.status?.message?.parts[0].content).toEqual({ $case: 'text', value: 'replica lost' });
      // A task waiting for its caller is not lost: any replica can take the answer.
      const waiting = await c.taskRows.tasks.get({ ...alice, everyone: false }, 't-waits');
      expect(waiting?.task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

      // A comes back (a paused process): its late writes cannot undo the end.
      await a.taskRows.tasks.write([{ scope: alice, task: task('t-lost', TaskState.TASK_STATE_COMPLETED, 'late') }]);
      await a.taskEvents.append(key, { seq: 3, event: { late: true }, terminal: true });
      await a.taskEvents.append(key, { seq: 4, event: { late: true }, terminal: false });
      const after = (await b.taskRows.tasks.get({ ...alice, everyone: false }, 't-lost'))?.task;
      expect(after?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect((await b.taskEvents.read(key, 0)).map((r) => r.seq)).toEqual([1, 2]);
      expect(logger.records.some((r) => r.message.startsWith('late task writes refused'))).toBe(true);
    });

    it('records one of a hundred sends with one key spread over three replicas, and each gets its task', async () => {
      const replicas = [await replica('a'), await replica('b'), await replica('c')];
      const send = { scope: alice, key: 'message:m-race', keptMs: 60_000 };
      const claims = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          replicas[i % 3].taskRows.tasks.claimSend(send, `t-${i}`, {
            scope: alice,
            task: task(`t-${i}`, TaskState.TASK_STATE_SUBMITTED),
          }),
        ),
      );
      expect(claims.filter((c) => c.created)).toHaveLength(1);
      const [taskId] = new Set(claims.map((c) => c.taskId));
      expect(new Set(claims.map((c) => c.taskId)).size).toBe(1);
      const listed = await replicas[1].taskRows.tasks.list(
        { ...alice, everyone: false },
        { pageSize: 100, includeArtifacts: false, includeHistory: false },
      );
      expect(listed.tasks.map((t) => t.id)).toEqual([taskId]);
    });

    it('lets one of two replicas racing to claim a task waiting for its caller win; the other learns which runs it', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const reader = { ...alice, everyone: false };
      await a.taskRows.tasks.write([{ scope: alice, task: task('t-asks', TaskState.TASK_STATE_INPUT_REQUIRED) }]);
      expect((await b.taskRows.tasks.get(reader, 't-asks'))?.replica).toBeUndefined();
      const at = new Date();
      const claims = await Promise.all([
        a.taskRows.tasks.claim(alice, 't-asks', { messageId: 'via-a', at }),
        b.taskRows.tasks.claim(alice, 't-asks', { messageId: 'via-b', at }),
      ]);
      expect(claims.filter((c) => c.won)).toHaveLength(1);
      const winner = claims[0].won ? 'a' : 'b';
      expect(claims.find((c) => !c.won)).toEqual({
        won: false,
        state: TaskState.TASK_STATE_WORKING,
        replica: winner,
        messageId: `via-${winner}`,
        generation: 0,
      });
      // Either replica reads where it runs from the row.
      expect((await a.taskRows.tasks.get(reader, 't-asks'))?.replica).toBe(winner);
      expect((await b.taskRows.tasks.get(reader, 't-asks'))?.replica).toBe(winner);
    });

    it('fails a task claimed by a replica that was then lost, and no claim takes it after', async () => {
      // A claims and falls silent; C sweeps every 100 ms with a 400 ms lease.
      const a = await replica('a');
      await a.taskRows.tasks.write([{ scope: alice, task: task('t-claimed', TaskState.TASK_STATE_INPUT_REQUIRED) }]);
      expect((await a.taskRows.tasks.claim(alice, 't-claimed', { messageId: 'm', at: new Date() })).won).toBe(true);
      const c = await replica('c', { heartbeatMs: 100, leaseMs: 400 });
      const reader = { ...alice, everyone: false };
      await waitFor(
        async () =>
          (await c.taskRows.tasks.get(reader, 't-claimed'))?.task.status?.state === TaskState.TASK_STATE_FAILED,
        20_000,
        'the lost replica’s claimed task to fail',
      );
      expect(await c.taskRows.tasks.claim(alice, 't-claimed', { messageId: 'm2', at: new Date() })).toMatchObject({
        won: false,
        state: TaskState.TASK_STATE_FAILED,
      });
    });

    it('lists every replica’s tasks, and a push config set through one replica is seen by the one running the task', async () => {
      const a = await replica('a');
      const b = await replica('b');
      await a.taskRows.tasks.write([{ scope: alice, task: task('on-a', TaskState.TASK_STATE_WORKING) }]);
      await b.taskRows.tasks.write([{ scope: alice, task: task('on-b', TaskState.TASK_STATE_WORKING) }]);
      const listed = await b.taskRows.tasks.list(
        { ...alice, everyone: false },
        { pageSize: 10, includeArtifacts: false, includeHistory: false },
      );
      expect(listed.tasks.map((t) => t.id).sort()).toEqual(['on-a', 'on-b']);
      expect(await a.taskRows.pushConfigs.hasAny(alice, 'on-a')).toBe(false);
      const savesOnA = a.taskRows.pushConfigs.saves;
      await b.taskRows.pushConfigs.save(
        alice,
        'on-a',
        {
          tenant: '',
          id: 'h1',
          taskId: 'on-a',
          url: 'https://hooks.example.com/a',
          token: '',
          authentication: undefined,
        },
        '1.0',
      );
      await waitFor(() => a.taskRows.pushConfigs.hasAny(alice, 'on-a'), 20_000, 'A to hear of the push config');
      // What A hears moves its save count: A's cached "no webhooks" answers are asked again.
      expect(a.taskRows.pushConfigs.saves).toBeGreaterThan(savesOnA);
      expect((await a.taskRows.pushConfigs.load(alice, 'on-a')).map((s) => s.config.url)).toEqual([
        'https://hooks.example.com/a',
      ]);
    });
  });
}
