import { Role, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { createClusterTasks, SNAPSHOT_EVERY } from '../../src/a2a/tasks/clusterTasks';
import { applyEvent } from '../../src/a2a/tasks/applyEvent';
import { newTask, statusUpdate, textPart } from '../../src/a2a/tasks/messages';
import { createMemoryLogger } from '../../src/log/logger';
import type { PgDatabase } from '../../src/store/postgres/database';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import type { StoredTask, TaskScope } from '../../src/store/taskRows';
import { emptyAllTables } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { answerChunk } from '../support/taskEvents';

/**
 * A task's executor events across replicas, in A2A terms: two storages on
 * one throwaway PostgreSQL database stand for two replicas.
 */
if (!skipWithoutPostgres('the A2A tasks across replicas')) {
  describe('A2A task events across replicas', () => {
    /** One database with every schema applied, shared by the suite's tests. */
    const database = useMigratedDatabase();
    const opened: PostgresStorage[] = [];
    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });
    /** One replica's storage and its cluster tasks (`heartbeatMs`/`leaseMs` as given, else no sweep in a test's time). */
    const replica = async (replicaId: string, timing = { heartbeatMs: 3_600_000, leaseMs: 15_000 }) => {
      const logger = createMemoryLogger();
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, ...timing },
        logger,
        clock: () => new Date(),
        redact: (text) => text.replaceAll(SECRET, '[secret]'),
      });
      opened.push(storage);
      const cluster = createClusterTasks({
        events: storage.taskEvents,
        rows: storage.taskRows.tasks,
        logger,
        rowCheckMs: 100,
      });
      return { storage, cluster };
    };
    type Replica = Awaited<ReturnType<typeof replica>>;

    /** A value the node knows as a secret: masked in every event written. */
    const SECRET = 'sk-live-4242';
    const scope: TaskScope = { tenant: '', owner: 'bearer:alice' };
    const ids = { taskId: 'task-1', contextId: 'ctx-1' };
    const at = new Date('2026-11-25T20:00:00.000Z');
    const userMessage = {
      messageId: 'm1',
      contextId: ids.contextId,
      taskId: ids.taskId,
      role: Role.ROLE_USER,
      parts: [textPart('hello')],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const chunk = (text: string, append: boolean) => answerChunk(ids, text, { append });
    const status = (state: TaskState, text?: string) => AgentEvent.statusUpdate(statusUpdate(ids, state, at, text));

    /**
     * What a replica's LiveTasks does with each event of an `every-state` task: the fold (here the SDK-shaped
     * `applyEvent`), the row written on each state change and the event recorded, both in one group commit.
     */
    /** Folds and records events as a live task on `on` does, from the task `start` as stored (its generation on). */
    const runner = (on: Replica, start?: StoredTask) => {
      let task = start?.task;
      let seq = start?.generation ?? 0;
      return (...events: AgentExecutionEvent[]) =>
        Promise.all(
          events.map((event) => {
            const before = task?.status?.state;
            task = applyEvent(task, event, userMessage)!;
            seq += 1;
            const recorded = on.cluster.record({
              scope,
              taskId: ids.taskId,
              writeMode: 'every-state',
              kept: true,
              generation: seq,
              event,
              task,
            });
            const state = task.status?.state;
            return state === before
              ? recorded
              : Promise.all([recorded, on.storage.taskRows.tasks.write([{ scope, task, generation: seq }])]);
          }),
        );
    };
    const follow = async (on: Replica, signal = new AbortController().signal) => {
      const seen: StreamResponse[] = [];
      for await (const { response } of on.cluster.follow(scope, ids.taskId, signal)) seen.push(response);
      return seen;
    };
    /** Follows from `on`; resolves once its first response (the task as it stands) is in, with `all` to come. */
    const following = async (on: Replica) => {
      const responses = on.cluster.follow(scope, ids.taskId, new AbortController().signal)[Symbol.asyncIterator]();
      const first = await responses.next();
      const seen: StreamResponse[] = first.done ? [] : [first.value.response];
      // In an object: awaiting `following` must not wait for the rest.
      return {
        all: (async () => {
          for (let next = await responses.next(); !next.done; next = await responses.next())
            seen.push(next.value.response);
          return seen;
        })(),
      };
    };
    const describeResponse = (response: StreamResponse) => {
      const payload = response.payload!;
      if (payload.$case === 'task') return `task ${TaskState[payload.value.status!.state]}`;
      if (payload.$case === 'statusUpdate') return `status ${TaskState[payload.value.status!.state]}`;
      if (payload.$case === 'artifactUpdate') return `artifact ${payload.value.artifact!.parts.map(partText).join('')}`;
      return payload.$case;
    };
    const partText = (part: { content?: { $case: string; value: unknown } }) =>
      part.content?.$case === 'text' ? String(part.content.value) : '';

    it('gives a follower on B the task as it stands on A, then every later event once, to the end', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const run = runner(a);
      await run(
        AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)),
        status(TaskState.TASK_STATE_WORKING),
        chunk('Hel', false),
      );
      const followed = await following(b);
      await run(chunk('lo', true), chunk(' there', true), status(TaskState.TASK_STATE_COMPLETED));
      const seen = await followed.all;
      const first = seen[0].payload;
      expect(first?.$case).toBe('task');
      const standing = first?.$case === 'task' ? first.value : undefined;
      expect(standing?.history.map((m) => m.messageId)).toEqual(['m1']);
      const shown = (standing?.artifacts[0]?.parts ?? []).map(partText).join('');
      const later = seen
        .slice(1)
        .flatMap((r) => (r.payload?.$case === 'artifactUpdate' ? [partText(r.payload.value.artifact!.parts[0])] : []));
      expect(shown + later.join('')).toBe('Hello there');
      expect(describeResponse(seen.at(-1)!)).toBe('status TASK_STATE_COMPLETED');
    });

    /** Counts the queries `db` answers about A2A tasks, and the rows they return (other stores' polling aside). */
    const countTaskQueries = (db: PgDatabase) => {
      const counts = { queries: 0, rows: 0 };
      const query = db.query.bind(db) as (...args: unknown[]) => Promise<{ rows?: unknown[] }>;
      db.query = (async (...args: unknown[]) => {
        const result = await query(...args);
        const sql = args[0];
        const text = typeof sql === 'string' ? sql : (sql as { text: string }).text;
        if (text.includes('a2a_task')) {
          counts.queries += 1;
          counts.rows += result.rows?.length ?? 0;
        }
        return result;
      }) as unknown as typeof db.query;
      return counts;
    };
    /** The answer text a follower's responses make: the task's artifact, then each chunk appended. */
    const followedAnswer = (responses: StreamResponse[]) => {
      let text = '';
      for (const { payload } of responses) {
        if (payload?.$case === 'task') text = (payload.value.artifacts[0]?.parts ?? []).map(partText).join('');
        if (payload?.$case === 'artifactUpdate') {
          const chunkText = payload.value.artifact!.parts.map(partText).join('');
          text = payload.value.append ? text + chunkText : chunkText;
        }
      }
      return text;
    };

    it('resubscribes on B to a 2,000-chunk answer reading a bounded number of rows, then every chunk once (as C, which came at 1,000)', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const c = await replica('c');
      const run = runner(a);
      await run(
        AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)),
        status(TaskState.TASK_STATE_WORKING),
      );
      const words = Array.from({ length: 2_150 }, (_, i) => `c${i} `);
      // Batches of 37 chunks: snapshots fall inside batches and at their edges.
      const stream = async (from: number, to: number) => {
        for (let i = from; i < to; i += 37)
          await run(...words.slice(i, Math.min(i + 37, to)).map((w, j) => chunk(w, i + j > 0)));
      };
      await stream(0, 1_000);
      // On C: B's queries are counted below.
      const early = await following(c);
      await stream(1_000, 2_000);

      const counts = countTaskQueries(b.storage.db);
      const late = await following(b);
      const before = { ...counts };
      await stream(2_000, 2_150);
      await run(status(TaskState.TASK_STATE_COMPLETED));

      // The row, the snapshot and one page of the events after it: not 2,000 rows in 5 pages.
      expect(before.queries).toBeLessThanOrEqual(3);
      expect(before.rows).toBeLessThanOrEqual(SNAPSHOT_EVERY + 1);
      const whole = words.join('');
      for (const seen of [await early.all, await late.all]) {
        expect(seen[0].payload?.$case).toBe('task');
        expect(describeResponse(seen.at(-1)!)).toBe('status TASK_STATE_COMPLETED');
        // Every chunk once, in order: the chunks are all different, so a lost or repeated one changes the text.
        expect(followedAnswer(seen)).toBe(whole);
      }
      const standingLate = (await late.all)[0].payload;
      expect(standingLate?.$case === 'task' && standingLate.value.history.map((m) => m.messageId)).toEqual(['m1']);
      process.stderr.write(
        `resubscribe after 2,000 chunks: ${before.queries} queries, ${before.rows} rows before the first event\n`,
      );
    });

    it('follows nothing for a task no replica runs (no row, or one that has settled)', async () => {
      const a = await replica('a');
      const b = await replica('b');
      expect(await follow(b)).toEqual([]);
      const run = runner(a);
      await run(
        AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)),
        status(TaskState.TASK_STATE_INPUT_REQUIRED, 'which city?'),
      );
      expect(await follow(b)).toEqual([]);
    });

    it('carries a task answered on B after input-required on A on to its end, numbered on, for a follower on C', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const c = await replica('c');
      const asked = runner(a);
      await asked(
        AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)),
        status(TaskState.TASK_STATE_INPUT_REQUIRED, 'which city?'),
      );
      const row = await b.storage.taskRows.tasks.get({ ...scope, everyone: false }, ids.taskId);
      // B's turn starts from the row, as its executor does: a task event first.
      expect(row?.generation).toBe(2);
      const answered = runner(b, row);
      await answered(
        AgentEvent.task({
          ...row!.task,
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: at.toISOString() },
        }),
      );
      const followed = await following(c);
      await answered(chunk('sunny', false), status(TaskState.TASK_STATE_COMPLETED));
      expect((await followed.all).map(describeResponse)).toEqual([
        'task TASK_STATE_WORKING',
        'artifact sunny',
        'status TASK_STATE_COMPLETED',
      ]);
      const numbers = (await c.storage.taskEvents.read({ ...scope, taskId: ids.taskId }, 0)).map((r) => r.seq);
      expect(numbers).toEqual([1, 2, 3, 4, 5]);
    });

    it('ends a follower with "replica lost" when the replica running the task stops heartbeating', async () => {
      const a = await replica('a');
      const b = await replica('b', { heartbeatMs: 100, leaseMs: 300 });
      await runner(a)(
        AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)),
        status(TaskState.TASK_STATE_WORKING),
      );
      const followed = await following(b);
      // A stops (its replica row goes): B's sweep fails its task and appends the terminal event.
      await a.storage.close();
      const seen = await followed.all;
      expect(seen.map(describeResponse)).toEqual(['task TASK_STATE_WORKING', 'status TASK_STATE_FAILED']);
      const last = seen[1].payload;
      const reason = last?.$case === 'statusUpdate' ? last.value.status?.message?.parts.map(partText).join('') : '';
      expect(reason).toBe('replica lost');
    });

    it('ends a follower when the row of a task that writes no events settles', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const working = newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at);
      await a.storage.taskRows.tasks.write([{ scope, task: working }]);
      const followed = await following(b);
      await a.storage.taskRows.tasks.write([
        {
          scope,
          task: {
            ...working,
            status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: at.toISOString() },
          },
        },
      ]);
      expect((await followed.all).map(describeResponse)).toEqual([
        'task TASK_STATE_WORKING',
        'status TASK_STATE_COMPLETED',
      ]);
    });

    it('stops following when the caller goes', async () => {
      const a = await replica('a');
      const b = await replica('b');
      await runner(a)(AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at)));
      const gone = new AbortController();
      const responses = b.cluster.follow(scope, ids.taskId, gone.signal)[Symbol.asyncIterator]();
      const first = await responses.next();
      expect(first.done ? undefined : describeResponse(first.value.response)).toBe('task TASK_STATE_WORKING');
      // The caller goes while the follower waits for a later event; the task never moves again, so only that
      // can end it.
      const waiting = responses.next();
      gone.abort();
      expect(await waiting).toMatchObject({ done: true });
    });

    it('writes events with the secrets the node knows masked, as the rows are', async () => {
      const a = await replica('a');
      const run = runner(a);
      await run(
        AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at)),
        chunk(`the key is ${SECRET}`, false),
      );
      const stored = await a.storage.taskEvents.read({ ...scope, taskId: ids.taskId }, 0);
      expect(stored).toHaveLength(2);
      expect(JSON.stringify(stored)).not.toContain(SECRET);
      expect(JSON.stringify(stored[1].event)).toContain('the key is [secret]');
      // The snapshot the 100th event carries is masked too.
      await run(...Array.from({ length: SNAPSHOT_EVERY - 2 }, () => chunk('.', true)));
      const snapshot = await a.storage.taskEvents.snapshot({ ...scope, taskId: ids.taskId });
      expect(snapshot?.seq).toBe(SNAPSHOT_EVERY);
      expect(JSON.stringify(snapshot?.task)).not.toContain(SECRET);
      expect(JSON.stringify(snapshot?.task)).toContain('the key is [secret]');
    });

    it('writes no events for an on-settle task', async () => {
      const a = await replica('a');
      const task = newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, at);
      const event = AgentEvent.task(task);
      await a.cluster.record({
        scope,
        taskId: ids.taskId,
        writeMode: 'on-settle',
        kept: true,
        generation: 1,
        event,
        task,
      });
      expect(await a.storage.taskEvents.read({ ...scope, taskId: ids.taskId }, 0)).toEqual([]);
    });

    it('tells every replica of a cancel asked through another, by scope and task id', async () => {
      const a = await replica('a');
      const c = await replica('c');
      const heard = new Promise<[TaskScope, string]>((resolve) => a.cluster.onCancel((s, id) => resolve([s, id])));
      await c.cluster.cancel(scope, ids.taskId);
      expect(await heard).toEqual([scope, ids.taskId]);
    });
  });
}
