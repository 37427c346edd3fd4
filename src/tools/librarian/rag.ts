import type { Statement } from 'better-sqlite3';
import type { EmbeddingProvider } from '../../llm/embeddings/provider';
import { blobToVector, vectorToBlob } from '../../llm/embeddings/vector';
import type { Logger } from '../../log/logger';
import type { SqliteDatabase } from '../../store/database';
import { migrate } from '../../store/database';
import { VectorIndex } from './vectorIndex';

/**
 * A table whose rows are embedded for retrieval. `pending` lists rows after
 * id `afterId` that have no vector from the current provider yet, by id; `describe` turns hit ids
 * back into what the model reads.
 */
export interface RagCollection {
  name: string;
  pending(providerId: string, afterId: number, limit: number): { id: number; text: string }[];
  describe(ids: number[]): Map<number, Record<string, unknown>>;
}

/** One retrieved row. */
export interface RagHit {
  collection: string;
  id: number;
  score: number;
  [field: string]: unknown;
}

/** Options of {@link RagService}. */
export interface RagServiceOptions {
  db: SqliteDatabase;
  provider: EmbeddingProvider;
  collections: RagCollection[];
  logger: Logger;
  annThreshold?: number;
  /** Rows embedded per provider call. */
  batchSize?: number;
  /** Wait before retrying after the provider failed. */
  retryMs?: number;
}

const STEPS = [
  `CREATE TABLE rag_vectors (
     collection TEXT NOT NULL, ref_id INTEGER NOT NULL, provider TEXT NOT NULL, vector BLOB NOT NULL,
     PRIMARY KEY (collection, ref_id));`,
];

/**
 * Retrieval over embedded rows. Saving a row only calls {@link schedule};
 * embedding happens afterwards, in batches, off the tool's path, and the
 * vectors go to `rag_vectors` (Float32 BLOBs keyed by collection and row id)
 * and to an in-memory {@link VectorIndex} per collection, loaded on first use.
 */
export class RagService {
  readonly provider: EmbeddingProvider;
  private readonly db: SqliteDatabase;
  private readonly collections: Map<string, RagCollection>;
  private readonly logger: Logger;
  private readonly annThreshold?: number;
  private readonly batchSize: number;
  private readonly retryMs: number;
  private readonly indexes = new Map<string, VectorIndex>();
  /**
   * Per collection, an id up to which every row has a vector: drains resume
   * there instead of re-checking the whole table (at 100k rows that check,
   * repeated per batch, made embedding quadratic). Row ids only grow.
   */
  private readonly cursors = new Map<string, number>();
  private draining: Promise<void> | undefined;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly abort = new AbortController();

  constructor(options: RagServiceOptions) {
    this.db = options.db;
    this.provider = options.provider;
    this.collections = new Map(options.collections.map((c) => [c.name, c]));
    this.logger = options.logger;
    this.annThreshold = options.annThreshold;
    this.batchSize = options.batchSize ?? 64;
    this.retryMs = options.retryMs ?? 30_000;
    migrate(this.db, 'librarian_rag', STEPS);
  }

  /** Names of the collections `retrieve` can search. */
  get collectionNames(): string[] {
    return [...this.collections.keys()];
  }

  /** Asks for unembedded rows to be embedded soon; returns at once. */
  schedule(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drain())
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  /** Resolves once no embedding work is queued (tests, the benchmark, shutdown). */
  async whenIdle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** The `limit` rows most similar to `query` across `collections` (all by default). */
  async retrieve(
    query: string,
    options: { limit: number; collections?: string[] },
  ): Promise<{ hits: RagHit[]; method: string }> {
    const names = options.collections?.length ? options.collections : this.collectionNames;
    const unknown = names.filter((n) => !this.collections.has(n));
    if (unknown.length)
      throw new RangeError(`unknown collection ${unknown.join(', ')}; known: ${this.collectionNames.join(', ')}`);
    const [vector] = await this.provider.embed([query], this.abort.signal);
    const scored: { collection: string; id: number; score: number }[] = [];
    const methods = new Set<string>();
    for (const name of names) {
      const index = this.index(name, vector.length);
      if (index.size === 0) continue;
      const { hits, method } = index.search(vector, options.limit);
      methods.add(method);
      for (const h of hits) scored.push({ collection: name, ...h });
    }
    scored.sort((a, b) => b.score - a.score);
    const top = scored.slice(0, options.limit);
    const hits: RagHit[] = [];
    for (const name of names) {
      const mine = top.filter((h) => h.collection === name);
      const rows = this.collections.get(name)!.describe(mine.map((h) => h.id));
      for (const h of mine) {
        const row = rows.get(h.id);
        if (row) hits.push({ ...row, collection: name, id: h.id, score: Math.round(h.score * 1000) / 1000 });
      }
    }
    hits.sort((a, b) => b.score - a.score);
    return { hits, method: [...methods].join('+') || 'exact' };
  }

  /** The in-memory index of `collection`, loading stored vectors of this provider on first use. */
  index(collection: string, dimensions: number): VectorIndex {
    let index = this.indexes.get(collection);
    if (index) return index;
    index = new VectorIndex({ dimensions, logger: this.logger, annThreshold: this.annThreshold });
    const rows = this.db
      .prepare('SELECT ref_id, vector FROM rag_vectors WHERE collection = ? AND provider = ?')
      .iterate(collection, this.provider.id) as Iterable<{ ref_id: number; vector: Buffer }>;
    for (const row of rows) {
      const v = blobToVector(row.vector);
      if (v.length === dimensions) index.upsert(row.ref_id, v);
    }
    this.indexes.set(collection, index);
    return index;
  }

  /** Stops embedding; work in flight is abandoned and picked up again on the next start. */
  close(): void {
    this.closed = true;
    this.abort.abort();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const index of this.indexes.values()) index.close();
  }

  private async drain(): Promise<void> {
    for (const collection of this.collections.values()) {
      for (;;) {
        if (this.closed) return;
        const after = this.cursors.get(collection.name) ?? 0;
        const batch = collection.pending(this.provider.id, after, this.batchSize);
        if (batch.length === 0) break;
        let vectors: Float32Array[];
        try {
          vectors = await this.provider.embed(
            batch.map((b) => b.text),
            this.abort.signal,
          );
        } catch (error) {
          if (this.closed) return;
          this.logger.warn('embedding failed; will retry', {
            collection: collection.name,
            error,
            retryMs: this.retryMs,
          });
          this.retryTimer = setTimeout(() => this.schedule(), this.retryMs);
          this.retryTimer.unref();
          return;
        }
        if (this.closed) return;
        const store = this.db.prepare(
          'INSERT OR REPLACE INTO rag_vectors (collection, ref_id, provider, vector) VALUES (?, ?, ?, ?)',
        );
        this.db.transaction(() => {
          batch.forEach((b, i) => store.run(collection.name, b.id, this.provider.id, vectorToBlob(vectors[i])));
        })();
        const index = this.index(collection.name, vectors[0].length);
        batch.forEach((b, i) => index.upsert(b.id, vectors[i]));
        this.cursors.set(collection.name, batch[batch.length - 1].id);
        this.logger.debug('embedded rows', { collection: collection.name, count: batch.length });
      }
    }
  }
}

/** The `pending` query for a table: rows after `afterId` with no vector from `providerId`, oldest first. */
export function pendingRows(
  db: SqliteDatabase,
  collection: string,
  table: string,
  textSql: string,
): RagCollection['pending'] {
  // Prepared on first use: `rag_vectors` exists only once the RagService has migrated.
  let statement: Statement<[number, string, string, number], { id: number; text: string }> | undefined;
  return (providerId, afterId, limit) => {
    statement ??= db.prepare<[number, string, string, number], { id: number; text: string }>(
      `SELECT t.id AS id, ${textSql} AS text FROM ${table} t
       WHERE t.id > ?
         AND NOT EXISTS (SELECT 1 FROM rag_vectors v WHERE v.collection = ? AND v.ref_id = t.id AND v.provider = ?)
       ORDER BY t.id LIMIT ?`,
    );
    return statement.all(afterId, collection, providerId, limit);
  };
}
