/**
 * Benchmark (not a test) of `rag_retrieve` at 10k and 100k vectors with the
 * embedded `local` embeddings: embedding throughput, retrieval latency
 * through the tool (query embedding + search + row lookup) with exact search
 * and with the HNSW index, and recall@10 of HNSW against exact search.
 *
 * Run:
 *   npx tsc --module commonjs --target es2022 --esModuleInterop --skipLibCheck --rootDir . \
 *     --strict --outDir node_modules/.cache/lango-bench scripts/bench-rag.ts &&
 *     node node_modules/.cache/lango-bench/scripts/bench-rag.js [sizes...]
 *
 * Last run (2026-11-22, node 20.20, 2 shared vCPUs at load 5, 200 queries):
 *
 * | vectors | embed rows/s | exact p50 / p95 | HNSW build | HNSW p50 / p95 | recall@10 (ef 64/128/256/512) |
 * |---------|--------------|-----------------|------------|----------------|-------------------------------|
 * | 10k     | 9,272        | 14.8 / 26.2 ms  | 6.8 s      | 1.0 / 5.5 ms   | 0.886 / 0.921 / 0.955 / 0.973 |
 * | 100k    | 11,947       | 157 / 257 ms    | 113 s      | 2.6 / 3.3 ms   | 0.802 / 0.861 / 0.895 / 0.926 |
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LangoConfig } from '../src/config/schema';
import { silentLogger } from '../src/log/logger';
import { OWNER } from '../src/principal';
import { openSqliteStorage } from '../src/store/sqlite/storage';
import { createLibrarian } from '../src/tools/librarian/family';
import { LOCAL_EMBEDDING_DIMENSIONS } from '../src/llm/embeddings';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** A deterministic pseudo-random generator, so runs compare. */
function rng(seed: number) {
  return () => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

/** Synthetic notes: words drawn Zipf-like from a 20,000-word random vocabulary, 8 to 20 words each. */
function corpus(count: number, seed: number): string[] {
  const random = rng(seed);
  const letters = 'etaoinshrdlcumwfgypbvkjxqz';
  const vocabulary = Array.from({ length: 20_000 }, () => {
    let w = '';
    const length = 3 + Math.floor(random() * 8);
    // Letter frequencies skewed like English, so words share some trigrams but not all.
    for (let i = 0; i < length; i++) w += letters[Math.floor(Math.pow(random(), 1.6) * letters.length)];
    return w;
  });
  // Zipf-like (s = 1): the log of the rank is uniform.
  const word = () => vocabulary[Math.floor(Math.pow(vocabulary.length, random())) - 1];
  return Array.from({ length: count }, () => Array.from({ length: 8 + Math.floor(random() * 13) }, word).join(' '));
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function bench(size: number): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-bench-rag-'));
  const storage = openSqliteStorage({
    file: path.join(dir, 'lango.db'),
    logger: silentLogger,
    clock: () => new Date(),
  });
  const { db } = storage;
  const config = LangoConfig.parse({ embedding: { provider: 'local' } });
  const librarian = createLibrarian({
    config,
    dataDir: dir,
    stores: storage.stores,
    logger: silentLogger,
    // Build the graph by hand below, so exact search can be timed first.
    annThreshold: Number.MAX_SAFE_INTEGER,
  });
  const rag = librarian.rag!;
  const tool = librarian.tools.find((t) => t.name === 'rag_retrieve')!;
  const ctx = {
    signal: new AbortController().signal,
    logger: silentLogger,
    principal: OWNER,
    sessionId: 'bench',
    agentName: 'librarian',
    approved: false,
  };
  try {
    const texts = corpus(size, 42);
    let t = performance.now();
    // The SQLite store writes each row before its promise settles: one transaction holds them all.
    await Promise.all(
      db.transaction(() =>
        texts.map((content) => librarian.knowledge.saveKnowledge(OWNER, { kind: 'fact', content })),
      )(),
    );
    const insertMs = performance.now() - t;

    t = performance.now();
    rag.schedule();
    await rag.whenIdle();
    const embedMs = performance.now() - t;
    const index = await rag.index('knowledge', LOCAL_EMBEDDING_DIMENSIONS);
    if (index.size !== size) throw new Error(`expected ${size} vectors, have ${index.size}`);

    // Queries: a few words of a stored note, plus words from elsewhere.
    const random = rng(7);
    const noise = corpus(200, 99);
    const queries = Array.from({ length: 200 }, (_, i) => {
      const words = texts[Math.floor(random() * size)].split(' ');
      return [...words.slice(0, 4), ...noise[i].split(' ').slice(0, 2)].join(' ');
    });

    const timeTool = async (): Promise<{ latencies: number[]; ids: string[][]; method: string }> => {
      const latencies: number[] = [];
      const ids: string[][] = [];
      let method = '';
      for (const query of queries) {
        const start = performance.now();
        const result = (await tool.execute(tool.parameters.parse({ query, limit: 10 }), ctx)) as {
          results: { id: string }[];
          method: string;
        };
        latencies.push(performance.now() - start);
        ids.push(result.results.map((r) => r.id));
        method = result.method;
      }
      return { latencies, ids, method };
    };

    const exact = await timeTool();
    t = performance.now();
    await index.buildAnn();
    const buildMs = performance.now() - t;
    const ann = await timeTool();

    const recallOf = (ids: string[][]) => {
      let found = 0;
      ids.forEach((row, i) => {
        const truth = new Set(exact.ids[i]);
        found += row.filter((id) => truth.has(id)).length;
      });
      return found / exact.ids.reduce((n, row) => n + row.length, 0);
    };
    const recall = recallOf(ann.ids);
    // The same queries straight on the index at other search breadths: the recall/latency trade-off.
    const queryVectors = await rag.provider.embed(queries);
    const sweep: string[] = [];
    const defaultEf = index.efSearch;
    for (const ef of [64, 128, 256, 512]) {
      index.efSearch = ef;
      const start = performance.now();
      const ids = queryVectors.map((q) => index.search(q, 10).hits.map((h) => h.id));
      sweep.push(
        `ef ${ef}: recall ${recallOf(ids).toFixed(3)}, ${((performance.now() - start) / queries.length).toFixed(2)} ms/query`,
      );
    }
    index.efSearch = defaultEf;
    const fmt = (ms: number) => ms.toFixed(2);
    out(`## ${size.toLocaleString('en')} vectors (${LOCAL_EMBEDDING_DIMENSIONS} dims, local embeddings)`);
    out(
      `insert rows: ${fmt(insertMs)} ms; embed in background: ${fmt(embedMs)} ms (${Math.round(size / (embedMs / 1000))} rows/s)`,
    );
    out(
      `rag_retrieve exact (${exact.method}): p50 ${fmt(percentile(exact.latencies, 50))} ms, p95 ${fmt(percentile(exact.latencies, 95))} ms`,
    );
    out(`hnsw build (M=16, efConstruction=200): ${fmt(buildMs)} ms`);
    out(
      `rag_retrieve ann (${ann.method}, efSearch=${defaultEf}): p50 ${fmt(percentile(ann.latencies, 50))} ms, p95 ${fmt(percentile(ann.latencies, 95))} ms`,
    );
    out(`recall@10 of rag_retrieve (hnsw) vs exact over ${queries.length} queries: ${recall.toFixed(4)}`);
    out(`index only, by efSearch: ${sweep.join('; ')}`);
    out('');
  } finally {
    await librarian.close?.();
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  out(
    `node ${process.version}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? 'unknown'}), load ${os.loadavg()[0].toFixed(1)}`,
  );
  for (const size of sizes.length ? sizes : [10_000, 100_000]) await bench(size);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
