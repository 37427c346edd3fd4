import { Client } from 'pg';
import { createLocalEmbeddings } from '../../../src/llm/embeddings';
import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import { openPostgresStorage, type PostgresStorage } from '../../../src/store/postgres/storage';
import { RagService } from '../../../src/tools/librarian/rag';
import { startTestPostgres, type TestPostgres } from '../../support/postgres';
import { skipUnless, skipWithoutPostgres } from '../../support/prerequisites';

/**
 * Two replicas on one throwaway PostgreSQL. Without pgvector each keeps its
 * own in-memory vector index: what one embeds, a search through the other
 * finds, with no reload, because a search first reads the vectors written
 * since its index last looked. With pgvector neither loads anything: the
 * database searches.
 */
if (!skipWithoutPostgres('vector search across replicas')) {
  describe('vector search across replicas on PostgreSQL', () => {
    let server: TestPostgres;
    const storages: PostgresStorage[] = [];
    const rags: RagService[] = [];
    beforeAll(async () => {
      server = await startTestPostgres();
    }, 60_000);
    afterAll(async () => {
      for (const rag of rags) rag.close();
      for (const storage of storages) await storage.close();
      await server?.stop();
    });

    /** Replicas A and B on a fresh database; A saves and embeds, B searches. */
    const twoReplicas = async (pgvector: boolean) => {
      const url = await server.createDatabase();
      const replica = async (replicaId: string) => {
        const storage = await openPostgresStorage({
          url,
          logger: createMemoryLogger(),
          clock: () => new Date(),
          cluster: { replicaId, heartbeatMs: 1_000, leaseMs: 5_000 },
          pgvector,
        });
        storages.push(storage);
        const rag = new RagService({
          knowledge: storage.stores.knowledge,
          vectors: storage.stores.vectors,
          provider: createLocalEmbeddings(),
          logger: createMemoryLogger(),
        });
        rags.push(rag);
        return { storage, rag };
      };
      const a = await replica('a');
      const b = await replica('b');
      const save = async (content: string) => {
        const entry = await a.storage.stores.knowledge.saveKnowledge(OWNER, { kind: 'fact', content });
        a.rag.schedule();
        await a.rag.whenIdle();
        return entry.id;
      };
      const search = async (query: string) => {
        const found = await b.rag.retrieve(OWNER, query, { limit: 1, collections: ['knowledge'] });
        return { ids: found.hits.map((h) => h.id), method: found.method };
      };
      return { url, b, save, search };
    };

    it('finds through replica B a vector written through replica A after B loaded its index (bytes)', async () => {
      const { b, save, search } = await twoReplicas(false);
      const ferry = await save('the ferry to the island leaves at seven from pier four');
      expect(await search('ferry pier island')).toEqual({ ids: [ferry], method: 'exact' });
      const index = await b.rag.index('knowledge', 512);
      expect(index.size).toBe(1);

      const volcano = await save('the volcano observatory publishes ash forecasts every morning');
      expect((await search('volcano ash forecasts')).ids).toEqual([volcano]);
      // The same index object, grown by the catch-up read, not rebuilt.
      expect(await b.rag.index('knowledge', 512)).toBe(index);
      expect(index.size).toBe(2);
    }, 30_000);

    if (!skipUnless('searches in the database with pgvector', 'pgvector')) {
      it('finds through replica B what A wrote, searched by pgvector, no index in either replica', async () => {
        const { url, b, save, search } = await twoReplicas(true);
        const ferry = await save('the ferry to the island leaves at seven from pier four');
        const volcano = await save('the volcano observatory publishes ash forecasts every morning');
        expect(await search('ferry pier island')).toEqual({ ids: [ferry], method: 'database' });
        expect(await search('volcano ash forecasts')).toEqual({ ids: [volcano], method: 'database' });
        await expect(b.rag.index('knowledge', 512)).rejects.toThrow(/searched in the database/);
        const client = new Client({ connectionString: url });
        await client.connect();
        try {
          const { rows } = await client.query<{ dims: number }>(
            'SELECT vector_dims(embedding) AS dims FROM rag_vectors',
          );
          expect(rows).toEqual([{ dims: 512 }, { dims: 512 }]);
        } finally {
          await client.end();
        }
      }, 30_000);
    }
  });
}
