import { blobToVector, vectorToBlob } from '../../llm/embeddings/vector';
import type { StoredVector, VectorMatch, VectorStore } from '../vectors';
import { MIGRATION_LOCK, rows, transaction, type PgDatabase, type PgSchema } from './database';

/**
 * Vectors as little-endian float32 bytes, which every version of the node
 * reads and writes whether or not pgvector exists. Without pgvector each
 * process loads them into its own in-memory index, as with SQLite, and
 * keeps it in step with the other replicas' writes through `written_xid`,
 * the id of the transaction that last wrote the row. With pgvector see
 * {@link preparePgvector}.
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

/**
 * The searchable copy of each vector, added once pgvector exists in the
 * database. Not a schema step: the extension may appear on the server long
 * after the steps ran, and every open looks again. All idempotent.
 * - `embedding` is an untyped `vector` column: providers' dimensions differ
 *   (512 local, 1536 or 3072 OpenAI), and a search is exact (filtered by
 *   collection, provider and owner, then ordered by `<#>`), so it returns
 *   what the in-memory index returns. An HNSW index would need one partial
 *   index per dimension and give approximate answers that miss rows of a
 *   filtered owner; not built.
 * - The trigger empties `embedding` when a write changes the bytes but not
 *   it: a replica of an older version, which knows only the bytes, cannot
 *   leave a stale vector searchable. Such rows, and those stored before
 *   pgvector appeared, are filled from the bytes ({@link fillEmbeddings}),
 *   found through the partial index.
 * - Storage: a search reads every candidate's `embedding`, never the bytes.
 *   The bytes go out of line (EXTERNAL) and the vector stays in the row
 *   where it fits (MAIN): with both inline a row passes the 2 KB TOAST
 *   threshold at 512 dimensions and the searched vector was fetched from
 *   the TOAST table row by row.
 */
const PGVECTOR_STEPS = `
  ALTER TABLE rag_vectors ADD COLUMN IF NOT EXISTS embedding vector;
  CREATE INDEX IF NOT EXISTS rag_vectors_unembedded ON rag_vectors (collection, provider) WHERE embedding IS NULL;
  CREATE OR REPLACE FUNCTION rag_vectors_stale_embedding() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.vector IS DISTINCT FROM OLD.vector AND NEW.embedding IS NOT DISTINCT FROM OLD.embedding THEN
      NEW.embedding := NULL;
    END IF;
    RETURN NEW;
  END $$;
  CREATE OR REPLACE TRIGGER rag_vectors_stale_embedding BEFORE UPDATE ON rag_vectors
    FOR EACH ROW EXECUTE FUNCTION rag_vectors_stale_embedding();
  ALTER TABLE rag_vectors ALTER COLUMN vector SET STORAGE EXTERNAL, ALTER COLUMN embedding SET STORAGE MAIN;`;

/**
 * Whether this database searches vectors with pgvector, and if not, why:
 * the server lacks the extension, or has it but this role may not enable it
 * (worth a warning: an administrator can).
 */
export type PgvectorState =
  { searchable: true } | { searchable: false; missing: 'server' | 'privilege'; reason: string };

interface ExtensionState {
  available: boolean;
  installed: boolean;
  ready: boolean;
}

const extensionState = async (db: Pick<PgDatabase, 'query'>): Promise<ExtensionState> =>
  (
    await rows<ExtensionState>(
      db,
      `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available,
              EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed,
              EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'rag_vectors'::regclass
                        AND attname = 'embedding' AND attstorage = 'm' AND NOT attisdropped) AS ready`,
    )
  )[0];

/**
 * Looks once, at open (and in `lango migrate`), whether pgvector can search
 * this database's vectors, and prepares it if so: where the server has the
 * extension but the database not yet, `CREATE EXTENSION IF NOT EXISTS
 * vector` and {@link PGVECTOR_STEPS} run under the migration advisory lock
 * (replicas starting together take turns; the later ones find it done), then
 * vectors stored as bytes only are filled in. pgvector is not a trusted
 * extension: a role that may not create it gets the in-memory path and the
 * reason, and an administrator can run `CREATE EXTENSION vector` (or `lango
 * migrate` as a superuser) for the next start. Run after the schema steps.
 * @example
 * const state = await preparePgvector(db);
 * const vectors = createPgVectorStore({ db, pgvector: state.searchable });
 */
export async function preparePgvector(db: PgDatabase): Promise<PgvectorState> {
  const seen = await extensionState(db);
  if (!seen.ready) {
    if (!seen.available && !seen.installed) {
      return { searchable: false, missing: 'server', reason: 'the server has no pgvector extension (vector)' };
    }
    try {
      await transaction(db, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        const state = await extensionState(client);
        if (state.ready) return;
        if (!state.installed) await client.query('CREATE EXTENSION IF NOT EXISTS vector');
        await client.query(PGVECTOR_STEPS);
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      // 42501 insufficient_privilege: creating the extension needs a superuser, altering the table its owner.
      if (code !== '42501') throw err;
      return {
        searchable: false,
        missing: 'privilege',
        reason: `this role may not enable pgvector (${(err as Error).message}); run CREATE EXTENSION vector in this database as a superuser, or lango migrate as one`,
      };
    }
  }
  await fillEmbeddings(db);
  return { searchable: true };
}

/** The text pgvector reads: every float32 prints exactly as a JS number and reads back as the same float32. */
const vectorText = (v: Float32Array): string => `[${v.join(',')}]`;

/** Whether pgvector accepts `v` (at least one dimension, every one finite). */
const storable = (v: Float32Array): boolean => v.length > 0 && v.every(Number.isFinite);

const FILL_BATCH = 500;

/**
 * Fills `embedding` from the bytes where it is empty (of one collection and
 * provider when given): vectors stored before pgvector, or rewritten by a
 * replica that knows only the bytes. A row rewritten meanwhile keeps its
 * empty embedding (the bytes no longer match) and is filled next time.
 * Bytes pgvector refuses stay unsearchable, as the in-memory index skips a
 * vector of the wrong length.
 */
async function fillEmbeddings(db: PgDatabase, only?: { collection: string; provider: string }): Promise<void> {
  for (;;) {
    const missing = await rows<{ collection: string; ref_id: string; vector: Buffer }>(
      db,
      `SELECT collection, ref_id, vector FROM rag_vectors
       WHERE embedding IS NULL AND ($1::text IS NULL OR (collection = $1 AND provider = $2)) LIMIT ${FILL_BATCH}`,
      [only?.collection ?? null, only?.provider ?? null],
    );
    const filled = missing.filter((r) => r.vector.byteLength % 4 === 0 && storable(blobToVector(r.vector)));
    if (filled.length === 0) return;
    await db.query(
      `UPDATE rag_vectors r SET embedding = t.e::vector
       FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[]) AS t(c, id, b, e)
       WHERE r.collection = t.c AND r.ref_id = t.id AND r.embedding IS NULL AND r.vector = t.b`,
      [
        filled.map((r) => r.collection),
        filled.map((r) => r.ref_id),
        filled.map((r) => r.vector),
        filled.map((r) => vectorText(blobToVector(r.vector))),
      ],
    );
    if (missing.length < FILL_BATCH) return;
  }
}

interface VectorRow {
  ref_id: string;
  owner: string;
  vector: Buffer;
}

const toStored = (r: VectorRow): StoredVector => ({ id: r.ref_id, owner: r.owner, vector: blobToVector(r.vector) });

/**
 * The {@link VectorStore} on PostgreSQL (`rag_vectors`). `pgvector`: the
 * database was prepared by {@link preparePgvector}; the store then writes
 * the searchable copy beside the bytes and offers `search` (so no process
 * loads the vectors), else `changedSince` for each process's own index.
 */
export function createPgVectorStore(options: { db: PgDatabase; pgvector?: boolean }): VectorStore {
  const { db } = options;
  const load = async (collection: string, provider: string): Promise<StoredVector[]> => {
    const found = await rows<VectorRow>(
      db,
      'SELECT ref_id, owner, vector FROM rag_vectors WHERE collection = $1 AND provider = $2',
      [collection, provider],
    );
    return found.map(toStored);
  };
  if (options.pgvector) {
    return {
      async put(collection, provider, stored) {
        if (stored.length === 0) return;
        await db.query(
          `INSERT INTO rag_vectors (collection, ref_id, provider, owner, vector, embedding)
           SELECT $1, r, $2, o, v, e::vector FROM unnest($3::text[], $4::text[], $5::bytea[], $6::text[]) AS t(r, o, v, e)
           ON CONFLICT (collection, ref_id) DO UPDATE
             SET provider = EXCLUDED.provider, owner = EXCLUDED.owner, vector = EXCLUDED.vector,
                 embedding = EXCLUDED.embedding, written_xid = pg_current_xact_id()`,
          [
            collection,
            provider,
            stored.map((r) => r.id),
            stored.map((r) => r.owner),
            stored.map((r) => vectorToBlob(r.vector)),
            stored.map((r) => (storable(r.vector) ? vectorText(r.vector) : null)),
          ],
        );
      },
      load,
      /** `<#>` is the negated dot product: the in-memory index's score, and defined for a zero vector, unlike `<=>`. */
      async search(collection, provider, query, { limit, owner }) {
        if (limit <= 0 || !storable(query)) return [];
        await fillEmbeddings(db, { collection, provider });
        return rows<VectorMatch>(
          db,
          {
            name: 'rag_vectors_search',
            text: `SELECT ref_id AS id, -(embedding <#> $3::vector) AS score FROM rag_vectors
                   WHERE collection = $1 AND provider = $2 AND embedding IS NOT NULL
                     AND vector_dims(embedding) = $4 AND ($5::text IS NULL OR owner = $5)
                   ORDER BY embedding <#> $3::vector LIMIT $6`,
            values: [collection, provider, vectorText(query), query.length, owner ?? null, limit],
          },
          [],
        );
      },
    };
  }
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
    load,
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
