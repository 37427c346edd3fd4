import { createMemoryLogger } from '../../src/log/logger';
import { createNodeMetrics } from '../../src/observe/metrics';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import { TASK_EVENTS_CHANNEL } from '../../src/store/postgres/taskEvents';
import { emptyAllTables, skipWithoutPostgres } from '../support/postgres';
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
      const metrics = createNodeMetrics({ tasksByState: async () => ({}), peers: () => [], access: () => undefined });
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, heartbeatMs: 3_600_000, leaseMs: 15_000 },
        logger: createMemoryLogger(),
        clock: () => new Date(),
        observer: metrics.observer,
      });
      opened.push(storage);
      const value = async (name: string, labels: Record<string, string> = {}) => {
        const found = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
        return found
          .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
          .reduce((sum, v) => sum + v.value, 0);
      };
      return { storage, value };
    };

    it('counts group commits and their statements where written, and the notification on every replica', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const key = { tenant: '', owner: 'owner', taskId: 'task-1' };
      await Promise.all([
        a.storage.taskEvents.append(key, { event: { n: 1 }, terminal: false }),
        a.storage.taskEvents.append(key, { event: { n: 2 }, terminal: false }),
      ]);
      // One group: the task's lock, one insert of both events and one NOTIFY.
      expect(await a.value('lango_store_write_duration_seconds', { le: '+Inf' })).toBe(1);
      expect(await a.value('lango_store_write_statements_total')).toBe(3);
      expect(await b.value('lango_store_write_statements_total')).toBe(0);
      for (const { value } of [a, b])
        await waitFor(
          async () => (await value('lango_store_notifications_total', { channel: TASK_EVENTS_CHANNEL })) === 1,
          5_000,
          'the NOTIFY to reach the replica',
        );
    });
  });
}
