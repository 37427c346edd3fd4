/** One stored embedding: the row it embeds, whose row that is, and the vector. */
export interface StoredVector {
  id: string;
  owner: string;
  vector: Float32Array;
}

/**
 * Embeddings of rows of other stores (knowledge, learnings), by collection
 * and embedding provider. Node maintenance: vectors are written by the
 * background embedder and loaded whole into each process's in-memory index;
 * each carries its row's owner, so a search filters by principal.
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
}
