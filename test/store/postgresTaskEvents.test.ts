import { Client } from 'pg';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import { TASK_EVENTS_CHANNEL } from '../../src/store/postgres/taskEvents';
import type { TaskEventRecord, TaskKey } from '../../src/store/taskEvents';
import { emptyAllTables } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';
import { taskEventsContract, type TaskEventsFactory } from './contracts/taskEvents.contract';

/**
 * The A2A task events across replicas (issue 16): two storages on one
 * throwaway PostgreSQL database stand for two replicas of one node.
 */
if (!skipWithoutPostgres('the A2A task events on PostgreSQL')) {
  /** One database with every schema applied, shared by the suite's tests. */
  const database = useMigratedDatabase();

  const postgres: TaskEventsFactory = {
    name: 'PostgreSQL',
    async open() {
      await emptyAllTables(database.url());
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId: 'contract', heartbeatMs: 3_600_000, leaseMs: 15_000 },
        logger: createMemoryLogger(),
        clock: () => new Date(),
      });
      return {
        events: storage.taskEvents,
        rows: storage.taskRows.tasks,
        async backdate(taskIds, ms) {
          await storage.db.query(
            `UPDATE a2a_task_events SET at = at - make_interval(secs => $1::double precision / 1000)
             WHERE task_id = ANY ($2::text[])`,
            [ms, taskIds],
          );
        },
        close: () => storage.close(),
      };
    },
  };
  taskEventsContract(postgres);

  describe('A2A task events shared by replicas on PostgreSQL', () => {
    const opened: PostgresStorage[] = [];
    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });

    const replica = async (replicaId: string, logger: MemoryLogger = createMemoryLogger()) => {
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, heartbeatMs: 3_600_000, leaseMs: 15_000 },
        logger,
        clock: () => new Date(),
      });
      opened.push(storage);
      return storage.taskEvents;
    };
    const key = (taskId: string): TaskKey => ({ tenant: '', owner: 'bearer:alice', taskId });
    const event = (seq: number, text: string, terminal = false): TaskEventRecord => ({
      seq,
      event: { kind: terminal ? 'status-update' : 'artifact-update', text },
      terminal,
    });
    /** Collects what a follower yields until it ends. */
    const collect = async (records: AsyncIterable<TaskEventRecord>) => {
      const seen: TaskEventRecord[] = [];
      for await (const record of records) seen.push(record);
      return seen;
    };

    it('follows on B, with no gap and in order, a task whose events A writes before and after B starts', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const task = key('a-task-id-longer-than-any-uuid-0123456789-0123456789');
      await Promise.all([1, 2, 3].map((seq) => a.append(task, event(seq, `chunk ${seq}`))));
      const followed = collect(b.follow(task, { after: 1 }));
      for (let seq = 4; seq <= 40; seq += 1) void a.append(task, event(seq, `chunk ${seq}`));
      await a.append(task, event(41, 'done', true));
      const seen = await followed;
      expect(seen.map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
      expect(seen[0].event).toEqual({ kind: 'artifact-update', text: 'chunk 2' });
      expect(seen.at(-1)).toEqual({ seq: 41, event: { kind: 'status-update', text: 'done' }, terminal: true });
    });

    it('keeps one event per generation whichever replica writes it, and fences the end', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const lost = await replica('lost');
      const task = key('t-fenced');
      await a.append(task, event(1, 'asks a question'));
      // Answered through B after input-required: B's events go on after A's; a second writer of 2 is dropped.
      await b.append(task, event(2, 'answered on b'));
      await a.append(task, event(2, 'a second writer'));
      await b.append(task, event(3, 'replica lost', true));
      await lost.append(task, event(4, 'late event'));
      await lost.append(task, event(4, 'late end', true));
      expect(await a.read(task, 0)).toEqual([
        event(1, 'asks a question'),
        event(2, 'answered on b'),
        event(3, 'replica lost', true),
      ]);
    });

    it('sends one notification per committed batch, naming its tasks', async () => {
      const a = await replica('a');
      const watcher = new Client({ connectionString: database.url() });
      await watcher.connect();
      try {
        const payloads: string[] = [];
        watcher.on('notification', (message) => payloads.push(message.payload ?? ''));
        await watcher.query(`LISTEN ${TASK_EVENTS_CHANNEL}`);
        await Promise.all([
          a.append(key('t1'), event(1, 'x')),
          a.append(key('t1'), event(2, 'y')),
          a.append(key('t2'), event(1, 'z')),
        ]);
        await waitFor(() => payloads.length > 0, 20_000, 'the batch notification');
        // One more round trip on the watcher: a second notification would have arrived before its answer.
        await watcher.query('SELECT 1');
        expect(payloads).toHaveLength(1);
        expect(JSON.parse(payloads[0])).toEqual([
          ['', 'bearer:alice', 't1'],
          ['', 'bearer:alice', 't2'],
        ]);
      } finally {
        await watcher.end();
      }
    });

    // How soon is the bench's cancelPropagation figure (target: the command gone within 100 ms).
    it('tells the replica running a task of a cancel received by another', async () => {
      const a = await replica('a');
      const c = await replica('c');
      const task = key('t-cancel');
      const heard = new Promise<TaskKey>((resolve) => a.onCancel(resolve));
      await c.requestCancel(task);
      expect(await heard).toEqual(task);
    });

    it('reconnects a dropped listen connection, logs it, and then wakes followers and replays cancels', async () => {
      const logger = createMemoryLogger();
      const a = await replica('a');
      const b = await replica('b', logger);
      const task = key('t-reconnect');
      const cancels: TaskKey[] = [];
      b.onCancel((k) => cancels.push(k));
      const followed = collect(b.follow(task, { after: 0 }));
      await a.append(task, event(1, 'before the drop'));
      const admin = new Client({ connectionString: database.url() });
      await admin.connect();
      try {
        // Ends every listening backend: A's and B's wake-up connections.
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
        );
      } finally {
        await admin.end();
      }
      await waitFor(
        () => logger.records.some((r) => r.message === 'listen connection failed'),
        20_000,
        'the drop to be logged',
      );
      await a.requestCancel(task);
      await a.append(task, event(2, 'after the drop', true));
      expect((await followed).map((r) => r.seq)).toEqual([1, 2]);
      await waitFor(() => cancels.length > 0, 20_000, 'the cancel recorded while B was not listening');
      expect(cancels[0]).toEqual(task);
      await waitFor(
        () => logger.records.some((r) => r.message === 'listen connection back'),
        20_000,
        'the reconnect to be logged',
      );
    });

    it('stops following when the signal aborts, and purges a task with its cancels', async () => {
      const a = await replica('a');
      const task = key('t-purge');
      await a.append(task, event(1, 'only'));
      const controller = new AbortController();
      const seen: number[] = [];
      const followed = (async () => {
        for await (const record of a.follow(task, { after: 0, signal: controller.signal })) {
          seen.push(record.seq);
          controller.abort();
        }
      })();
      await followed;
      expect(seen).toEqual([1]);
      await a.requestCancel(task);
      await a.purge([task]);
      expect(await a.read(task, 0)).toEqual([]);
      const admin = new Client({ connectionString: database.url() });
      await admin.connect();
      try {
        expect((await admin.query('SELECT 1 FROM a2a_task_cancels')).rowCount).toBe(0);
      } finally {
        await admin.end();
      }
    });
  });
}
