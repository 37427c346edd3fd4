import type { EmbeddingProvider } from '../../llm/embeddings/provider';
import type { Logger } from '../../log/logger';
import type { PackageLoader } from '../../packages';
import type { Principal } from '../../principal';
import { visibleOwner } from '../../principal';
import type { EmbeddedCollection, KnowledgeStore } from '../../store/knowledge';
import type { VectorStore } from '../../store/vectors';
import type { VectorIndex } from './vectorIndex';
import { InMemoryVectorSearch, vectorSearchFor, type VectorSearch } from './vectorSearch';

/** One retrieved row. */
export interface RagHit {
  collection: string;
  id: string;
  score: number;
  [field: string]: unknown;
}

/** Options of {@link RagService}. */
export interface RagServiceOptions {
  knowledge: KnowledgeStore;
  vectors: VectorStore;
  provider: EmbeddingProvider;
  logger: Logger;
  annThreshold?: number;
  /** Where the in-memory index finds hnswlib-node (optional); Node's own resolution when absent. */
  packages?: PackageLoader;
  /** Rows embedded per provider call. */
  batchSize?: number;
  /** Wait before retrying after the provider failed. */
  retryMs?: number;
}

/** The embedded collections, in retrieval order, and what the model reads of each hit. */
const COLLECTIONS: ReadonlyArray<{
  name: EmbeddedCollection;
  describe: (
    knowledge: KnowledgeStore,
    principal: Principal,
    ids: string[],
  ) => Promise<Map<string, Record<string, unknown>>>;
}> = [
  {
    name: 'knowledge',
    describe: async (knowledge, principal, ids) =>
      new Map(
        [...(await knowledge.knowledgeByIds(principal, ids))].map(([id, k]) => [
          id,
          { kind: k.kind, content: k.content, source: k.source, tags: k.tags },
        ]),
      ),
  },
  {
    name: 'learnings',
    describe: async (knowledge, principal, ids) =>
      new Map(
        [...(await knowledge.learningsByIds(principal, ids))].map(([id, l]) => [
          id,
          { errorPattern: l.errorPattern, diagnosis: l.diagnosis, fix: l.fix },
        ]),
      ),
  },
];

/**
 * Retrieval over embedded knowledge and learnings. Saving a row only calls
 * {@link schedule}; embedding happens afterwards, in batches, off the tool's
 * path, and the vectors go to the vector store, searched through one
 * {@link VectorSearch}: the database's own (pgvector) or an in-memory
 * {@link VectorIndex} per collection. A search sees only the rows of the
 * principal that asks (the owner: everyone's).
 */
export class RagService {
  readonly provider: EmbeddingProvider;
  private readonly knowledge: KnowledgeStore;
  private readonly vectors: VectorStore;
  private readonly search: VectorSearch;
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly retryMs: number;
  /**
   * Per collection, an id up to which every row has a vector: drains resume
   * there instead of re-checking the whole table (at 100k rows that check,
   * repeated per batch, made embedding quadratic). Row ids only grow.
   */
  private readonly cursors = new Map<string, string>();
  private draining: Promise<void> | undefined;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly abort = new AbortController();

  constructor(options: RagServiceOptions) {
    this.knowledge = options.knowledge;
    this.vectors = options.vectors;
    this.provider = options.provider;
    this.logger = options.logger;
    this.search = vectorSearchFor({
      vectors: options.vectors,
      provider: options.provider.id,
      logger: options.logger,
      annThreshold: options.annThreshold,
      packages: options.packages,
    });
    this.batchSize = options.batchSize ?? 64;
    this.retryMs = options.retryMs ?? 30_000;
  }

  /** Names of the collections `retrieve` can search. */
  get collectionNames(): string[] {
    return COLLECTIONS.map((c) => c.name);
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
      .catch((error: unknown) => this.logger.warn('embedding stopped', { error }))
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

  /** The `limit` rows of the principal's most similar to `query` across `collections` (all by default). */
  async retrieve(
    principal: Principal,
    query: string,
    options: { limit: number; collections?: string[] },
  ): Promise<{ hits: RagHit[]; method: string }> {
    const names = options.collections?.length ? options.collections : this.collectionNames;
    const unknown = names.filter((n) => !this.collectionNames.includes(n));
    if (unknown.length)
      throw new RangeError(`unknown collection ${unknown.join(', ')}; known: ${this.collectionNames.join(', ')}`);
    const [vector] = await this.provider.embed([query], this.abort.signal);
    const owner = visibleOwner(principal);
    const scored: { collection: string; id: string; score: number }[] = [];
    const methods = new Set<string>();
    for (const name of names) {
      const { hits, method } = await this.search.search(name, vector, options.limit, owner);
      if (method) methods.add(method);
      for (const h of hits) scored.push({ collection: name, ...h });
    }
    scored.sort((a, b) => b.score - a.score);
    const top = scored.slice(0, options.limit);
    const hits: RagHit[] = [];
    for (const { name, describe } of COLLECTIONS.filter((c) => names.includes(c.name))) {
      const mine = top.filter((h) => h.collection === name);
      const rows = await describe(
        this.knowledge,
        principal,
        mine.map((h) => h.id),
      );
      for (const h of mine) {
        const row = rows.get(h.id);
        if (row) hits.push({ ...row, collection: name, id: h.id, score: Math.round(h.score * 1000) / 1000 });
      }
    }
    hits.sort((a, b) => b.score - a.score);
    return { hits, method: [...methods].join('+') || 'exact' };
  }

  /** This process's in-memory index of `collection`; there is none where the database searches (pgvector). */
  index(collection: string, dimensions: number): Promise<VectorIndex> {
    if (!(this.search instanceof InMemoryVectorSearch))
      return Promise.reject(new Error('vectors are searched in the database; no in-memory index'));
    return this.search.index(collection, dimensions);
  }

  /** Stops embedding; work in flight is abandoned and picked up again on the next start. */
  close(): void {
    this.closed = true;
    this.abort.abort();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.search.close();
  }

  private async drain(): Promise<void> {
    for (const { name } of COLLECTIONS) {
      for (;;) {
        if (this.closed) return;
        const batch = await this.knowledge.unembedded(name, this.provider.id, this.cursors.get(name), this.batchSize);
        if (batch.length === 0) break;
        let vectors: Float32Array[];
        try {
          vectors = await this.provider.embed(
            batch.map((b) => b.text),
            this.abort.signal,
          );
        } catch (error) {
          if (this.closed) return;
          this.logger.warn('embedding failed; will retry', { collection: name, error, retryMs: this.retryMs });
          this.retryTimer = setTimeout(() => this.schedule(), this.retryMs);
          this.retryTimer.unref();
          return;
        }
        if (this.closed) return;
        const rows = batch.map((b, i) => ({ id: b.id, owner: b.owner, vector: vectors[i] }));
        await this.vectors.put(name, this.provider.id, rows);
        await this.search.stored(name, rows);
        this.cursors.set(name, batch[batch.length - 1].id);
        this.logger.debug('embedded rows', { collection: name, count: batch.length });
      }
    }
  }
}
