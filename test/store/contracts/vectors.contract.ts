import { createMemoryLogger } from '../../../src/log/logger';
import { normalize } from '../../../src/llm/embeddings/vector';
import type { StoredVector } from '../../../src/store/vectors';
import { VectorIndex } from '../../../src/tools/librarian/vectorIndex';
import { vectorSearchFor } from '../../../src/tools/librarian/vectorSearch';
import { useStores, type StoresFactory } from './factory';

/** Unit vectors from a seeded generator (mulberry32), so a failure repeats. */
function unitVectors(seed: number, count: number, dimensions: number): Float32Array[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  return Array.from({ length: count }, () => normalize(Float32Array.from({ length: dimensions }, next)));
}

/**
 * What every {@link VectorStore} must do. `search`: where its vectors are
 * searched, `memory` (each process's index, loaded from the store) or
 * `database` (the store's own `search`, pgvector); either way the answers
 * are those of an exact in-memory index over the same vectors.
 */
export function vectorStoreContract(factory: StoresFactory, options: { search: 'memory' | 'database' }): void {
  describe(`vector store (${factory.name}, searched in ${options.search === 'memory' ? 'memory' : 'the database'})`, () => {
    const opened = useStores(factory);

    it('keeps vectors by collection and provider, with their owner, replacing on put, across a restart', async () => {
      const vectors = opened().stores.vectors;
      await vectors.put('knowledge', 'p1', [
        { id: '1', owner: 'owner', vector: new Float32Array([0.6, 0.8]) },
        { id: '2', owner: 'bearer:alice', vector: new Float32Array([1, 0]) },
      ]);
      await vectors.put('knowledge', 'p1', [{ id: '2', owner: 'bearer:alice', vector: new Float32Array([0, 1]) }]);
      await vectors.put('knowledge', 'p2', [{ id: '3', owner: 'owner', vector: new Float32Array([1, 1]) }]);
      const loaded = await (await opened().reopen()).vectors.load('knowledge', 'p1');
      expect(
        loaded.map((v) => [v.id, v.owner, Array.from(v.vector).map((x) => Math.round(x * 10) / 10)]).sort(),
      ).toEqual([
        ['1', 'owner', [0.6, 0.8]],
        ['2', 'bearer:alice', [0, 1]],
      ]);
      expect(await opened().stores.vectors.load('learnings', 'p1')).toEqual([]);
    });

    it('finds the top k of an exact in-memory index, by owner, collection, provider and length', async () => {
      const vectors = opened().stores.vectors;
      expect(vectors.search !== undefined).toBe(options.search === 'database');
      const dims = 16;
      const rows: StoredVector[] = unitVectors(1, 200, dims).map((vector, i) => ({
        id: String(i + 1),
        owner: i % 3 === 0 ? 'bearer:alice' : 'owner',
        vector,
      }));
      await vectors.put('knowledge', 'p1', rows.slice(0, 120));
      await vectors.put('knowledge', 'p1', rows.slice(120));
      // Other collections, providers and lengths, searched never: near every query, they would win if they were.
      const queries = unitVectors(2, 6, dims);
      await vectors.put(
        'learnings',
        'p1',
        queries.map((vector, i) => ({ id: String(i + 1), owner: 'owner', vector })),
      );
      await vectors.put(
        'knowledge',
        'p2',
        queries.map((vector, i) => ({ id: String(500 + i), owner: 'owner', vector })),
      );
      await vectors.put('knowledge', 'p1', [
        { id: '900', owner: 'owner', vector: normalize(Float32Array.from(queries[0].subarray(0, 8))) },
      ]);

      const reference = new VectorIndex({ dimensions: dims, logger: createMemoryLogger() });
      for (const row of rows) reference.upsert(row.id, row.vector);
      const ownerOf = new Map(rows.map((r) => [r.id, r.owner]));
      const search = vectorSearchFor({ vectors, provider: 'p1', logger: createMemoryLogger() });
      for (const query of queries) {
        for (const owner of [undefined, 'bearer:alice']) {
          const expected = reference.searchExact(query, 7, owner ? (id) => ownerOf.get(id) === owner : undefined);
          const found = await search.search('knowledge', query, 7, owner);
          expect(found.method).toBe(options.search === 'memory' ? 'exact' : 'database');
          expect(found.hits.map((h) => h.id)).toEqual(expected.map((h) => h.id));
          found.hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i].score, 5));
        }
      }

      // A replaced vector is searched as it now is.
      await vectors.put('knowledge', 'p1', [{ id: '2', owner: 'owner', vector: queries[3] }]);
      await search.stored('knowledge', [{ id: '2', owner: 'owner', vector: queries[3] }]);
      const [best] = (await search.search('knowledge', queries[3], 1, undefined)).hits;
      expect(best.id).toBe('2');
      expect(best.score).toBeCloseTo(1, 5);
      expect((await search.search('knowledge', queries[3], 3, 'bearer:nobody')).hits).toEqual([]);
    });
  });
}
