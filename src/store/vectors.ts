/** One stored embedding: the row it embeds, whose row that is, and the vector. */
export interface StoredVector {
  id: string;
  owner: string;
  vector: Float32Array;
}

/** One answer of {@link VectorStore.search}: a row id and its similarity to the query. */
export interface VectorMatch {
  id: string;
  score: number;
}

/**
 * Embeddings of rows of other stores (knowledge, learnings), by collection
 * and embedding provider. Node maintenance: vectors are written by the
 * background embedder; each carries its row's owner, so a search filters by
 * principal. Searched either by the database itself ({@link search}) or in
 * each process's in-memory index, loaded whole ({@link load}).
 */
export interface VectorStore {
  /** Stores (or replaces) the vectors of rows of `collection` made by `provider`. */
  put(collection: string, provider: string, rows: StoredVector[]): Promise<void>;
  /** Every vector of `collection` made by `provider`. */
  load(collection: string, provider: string): Promise<StoredVector[]>;
  /**
   * Present where other processes write the same vectors (PostgreSQL, one
   * database for every replica): the vectors of `collection` by `provider`
   * written since `version` (all when undefined), possibly a few again, and
   * the version to ask from next. A search calls it first, so a vector
   * written through one replica is found through any other. SQLite has one
   * process per file, whose index already holds what it wrote.
   */
  changedSince?(
    collection: string,
    provider: string,
    version: string | undefined,
  ): Promise<{ rows: StoredVector[]; version: string }>;
  /**
   * Present where the database searches the vectors itself (PostgreSQL with
   * pgvector): no process then loads them. The `limit` vectors of
   * `collection` by `provider` with the highest dot product with `query`
   * (every provider's vectors are unit length, so cosine similarity: the
   * in-memory index's score), of `owner`'s rows only when `owner` is given,
   * best first. Exact; vectors of another length than the query's are skipped.
   */
  search?(
    collection: string,
    provider: string,
    query: Float32Array,
    options: { limit: number; owner?: string },
  ): Promise<VectorMatch[]>;
}
