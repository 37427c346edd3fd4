import type { EmbeddingProvider } from '../../llm/embeddings/provider';
import type { Logger } from '../../log/logger';
import type { Principal } from '../../principal';
import { visibleOwner } from '../../principal';
import type { EmbeddedCollection, KnowledgeStore } from '../../store/knowledge';
import type { StoredVector, VectorStore } from '../../store/vectors';
import { VectorIndex } from './vectorIndex';

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
 * path, and the vectors go to the vector store and to an in-memory
 * {@link VectorIndex} per collection, loaded on first use. A search sees
 * only the rows of the principal that asks (the owner: everyone's).
 */
export class RagService {
  readonly provider: EmbeddingProvider;
  private readonly knowledge: KnowledgeStore;
  private readonly vectors: VectorStore;
  private readonly logger: Logger;
  private readonly annThreshold?: number;
  private readonly batchSize: number;
  private readonly retryMs: number;
  private readonly indexes = new Map<string, Promise<VectorIndex>>();
  /** Whose row each indexed id is, per collection: searches filter by it. */
  private readonly owners = new Map<string, Map<string, string>>();
  /**
   * Per collection, an id up to which every row has a vector: drains resume
   * there instead of re-checking the whole table (at 100k rows that check,
   * repeated per batch, made embedding quadratic). Row ids only grow.
   */
  private readonly cursors = new Map<string, string>();
  /** Per collection, where the index stands among every process's writes (stores shared by replicas only). */
  private readonly versions = new Map<string, string>();
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
    this.annThreshold = options.annThreshold;
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
      const index = await this.index(name, vector.length);
      await this.catchUp(name, index);
      if (index.size === 0) continue;
      const owners = this.ownersOf(name);
      const accept = owner === undefined ? undefined : (id: string) => owners.get(id) === owner;
      const { hits, method } = index.search(vector, options.limit, accept);
      methods.add(method);
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

  /** The in-memory index of `collection`, loading stored vectors of this provider on first use. */
  index(collection: string, dimensions: number): Promise<VectorIndex> {
    let loading = this.indexes.get(collection);
    if (!loading) {
      loading = this.loadAll(collection).then((rows) => {
        const index = new VectorIndex({ dimensions, logger: this.logger, annThreshold: this.annThreshold });
        this.add(collection, index, rows);
        return index;
      });
      this.indexes.set(collection, loading);
      // A failed load is tried again by the next search.
      loading.catch(() => this.indexes.delete(collection));
    }
    return loading;
  }

  private async loadAll(collection: string): Promise<StoredVector[]> {
    if (!this.vectors.changedSince) return this.vectors.load(collection, this.provider.id);
    const { rows, version } = await this.vectors.changedSince(collection, this.provider.id, undefined);
    this.versions.set(collection, version);
    return rows;
  }

  /** Adds what other replicas wrote since the index last looked (a no-op where no other process writes). */
  private async catchUp(collection: string, index: VectorIndex): Promise<void> {
    if (!this.vectors.changedSince) return;
    const { rows, version } = await this.vectors.changedSince(
      collection,
      this.provider.id,
      this.versions.get(collection),
    );
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

  /** Stops embedding; work in flight is abandoned and picked up again on the next start. */
  close(): void {
    this.closed = true;
    this.abort.abort();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const loading of this.indexes.values())
      void loading.then(
        (index) => index.close(),
        () => {},
      );
  }

  private ownersOf(collection: string): Map<string, string> {
    let owners = this.owners.get(collection);
    if (!owners) this.owners.set(collection, (owners = new Map()));
    return owners;
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
        const index = await this.index(name, vectors[0].length);
        const owners = this.ownersOf(name);
        for (const row of rows) {
          index.upsert(row.id, row.vector);
          owners.set(row.id, row.owner);
        }
        this.cursors.set(name, batch[batch.length - 1].id);
        this.logger.debug('embedded rows', { collection: name, count: batch.length });
      }
    }
  }
}
