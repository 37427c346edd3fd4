import { createMemoryLogger } from '../../src/log/logger';
import { namedCaller, OWNER } from '../../src/principal';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import { emptyAllTables } from '../support/postgres';
import { skipUnless, skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';
import type { StoresFactory } from './contracts/factory';
import { graphStoreContract } from './contracts/graph.contract';
import { jobQueueContract } from './contracts/jobQueue.contract';
import { jobStoresContract } from './contracts/jobs.contract';
import { knowledgeStoreContract } from './contracts/knowledge.contract';
import { ledgerContract } from './contracts/ledger.contract';
import { memoryStoreContract } from './contracts/memory.contract';
import { sessionStoreContract } from './contracts/sessions.contract';
import { tenantScopeContract } from './contracts/tenants.contract';
import { timelineStoreContract } from './contracts/timelines.contract';
import { vaultStoreContract } from './contracts/vault.contract';
import { vectorStoreContract } from './contracts/vectors.contract';

/** One replica whose heartbeat never fires during a test (its first beat is at open). */
const TEST_REPLICA = { replicaId: 'contract', heartbeatMs: 3_600_000, leaseMs: 15_000 };

if (!skipWithoutPostgres('the store contracts on PostgreSQL')) {
  /** One database with every schema applied, shared by the suite's tests. */
  const database = useMigratedDatabase();

  /**
   * PostgreSQL storage on a fresh database of the suite's throwaway server,
   * per test; `pgvector` false keeps vectors as bytes even where the extension exists.
   */
  const postgresStores = (name: string, pgvector: boolean): StoresFactory => ({
    name,
    async open(options = {}) {
      await emptyAllTables(database.url());
      const open = () =>
        openPostgresStorage({
          url: database.url(),
          cluster: TEST_REPLICA,
          logger: createMemoryLogger(),
          clock: options.clock ?? (() => new Date()),
          pgvector,
          timelinesKept: options.timelinesKept,
        });
      let storage: PostgresStorage = await open();
      return {
        get stores() {
          return storage.stores;
        },
        async reopen() {
          await storage.close();
          storage = await open();
          return storage.stores;
        },
        close: () => storage.close(),
      };
    },
  });
  const postgres = postgresStores('PostgreSQL', true);

  sessionStoreContract(postgres);
  memoryStoreContract(postgres);
  knowledgeStoreContract(postgres);
  graphStoreContract(postgres);
  if (!skipUnless('vector store (PostgreSQL, searched in the database with pgvector)', 'pgvector'))
    vectorStoreContract(postgres, { search: 'database' });
  vectorStoreContract(postgresStores('PostgreSQL, vectors as bytes', false), { search: 'memory' });
  vaultStoreContract(postgres);
  ledgerContract(postgres);
  jobStoresContract(postgres);
  timelineStoreContract(postgres, { replica: TEST_REPLICA.replicaId });
  jobQueueContract(postgres);
  tenantScopeContract(postgres);

  describe('replicas on one PostgreSQL database', () => {
    const now = '2026-05-01T10:00:00.000Z';
    const alice = namedCaller('bearer:alice');
    const opened: PostgresStorage[] = [];
    const replica = async (replicaId: string, timing: { heartbeatMs: number; leaseMs: number }) => {
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, ...timing },
        logger: createMemoryLogger(),
        clock: () => new Date(now),
      });
      opened.push(storage);
      return storage.stores;
    };
    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });

    it('runs a cron fire time once and a queued background job once, whichever replica asks first', async () => {
      const a = await replica('a', TEST_REPLICA);
      const b = await replica('b', TEST_REPLICA);
      await a.cron.insert(alice, {
        name: 'hourly',
        kind: 'every',
        schedule: 'every 1h',
        prompt: 'p',
        status: 'active',
        anchorAt: now,
        nextRunAt: now,
        lastRunAt: null,
        createdAt: now,
      });
      const fire = { jobName: 'hourly', trigger: 'schedule' as const, scheduledFor: now, startedAt: now };
      const [onA, onB] = await Promise.all([a.cron.startRun(alice, fire), b.cron.startRun(alice, fire)]);
      expect([onA, onB].filter((id) => id !== undefined)).toHaveLength(1);
      expect(await b.cron.history(alice, 'hourly', 10)).toHaveLength(1);

      await a.background.insert(alice, { id: 'bg-1', label: null, prompt: 'once', createdAt: now });
      const claims = await Promise.all([a.background.markRunning('bg-1', now), b.background.markRunning('bg-1', now)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
    });

    // An hour's lease: however slow the machine, no replica falls silent past it during a test.
    const QUIET = { heartbeatMs: 3_600_000, leaseMs: 3_600_000 };

    it('lists every replica with its heartbeat age by the database clock, live within the lease, itself marked', async () => {
      const timing = QUIET;
      const a = await replica('a', timing);
      await replica('b', timing);
      const seen = await a.replicas!.replicas();
      expect(seen.map((r) => [r.replicaId, r.self, r.live])).toEqual([
        ['a', true, true],
        ['b', false, true],
      ]);
      for (const r of seen) {
        expect(r.heartbeatAgeMs).toBeGreaterThanOrEqual(0);
        expect(r.heartbeatAgeMs).toBeLessThan(timing.leaseMs);
        expect(Date.parse(r.startedAt)).not.toBeNaN();
      }
    });

    it("fails a live replica's running rows only once it falls silent past the lease, as replica lost", async () => {
      // A beats once (at open) and then falls silent.
      const a = await replica('a', QUIET);
      await a.background.insert(alice, { id: 'bg-a', label: null, prompt: 'on a', createdAt: now });
      expect(await a.background.markRunning('bg-a', now)).toBe(true);
      await a.execJobs.insert(alice, { id: 'job-a', command: 'sleep 9', cwd: '/', pid: 1, startedAt: now });
      // B starting does not fail what A, still within its lease, is running.
      const b = await replica('b', QUIET);
      expect(await b.background.failInterrupted(now)).toBe(0);
      expect(await b.execJobs.markLost(now)).toBe(0);
      // C beats every 100 ms with a 400 ms lease: A is lost to it within a lease and a beat.
      const c = await replica('c', { heartbeatMs: 100, leaseMs: 400 });
      const failed = await waitFor(
        async () => {
          const job = await c.background.get(OWNER, 'bg-a');
          return job?.status === 'failed' && job;
        },
        20_000,
        "C's heartbeat to fail A's job",
      );
      expect(failed.result).toBe('replica lost');
      expect(await c.execJobs.get(OWNER, 'job-a')).toMatchObject({ status: 'lost' });
    });
  });
}
