import { Client } from 'pg';
import { createMemoryLogger } from '../../src/log/logger';
import { normalize } from '../../src/llm/embeddings/vector';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import { createPgVectorStore } from '../../src/store/postgres/vectors';
import { startTestPostgres, type TestPostgres } from '../support/postgres';
import { skipUnless } from '../support/prerequisites';

const REPLICA = { replicaId: 'vectors', heartbeatMs: 3_600_000, leaseMs: 15_000 };

const unit = (...xs: number[]) => normalize(Float32Array.from(xs));

/** Runs `sql` once on `url` as whoever the URL names. */
async function run(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * How a database comes to search vectors with pgvector: on an open after the
 * extension appeared, under the migration lock, or not at all for a role
 * that may not create it; and how bytes written without pgvector become
 * searchable.
 */
if (!skipUnless('enabling pgvector on PostgreSQL', 'postgresql', 'pgvector')) {
  describe('enabling pgvector on PostgreSQL', () => {
    let server: TestPostgres;
    const opened: PostgresStorage[] = [];
    beforeAll(async () => {
      server = await startTestPostgres();
    }, 60_000);
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });
    afterAll(async () => {
      await server?.stop();
    });
    const open = async (url: string, pgvector = true, logger = createMemoryLogger()) => {
      const storage = await openPostgresStorage({ url, cluster: REPLICA, logger, clock: () => new Date(), pgvector });
      opened.push(storage);
      return storage;
    };

    it('searches vectors stored as bytes before the extension, once an open has enabled it', async () => {
      const url = await server.createDatabase();
      const before = await open(url, false);
      expect(before.stores.vectors.search).toBeUndefined();
      await before.stores.vectors.put('knowledge', 'p1', [
        { id: '1', owner: 'owner', vector: unit(1, 0, 0) },
        { id: '2', owner: 'owner', vector: unit(0, 1, 0) },
        { id: '3', owner: 'bearer:alice', vector: unit(1, 1, 0) },
      ]);
      await before.close();

      const logger = createMemoryLogger();
      const after = await open(url, true, logger);
      expect(logger.records.map((r) => r.message)).toContain('vectors searched in the database (pgvector)');
      const found = await after.stores.vectors.search!('knowledge', 'p1', unit(1, 0.1, 0), { limit: 2 });
      expect(found.map((m) => m.id)).toEqual(['1', '3']);
      expect(found[0].score).toBeCloseTo(1 / Math.hypot(1, 0.1), 5);
      const alice = await after.stores.vectors.search!('knowledge', 'p1', unit(1, 0.1, 0), {
        limit: 2,
        owner: 'bearer:alice',
      });
      expect(alice.map((m) => m.id)).toEqual(['3']);
    });

    it('enables it once when replicas open together, and searches a vector a bytes-only replica rewrote as it now is', async () => {
      const url = await server.createDatabase();
      const [a] = await Promise.all([open(url), open(url)]);
      await a.stores.vectors.put('knowledge', 'p1', [
        { id: '1', owner: 'owner', vector: unit(1, 0) },
        { id: '2', owner: 'owner', vector: unit(0.8, 0.6) },
      ]);
      // A replica of the version before pgvector writes the bytes only; the old searchable copy must not stay.
      const older = createPgVectorStore({ db: a.db });
      await older.put('knowledge', 'p1', [{ id: '1', owner: 'owner', vector: unit(0, 1) }]);
      const found = await a.stores.vectors.search!('knowledge', 'p1', unit(1, 0), { limit: 2 });
      expect(found.map((m) => m.id)).toEqual(['2', '1']);
      expect(found[1].score).toBeCloseTo(0, 5);
    });

    it('stores and searches vectors too long to stay in the row (3,072 dimensions: 12 KB)', async () => {
      const url = await server.createDatabase();
      const storage = await open(url);
      const long = (at: number) => unit(...Array.from({ length: 3072 }, (_, i) => (i === at ? 1 : 0.01)));
      await storage.stores.vectors.put('knowledge', 'large', [
        { id: '1', owner: 'owner', vector: long(0) },
        { id: '2', owner: 'owner', vector: long(1) },
      ]);
      const found = await storage.stores.vectors.search!('knowledge', 'large', long(1), { limit: 1 });
      // pgvector sums in float32: over 3,072 products the score is 1 to about 1e-5.
      expect(found).toEqual([{ id: '2', score: expect.closeTo(1, 4) }]);
    });

    it('keeps the in-memory path, with a warning, for a role that may not create the extension, until it exists', async () => {
      const adminUrl = await server.createDatabase();
      const name = new URL(adminUrl).pathname.slice(1);
      await run(server.url, 'DROP ROLE IF EXISTS lango_app; CREATE ROLE lango_app LOGIN');
      await run(server.url, `ALTER DATABASE ${name} OWNER TO lango_app`);
      const appUrl = `postgres://lango_app@127.0.0.1:${server.port}/${name}`;

      const logger = createMemoryLogger();
      const limited = await open(appUrl, true, logger);
      expect(limited.stores.vectors.search).toBeUndefined();
      expect(limited.stores.vectors.changedSince).toBeDefined();
      const warning = logger.records.find((r) => r.level === 'warn');
      expect(warning?.message).toBe("vectors searched in each replica's memory");
      expect(String(warning?.meta.reason)).toMatch(/may not enable pgvector.*CREATE EXTENSION vector/);
      await limited.stores.vectors.put('knowledge', 'p1', [{ id: '1', owner: 'owner', vector: unit(0, 1) }]);
      await limited.close();

      // An administrator creates it; the next open as the same role adds the searchable column and fills it.
      await run(adminUrl, 'CREATE EXTENSION vector');
      const enabled = await open(appUrl);
      const found = await enabled.stores.vectors.search!('knowledge', 'p1', unit(0, 1), { limit: 1 });
      expect(found).toEqual([{ id: '1', score: expect.closeTo(1, 5) }]);
    });
  });
}
