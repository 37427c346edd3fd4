import { createLocalEmbeddings } from '../../../src/llm/embeddings';
import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import { openPostgresStorage, type PostgresStorage } from '../../../src/store/postgres/storage';
import { RagService } from '../../../src/tools/librarian/rag';
import { skipWithoutPostgres, startTestPostgres, type TestPostgres } from '../../support/postgres';

/**
 * Two replicas on one throwaway PostgreSQL, each with its own in-memory
 * vector index: what one embeds, a search through the other finds, with no
 * reload, because a search first reads the vectors written since its index
 * last looked.
 */
if (!skipWithoutPostgres('vector indexes kept in step across replicas')) {
  describe('vector indexes kept in step across replicas on PostgreSQL', () => {
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

    it('finds through replica B a vector written through replica A after B loaded its index', async () => {
      const url = await server.createDatabase();
      const replica = async (replicaId: string) => {
        const storage = await openPostgresStorage({
          url,
          logger: createMemoryLogger(),
          clock: () => new Date(),
          cluster: { replicaId, heartbeatMs: 1_000, leaseMs: 5_000 },
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
      const search = async (query: string) =>
        (await b.rag.retrieve(OWNER, query, { limit: 1, collections: ['knowledge'] })).hits.map((h) => h.id);

      const ferry = await save('the ferry to the island leaves at seven from pier four');
      expect(await search('ferry pier island')).toEqual([ferry]);
      const index = await b.rag.index('knowledge', 512);
      expect(index.size).toBe(1);

      const volcano = await save('the volcano observatory publishes ash forecasts every morning');
      expect(await search('volcano ash forecasts')).toEqual([volcano]);
      // The same index object, grown by the catch-up read, not rebuilt.
      expect(await b.rag.index('knowledge', 512)).toBe(index);
      expect(index.size).toBe(2);
    }, 30_000);
  });
}
