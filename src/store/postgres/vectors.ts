import { blobToVector, vectorToBlob } from '../../llm/embeddings/vector';
import type { StoredVector, VectorStore } from '../vectors';
import { rows, type PgDatabase, type PgSchema } from './database';

/**
 * Vectors as little-endian float32 bytes (no pgvector needed): each
 * process loads them into its own in-memory index, as with SQLite.
 */
export const VECTOR_SCHEMA: PgSchema = {
  store: 'librarian_rag',
  steps: [
    `CREATE TABLE rag_vectors (
       collection TEXT NOT NULL, ref_id TEXT NOT NULL, provider TEXT NOT NULL, owner TEXT NOT NULL,
       vector BYTEA NOT NULL, PRIMARY KEY (collection, ref_id));
     CREATE INDEX rag_vectors_by_provider ON rag_vectors (collection, provider);`,
  ],
};

/** The {@link VectorStore} on PostgreSQL (`rag_vectors`). */
export function createPgVectorStore(options: { db: PgDatabase }): VectorStore {
  const { db } = options;
  return {
    async put(collection, provider, stored) {
      if (stored.length === 0) return;
      await db.query(
        `INSERT INTO rag_vectors (collection, ref_id, provider, owner, vector)
         SELECT $1, r, $2, o, v FROM unnest($3::text[], $4::text[], $5::bytea[]) AS t(r, o, v)
         ON CONFLICT (collection, ref_id) DO UPDATE
           SET provider = EXCLUDED.provider, owner = EXCLUDED.owner, vector = EXCLUDED.vector`,
        [
          collection,
          provider,
          stored.map((r) => r.id),
          stored.map((r) => r.owner),
          stored.map((r) => vectorToBlob(r.vector)),
        ],
      );
    },
    async load(collection, provider) {
      const found = await rows<{ ref_id: string; owner: string; vector: Buffer }>(
        db,
        'SELECT ref_id, owner, vector FROM rag_vectors WHERE collection = $1 AND provider = $2',
        [collection, provider],
      );
      return found.map((r): StoredVector => ({ id: r.ref_id, owner: r.owner, vector: blobToVector(r.vector) }));
    },
  };
}
