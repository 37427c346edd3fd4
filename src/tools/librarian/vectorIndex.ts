import { performance } from 'node:perf_hooks';
import type { HierarchicalNSW } from 'hnswlib-node';
import type { Logger } from '../../log/logger';
import { dot } from '../../llm/embeddings/vector';
import { createPackageLoader, MissingPackageError, type PackageLoader } from '../../packages';

/** One nearest neighbour: the row id and its cosine similarity to the query. */
export interface VectorHit {
  id: string;
  score: number;
}

/** Which rows a search may return (a principal's own); every row when absent. */
export type VectorFilter = (id: string) => boolean;

/** Options of {@link VectorIndex}. */
export interface VectorIndexOptions {
  dimensions: number;
  logger: Logger;
  /** Collections at least this large are also searched through an HNSW graph. */
  annThreshold?: number;
  /** HNSW search breadth; higher is slower and closer to exact. */
  efSearch?: number;
  /** Milliseconds of HNSW building per event-loop turn, so requests keep flowing meanwhile. */
  buildSliceMs?: number;
  /** HNSW links per node (`M`). */
  m?: number;
  /** HNSW build breadth (`efConstruction`). */
  efConstruction?: number;
  /** Where hnswlib-node (an optional package) comes from; Node's own resolution when absent. */
  packages?: PackageLoader;
}

type HnswModule = typeof import('hnswlib-node');

/**
 * Loads the native HNSW module (the optional hnswlib-node) on first need. A
 * node without it, or whose build of the addon failed, still serves every
 * search, exactly: `null` means unavailable.
 */
function loadHnsw(packages: PackageLoader, logger: Logger): HnswModule | null {
  try {
    return packages.load<HnswModule>('hnswlib-node', 'an HNSW index for rag_retrieve');
  } catch (error) {
    if (error instanceof MissingPackageError) logger.info(`vector search stays exact: ${error.message}`);
    else logger.warn('hnswlib-node unavailable; vector search stays exact', { error });
    return null;
  }
}

/** Collection size from which an ANN index is built by default. */
export const DEFAULT_ANN_THRESHOLD = 20_000;

/**
 * Nearest-neighbour search over unit vectors.
 * Defaults (M 16, efConstruction 200, efSearch 512) were picked with
 * scripts/bench-rag.ts: hashed local embeddings have a high intrinsic
 * dimension, and lower settings lose recall (at 100k vectors about 0.80 at
 * efSearch 64, 0.90 at 256, 0.93 at 512, still a few ms a query). Every vector lives in one flat
 * Float32Array for exact cosine search (a dot product per row: about 40 ms
 * per 100k vectors of 512 floats). Past `annThreshold` an HNSW graph
 * (hnswlib-node, inner-product space) is built in the background, 20 ms
 * per event-loop turn so requests keep flowing; until it is ready, and for
 * small collections, search is exact.
 */
export class VectorIndex {
  readonly dimensions: number;
  private readonly logger: Logger;
  private readonly annThreshold: number;
  /** HNSW search breadth (`ef`); may be tuned at run time, e.g. by the benchmark. */
  efSearch: number;
  private readonly buildSliceMs: number;
  private readonly m: number;
  private readonly efConstruction: number;
  private readonly packages: PackageLoader;
  private ids: string[] = [];
  private readonly slotOf = new Map<string, number>();
  /** The HNSW graph labels rows by number: one label per id, never reused. */
  private readonly labelOf = new Map<string, number>();
  private readonly idOfLabel = new Map<number, string>();
  private nextLabel = 0;
  private matrix: Float32Array;
  private ann: HierarchicalNSW | undefined;
  private annCapacity = 0;
  private building: Promise<void> | undefined;
  private generation = 0;
  private closed = false;

  constructor(options: VectorIndexOptions) {
    this.dimensions = options.dimensions;
    this.logger = options.logger;
    this.annThreshold = options.annThreshold ?? DEFAULT_ANN_THRESHOLD;
    this.efSearch = options.efSearch ?? 512;
    this.buildSliceMs = options.buildSliceMs ?? 20;
    this.m = options.m ?? 16;
    this.efConstruction = options.efConstruction ?? 200;
    this.packages = options.packages ?? createPackageLoader();
    this.matrix = new Float32Array(1024 * this.dimensions);
  }

  get size(): number {
    return this.ids.length;
  }

  /** True once the HNSW graph holds every vector and serves searches. */
  get annReady(): boolean {
    return this.ann !== undefined;
  }

  /** Adds or replaces the vector of row `id`. */
  upsert(id: string, vector: Float32Array): void {
    if (vector.length !== this.dimensions) {
      throw new RangeError(`vector has ${vector.length} dimensions, the index ${this.dimensions}`);
    }
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      slot = this.ids.length;
      if ((slot + 1) * this.dimensions > this.matrix.length) {
        const grown = new Float32Array(this.matrix.length * 2);
        grown.set(this.matrix);
        this.matrix = grown;
      }
      this.ids.push(id);
      this.slotOf.set(id, slot);
    }
    this.matrix.set(vector, slot * this.dimensions);
    if (this.ann) {
      if (this.ann.getCurrentCount() >= this.annCapacity) {
        this.annCapacity *= 2;
        this.ann.resizeIndex(this.annCapacity);
      }
      this.ann.addPoint(Array.from(vector), this.label(id));
    } else if (this.ids.length >= this.annThreshold) {
      void this.buildAnn();
    }
  }

  /** Removes row `id`; a graph being built starts over. */
  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    const last = this.ids.length - 1;
    const lastId = this.ids[last];
    this.matrix.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
    this.ids[slot] = lastId;
    this.slotOf.set(lastId, slot);
    this.ids.pop();
    this.slotOf.delete(id);
    const label = this.labelOf.get(id);
    if (this.ann && label !== undefined) this.ann.markDelete(label);
    this.generation++;
  }

  /** The `k` most similar rows that `accept` lets through, through the HNSW graph when it is ready. */
  search(query: Float32Array, k: number, accept?: VectorFilter): { hits: VectorHit[]; method: 'exact' | 'hnsw' } {
    if (this.ann && this.size > 0) {
      const n = Math.min(k, this.size);
      this.ann.setEf(Math.max(this.efSearch, n));
      const byLabel = accept ? (label: number) => accept(this.idOfLabel.get(label) as string) : undefined;
      const found = this.ann.searchKnn(Array.from(query), n, byLabel);
      const hits = found.neighbors.map((label, i) => ({
        id: this.idOfLabel.get(label) as string,
        score: 1 - found.distances[i],
      }));
      return { hits, method: 'hnsw' };
    }
    return { hits: this.searchExact(query, k, accept), method: 'exact' };
  }

  /** The `k` most similar rows by scanning every vector: the ground truth for recall. */
  searchExact(query: Float32Array, k: number, accept?: VectorFilter): VectorHit[] {
    const d = this.dimensions;
    const top: VectorHit[] = [];
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (accept && !accept(this.ids[slot])) continue;
      const base = slot * d;
      let s = 0;
      for (let i = 0; i < d; i++) s += this.matrix[base + i] * query[i];
      if (top.length < k) {
        top.push({ id: this.ids[slot], score: s });
        if (top.length === k) top.sort((a, b) => b.score - a.score);
      } else if (s > top[k - 1].score) {
        // Insertion into a short sorted list beats a heap for k around 10.
        let j = k - 1;
        while (j > 0 && top[j - 1].score < s) {
          top[j] = top[j - 1];
          j--;
        }
        top[j] = { id: this.ids[slot], score: s };
      }
    }
    return top.sort((a, b) => b.score - a.score);
  }

  /** Cosine similarity of the stored vector of `id` and `query`, if stored. */
  similarity(id: string, query: Float32Array): number | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    return dot(this.matrix.subarray(slot * this.dimensions, (slot + 1) * this.dimensions), query);
  }

  /**
   * Builds the HNSW graph over every vector, yielding to the event loop
   * between chunks. Resolves when the graph serves searches; concurrent calls
   * share one build.
   */
  buildAnn(): Promise<void> {
    if (this.ann) return Promise.resolve();
    this.building ??= this.runBuild().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  /** Stops a graph build in progress (shutdown); searches stay exact until the next process builds one. */
  close(): void {
    this.closed = true;
    this.generation++;
  }

  /** The HNSW label of row `id`, given on first need. */
  private label(id: string): number {
    let label = this.labelOf.get(id);
    if (label === undefined) {
      label = this.nextLabel++;
      this.labelOf.set(id, label);
      this.idOfLabel.set(label, id);
    }
    return label;
  }

  private async runBuild(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const generation = this.generation;
      const started = Date.now();
      const capacity = Math.max(1024, this.ids.length * 2);
      const native = loadHnsw(this.packages, this.logger);
      if (!native) return;
      const graph = new native.HierarchicalNSW('ip', this.dimensions);
      graph.initIndex({
        maxElements: capacity,
        m: this.m,
        efConstruction: this.efConstruction,
        randomSeed: 42,
        allowReplaceDeleted: true,
      });
      let slot = 0;
      // Vectors appended while building are picked up: the loop reads the live length.
      while (slot < this.ids.length && slot < capacity && generation === this.generation) {
        const sliceEnd = performance.now() + this.buildSliceMs;
        for (; slot < this.ids.length && slot < capacity && performance.now() < sliceEnd; slot++) {
          const base = slot * this.dimensions;
          graph.addPoint(Array.from(this.matrix.subarray(base, base + this.dimensions)), this.label(this.ids[slot]));
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (generation !== this.generation || slot < this.ids.length) continue;
      this.ann = graph;
      this.annCapacity = capacity;
      this.logger.info('vector index: hnsw graph ready', { vectors: this.ids.length, ms: Date.now() - started });
      return;
    }
  }
}
