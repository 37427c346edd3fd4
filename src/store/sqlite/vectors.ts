import { blobToVector, vectorToBlob } from '../../llm/embeddings/vector';
import type { StoredVector, VectorStore } from '../vectors';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
  `CREATE TABLE rag_vectors (
     collection TEXT NOT NULL, ref_id INTEGER NOT NULL, provider TEXT NOT NULL, vector BLOB NOT NULL,
     PRIMARY KEY (collection, ref_id));`,
  `ALTER TABLE rag_vectors ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';`,
];

/** The {@link VectorStore} in SQLite: Float32 BLOBs in `rag_vectors`, keyed by collection and row id. */
export function createSqliteVectorStore(options: { db: SqliteDatabase }): VectorStore {
  const { db } = options;
  migrate(db, 'librarian_rag', STEPS);
  return {
    async put(collection, provider, rows) {
      const store = db.prepare(
        'INSERT OR REPLACE INTO rag_vectors (collection, ref_id, provider, vector, owner) VALUES (?, ?, ?, ?, ?)',
      );
      db.transaction(() => {
        for (const row of rows) store.run(collection, Number(row.id), provider, vectorToBlob(row.vector), row.owner);
      })();
    },
    async load(collection, provider) {
      const rows = db
        .prepare('SELECT ref_id, owner, vector FROM rag_vectors WHERE collection = ? AND provider = ?')
        .all(collection, provider) as { ref_id: number; owner: string; vector: Buffer }[];
      return rows.map((r): StoredVector => ({ id: String(r.ref_id), owner: r.owner, vector: blobToVector(r.vector) }));
    },
  };
}
