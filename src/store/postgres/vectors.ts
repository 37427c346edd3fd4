import { blobToVector, vectorToBlob } from '../../llm/embeddings/vector';
import type { StoredVector, VectorStore } from '../vectors';
import { rows, type PgDatabase, type PgSchema } from './database';

/**
 * Vectors as little-endian float32 bytes (no pgvector needed): each
 * process loads them into its own in-memory index, as with SQLite, and
 * keeps it in step with the other replicas' writes through
 * `written_xid`, the id of the transaction that last wrote the row.
 */
export const VECTOR_SCHEMA: PgSchema = {
  store: 'librarian_rag',
  steps: [
    `CREATE TABLE rag_vectors (
       collection TEXT NOT NULL, ref_id TEXT NOT NULL, provider TEXT NOT NULL, owner TEXT NOT NULL,
       vector BYTEA NOT NULL, PRIMARY KEY (collection, ref_id));
     CREATE INDEX rag_vectors_by_provider ON rag_vectors (collection, provider);`,
    `ALTER TABLE rag_vectors ADD COLUMN written_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
     CREATE INDEX rag_vectors_by_write ON rag_vectors (collection, provider, written_xid);`,
  ],
};

interface VectorRow {
  ref_id: string;
  owner: string;
  vector: Buffer;
}

const toStored = (r: VectorRow): StoredVector => ({ id: r.ref_id, owner: r.owner, vector: blobToVector(r.vector) });

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
           SET provider = EXCLUDED.provider, owner = EXCLUDED.owner, vector = EXCLUDED.vector,
               written_xid = pg_current_xact_id()`,
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
      const found = await rows<VectorRow>(
        db,
        'SELECT ref_id, owner, vector FROM rag_vectors WHERE collection = $1 AND provider = $2',
        [collection, provider],
      );
      return found.map(toStored);
    },
    /**
     * The version is the oldest transaction still running just before the
     * rows are read (`pg_snapshot_xmin`): every write of an older one had
     * committed and is read, so asking from there misses none, not even a
     * write whose transaction took its id before a later one committed.
     */
    async changedSince(collection, provider, version) {
      const [{ horizon }] = await rows<{ horizon: string }>(
        db,
        'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon',
      );
      const found = await rows<VectorRow>(
        db,
        `SELECT ref_id, owner, vector FROM rag_vectors
         WHERE collection = $1 AND provider = $2 AND ($3::xid8 IS NULL OR written_xid >= $3::xid8)`,
        [collection, provider, version ?? null],
      );
      return { rows: found.map(toStored), version: horizon };
    },
  };
}
