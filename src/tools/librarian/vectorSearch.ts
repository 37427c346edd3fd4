import type { PackageLoader } from '../../packages';
import type { Logger } from '../../log/logger';
import type { StoredVector, VectorStore } from '../../store/vectors';
import { VectorIndex, type VectorHit } from './vectorIndex';

/**
 * How retrieval finds a collection's rows nearest a query: one interface,
 * two implementations, chosen once by what the vector store offers
 * ({@link vectorSearchFor}). Both score by dot product of unit vectors and
 * see only `owner`'s rows when it is given (every row for the node's owner).
 */
export interface VectorSearch {
  /** The `limit` best rows, best first, and how they were found (`exact`, `hnsw`, `database`); no method when the collection had none. */
  search(
    collection: string,
    query: Float32Array,
    limit: number,
    owner: string | undefined,
  ): Promise<{ hits: VectorHit[]; method?: string }>;
  /** Told of the vectors this process has just stored. */
  stored(collection: string, rows: StoredVector[]): Promise<void>;
  /** Stops background work (an HNSW graph being built). */
  close(): void;
}

/** What {@link vectorSearchFor} needs. */
export interface VectorSearchOptions {
  vectors: VectorStore;
  /** The embedding provider's id: only its vectors are searched. */
  provider: string;
  logger: Logger;
  /** Collections at least this large are also searched through an HNSW graph (in-memory search). */
  annThreshold?: number;
  /** Where the in-memory index finds hnswlib-node (optional); Node's own resolution when absent. */
  packages?: PackageLoader;
}

/**
 * The database's own search where the store offers one (pgvector), else each process's in-memory index.
 * @example
 * const search = vectorSearchFor({ vectors: stores.vectors, provider: provider.id, logger });
 * const { hits } = await search.search('knowledge', queryVector, 5, visibleOwner(principal));
 */
export function vectorSearchFor(options: VectorSearchOptions): VectorSearch {
  const { vectors, provider } = options;
  if (!vectors.search) return new InMemoryVectorSearch(options);
  const search = vectors.search.bind(vectors);
  return {
    async search(collection, query, limit, owner) {
      return { hits: await search(collection, provider, query, { limit, owner }), method: 'database' };
    },
    async stored() {},
    close() {},
  };
}

/**
 * An in-memory {@link VectorIndex} per collection, loaded from the store on
 * first use. Where other processes write the same store (PostgreSQL
 * replicas without pgvector) each search first adds what they wrote since
 * the index last looked (`changedSince`).
 */
export class InMemoryVectorSearch implements VectorSearch {
  private readonly vectors: VectorStore;
  private readonly provider: string;
  private readonly logger: Logger;
  private readonly annThreshold?: number;
  private readonly packages?: PackageLoader;
  private readonly indexes = new Map<string, Promise<VectorIndex>>();
  /** Whose row each indexed id is, per collection: searches filter by it. */
  private readonly owners = new Map<string, Map<string, string>>();
  /** Per collection, where the index stands among every process's writes (stores shared by replicas only). */
  private readonly versions = new Map<string, string>();

  constructor(options: VectorSearchOptions) {
    this.vectors = options.vectors;
    this.provider = options.provider;
    this.logger = options.logger;
    this.annThreshold = options.annThreshold;
    this.packages = options.packages;
  }

  async search(
    collection: string,
    query: Float32Array,
    limit: number,
    owner: string | undefined,
  ): Promise<{ hits: VectorHit[]; method?: string }> {
    const index = await this.index(collection, query.length);
    await this.catchUp(collection, index);
    if (index.size === 0) return { hits: [] };
    const owners = this.ownersOf(collection);
    const accept = owner === undefined ? undefined : (id: string) => owners.get(id) === owner;
    return index.search(query, limit, accept);
  }

  async stored(collection: string, rows: StoredVector[]): Promise<void> {
    if (rows.length === 0) return;
    const index = await this.index(collection, rows[0].vector.length);
    this.add(collection, index, rows);
  }

  /** The index of `collection`, loading stored vectors of this provider on first use. */
  index(collection: string, dimensions: number): Promise<VectorIndex> {
    let loading = this.indexes.get(collection);
    if (!loading) {
      loading = this.loadAll(collection).then((rows) => {
        const index = new VectorIndex({
          dimensions,
          logger: this.logger,
          annThreshold: this.annThreshold,
          packages: this.packages,
        });
        this.add(collection, index, rows);
        return index;
      });
      this.indexes.set(collection, loading);
      // A failed load is tried again by the next search.
      loading.catch(() => this.indexes.delete(collection));
    }
    return loading;
  }

  close(): void {
    for (const loading of this.indexes.values())
      void loading.then(
        (index) => index.close(),
        () => {},
      );
  }

  private async loadAll(collection: string): Promise<StoredVector[]> {
    if (!this.vectors.changedSince) return this.vectors.load(collection, this.provider);
    const { rows, version } = await this.vectors.changedSince(collection, this.provider, undefined);
    this.versions.set(collection, version);
    return rows;
  }

  /** Adds what other replicas wrote since the index last looked (a no-op where no other process writes). */
  private async catchUp(collection: string, index: VectorIndex): Promise<void> {
    if (!this.vectors.changedSince) return;
    const { rows, version } = await this.vectors.changedSince(collection, this.provider, this.versions.get(collection));
    this.versions.set(collection, version);
    this.add(collection, index, rows);
  }

  private add(collection: string, index: VectorIndex, rows: StoredVector[]): void {
    const owners = this.ownersOf(collection);
    for (const row of rows) {
      if (row.vector.length !== index.dimensions) continue;
      index.upsert(row.id, row.vector);
      owners.set(row.id, row.owner);
    }
  }

  private ownersOf(collection: string): Map<string, string> {
    let owners = this.owners.get(collection);
    if (!owners) this.owners.set(collection, (owners = new Map()));
    return owners;
  }
}
