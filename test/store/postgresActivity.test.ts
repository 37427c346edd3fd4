import { Client } from 'pg';
import { createMemoryLogger } from '../../src/log/logger';
import { createNodeMetrics } from '../../src/observe/metrics';
import { JOB_QUEUE_CHANNEL } from '../../src/store/postgres/jobQueue';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import { TASK_EVENTS_CHANNEL } from '../../src/store/postgres/taskEvents';
import { emptyAllTables } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';
import { parseScrape } from '../support/prometheus';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';

if (!skipWithoutPostgres('the store activity metrics on PostgreSQL')) {
  describe("a PostgreSQL replica's store activity on /metrics", () => {
    const database = useMigratedDatabase();
    const opened: PostgresStorage[] = [];
    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });

    /** A replica whose store reports to its own metrics; `value` reads one series of them. */
    const replica = async (replicaId: string) => {
      const metrics = createNodeMetrics({ tasksByState: async () => ({}), peers: () => [] });
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, heartbeatMs: 3_600_000, leaseMs: 15_000 },
        logger: createMemoryLogger(),
        clock: () => new Date(),
        observer: metrics.observer,
      });
      opened.push(storage);
      const value = async (name: string, labels: Record<string, string> = {}) =>
        parseScrape(await metrics.scrape()).value(name, labels);
      const commits = async () => parseScrape(await metrics.scrape()).count('lango_store_write_duration_seconds');
      return { storage, value, commits };
    };
    type Replica = Awaited<ReturnType<typeof replica>>;

    /**
     * Notifies a channel every replica always listens on (a payload none acts on) and resolves once each has
     * heard it: a connection hears notifications in commit order, so by then each has heard every earlier one
     * it listened for.
     */
    const heardLater = async (...replicas: Replica[]) => {
      const count = (r: Replica) => r.value('lango_store_notifications_total', { channel: JOB_QUEUE_CHANNEL });
      const before = await Promise.all(replicas.map(count));
      const client = new Client({ connectionString: database.url() });
      await client.connect();
      try {
        await client.query('SELECT pg_notify($1, $2)', [JOB_QUEUE_CHANNEL, 'not a job']);
      } finally {
        await client.end();
      }
      await waitFor(
        async () => (await Promise.all(replicas.map(count))).every((n, i) => n > before[i]),
        20_000,
        'every replica to hear a later notification',
      );
    };

    it('counts group commits and their statements where written, and the notification only where a task is followed', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const c = await replica('c');
      const key = { tenant: '', owner: 'owner', taskId: 'task-1' };
      await Promise.all([
        a.storage.taskEvents.append(key, { seq: 1, event: { n: 1 }, terminal: false }),
        a.storage.taskEvents.append(key, { seq: 2, event: { n: 2 }, terminal: false }),
      ]);
      // One group: the task's lock, one insert of both events and one NOTIFY.
      expect(await a.commits()).toBe(1);
      expect(await a.value('lango_store_write_statements_total')).toBe(3);
      expect(await b.value('lango_store_write_statements_total')).toBe(0);

      // B follows the task: it listens before it reads, so once it has read the first two it hears the third.
      const stop = new AbortController();
      const followed = b.storage.taskEvents.follow(key, { after: 0, signal: stop.signal })[Symbol.asyncIterator]();
      expect((await followed.next()).value?.seq).toBe(1);
      expect((await followed.next()).value?.seq).toBe(2);
      await a.storage.taskEvents.append(key, { seq: 3, event: { n: 3 }, terminal: false });
      expect((await followed.next()).value?.seq).toBe(3);
      const heard = (r: typeof a) => r.value('lango_store_notifications_total', { channel: TASK_EVENTS_CHANNEL });
      expect(await heard(b)).toBe(1);
      // Nobody follows on A or C: neither is woken by the batch.
      await heardLater(a, c);
      expect([await heard(a), await heard(c)]).toEqual([0, 0]);

      // B stops following: it stops listening, and the next batch wakes no replica.
      stop.abort();
      expect((await followed.next()).done).toBe(true);
      await a.storage.taskEvents.append(key, { seq: 4, event: { n: 4 }, terminal: false });
      await heardLater(a, b, c);
      expect([await heard(a), await heard(b), await heard(c)]).toEqual([0, 1, 0]);
    });
  });
}
