import { createMemoryLogger } from '../../../src/log/logger';
import { createLocalEmbeddings, embedLocally } from '../../../src/llm/embeddings';
import { createLibrarian, type LibrarianInstance } from '../../../src/tools/librarian/family';
import { VectorIndex } from '../../../src/tools/librarian/vectorIndex';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../support/embeddingsServer';
import { namedCaller } from '../../../src/principal';
import { callTool, configOf, tempNode, toolContext } from '../../support/librarianHarness';
import { waitFor } from '../../support/waitFor';

const clock = () => new Date('2026-11-21T12:00:00Z');

const FACTS = [
  'The deployment pipeline publishes containers to the registry every night at 02:00.',
  'Invoices are paid on the first business day of each month.',
  'Backups of the customer database are encrypted and kept for ninety days.',
  'The office cat is called Turing and prefers tuna.',
];

describe('rag_retrieve', () => {
  let node: ReturnType<typeof tempNode>;
  const opened: LibrarianInstance[] = [];
  beforeEach(() => {
    node = tempNode('rag', { clock });
  });
  afterEach(async () => {
    for (const l of opened.splice(0)) await l.close?.();
    await node.cleanup();
  });

  const logger = createMemoryLogger();
  const open = (options: { input?: Parameters<typeof configOf>[0]; annThreshold?: number } = {}) => {
    const librarian = createLibrarian({
      config: configOf(options.input ?? {}),
      dataDir: node.dataDir,
      stores: node.stores,
      logger,
      annThreshold: options.annThreshold,
      embeddingRetryMs: 100,
    });
    opened.push(librarian);
    return librarian;
  };

  it('embeds saved knowledge in the background with the local provider and retrieves it despite typos', async () => {
    const librarian = open();
    for (const content of FACTS) await callTool(librarian.tools, 'save_knowledge', { kind: 'fact', content });
    await callTool(librarian.tools, 'save_learning', {
      errorPattern: 'ENOSPC: no space left on device',
      diagnosis: 'The build cache filled the disk.',
      fix: 'Prune the docker build cache.',
    });
    await librarian.rag!.whenIdle();

    const rows = node.db
      .prepare('SELECT collection, provider, length(vector) AS bytes FROM rag_vectors ORDER BY collection, ref_id')
      .all();
    expect(rows).toHaveLength(5);
    expect(rows[0]).toEqual({ collection: 'knowledge', provider: 'local:hash-512-v2', bytes: 512 * 4 });

    const found = await callTool(librarian.tools, 'rag_retrieve', {
      query: 'when does the deploymnt pipelne run',
      limit: 3,
    });
    expect(found.method).toBe('exact');
    expect(found.results[0]).toMatchObject({ collection: 'knowledge', kind: 'fact', content: FACTS[0] });
    expect(found.results[0].score).toBeGreaterThan(found.results[1].score);

    const learnings = await callTool(librarian.tools, 'rag_retrieve', {
      query: 'disk full',
      collections: ['learnings'],
    });
    expect(learnings.results.map((r: { collection: string }) => r.collection)).toEqual(['learnings']);
    expect(learnings.results[0]).toMatchObject({ fix: 'Prune the docker build cache.' });
    await expect(callTool(librarian.tools, 'rag_retrieve', { query: 'x', collections: ['nope'] })).rejects.toThrow(
      /unknown collection nope/,
    );
  });

  it("retrieves a caller's rows for that caller only, exactly and through the HNSW graph; the owner finds all", async () => {
    const librarian = open({ annThreshold: 1_000_000 });
    const as = (id: string) => toolContext('s', 'librarian', namedCaller(id));
    await callTool(librarian.tools, 'save_knowledge', { kind: 'fact', content: FACTS[0] }, as('bearer:alice'));
    await callTool(librarian.tools, 'save_knowledge', { kind: 'fact', content: FACTS[1] }, as('bearer:bob'));
    await librarian.rag!.whenIdle();
    const query = { query: 'when does the deployment pipeline publish containers', limit: 5 };
    const contents = async (ctx?: ReturnType<typeof as>) =>
      (await callTool(librarian.tools, 'rag_retrieve', query, ctx)).results.map((r: { content: string }) => r.content);
    const check = async () => {
      expect(await contents(as('bearer:alice'))).toEqual([FACTS[0]]);
      expect(await contents(as('bearer:bob'))).toEqual([FACTS[1]]);
      expect(await contents(as('bearer:carol'))).toEqual([]);
      expect((await contents()).sort()).toEqual([FACTS[0], FACTS[1]].sort());
    };
    await check();
    await (await librarian.rag!.index('knowledge', 512)).buildAnn();
    expect((await callTool(librarian.tools, 'rag_retrieve', query, as('bearer:alice'))).method).toBe('hnsw');
    await check();
  });

  describe('with an OpenAI-compatible embeddings endpoint', () => {
    let server: EmbeddingsServer;
    beforeEach(async () => {
      server = await startEmbeddingsServer({ apiKey: 'sk-embed-test' });
    });
    afterEach(() => server.close());
    const input = () => ({
      embedding: { provider: 'openai' as const, model: 'concepts-1', baseUrl: server.baseUrl, apiKey: 'sk-embed-test' },
    });

    it('answers save_knowledge before the embedding is done, then finds the row by meaning where keywords fail', async () => {
      const librarian = open({ input: input() });
      const held = server.hold();
      await callTool(librarian.tools, 'save_knowledge', {
        kind: 'fact',
        content: 'Our sedan is parked in bay 4 of the north garage.',
      });
      await callTool(librarian.tools, 'save_knowledge', {
        kind: 'fact',
        content: 'The clinician on call this week is Dr. Osei.',
      });
      // The tools answered; the embedding request reaches the endpoint afterwards and is held there.
      await held.arrived;
      expect(server.requests).toHaveLength(1);
      expect(node.db.prepare('SELECT count(*) AS n FROM rag_vectors').get()).toEqual({ n: 0 });
      held.release();
      await librarian.rag!.whenIdle();
      expect(node.db.prepare('SELECT count(*) AS n FROM rag_vectors').get()).toEqual({ n: 2 });

      const keyword = await callTool(librarian.tools, 'search_knowledge', { query: 'automobile' });
      expect(keyword.results).toEqual([]);
      const meaning = await callTool(librarian.tools, 'rag_retrieve', { query: 'where is the automobile?', limit: 2 });
      expect(meaning.provider).toBe('openai:concepts-1');
      expect(meaning.results[0].content).toBe('Our sedan is parked in bay 4 of the north garage.');
      const doctor = await callTool(librarian.tools, 'rag_retrieve', { query: 'which physician', limit: 1 });
      expect(doctor.results[0].content).toBe('The clinician on call this week is Dr. Osei.');
    });

    it('keeps the saved row and embeds it later when the endpoint is failing', async () => {
      const librarian = open({ input: input() });
      server.failNext(3, 503); // the client's first try and both retries
      const saved = await callTool(librarian.tools, 'save_knowledge', {
        kind: 'fact',
        content: 'The kitten is called Pixel.',
      });
      expect(saved.saved.id).toMatch(/^\d+$/);
      await librarian.rag!.whenIdle();
      expect(logger.records.some((r) => r.level === 'warn' && r.message === 'embedding failed; will retry')).toBe(true);
      expect(JSON.stringify(logger.records)).not.toContain('sk-embed-test');
      // The retry runs on a timer after the failed drain: wait until its drain has stored the vector.
      await waitFor(
        async () => {
          await librarian.rag!.whenIdle();
          return (node.db.prepare('SELECT count(*) AS n FROM rag_vectors').get() as { n: number }).n > 0;
        },
        20_000,
        'the retried embedding',
      );
      const found = await callTool(librarian.tools, 'rag_retrieve', { query: 'feline name' });
      expect(found.results[0].content).toBe('The kitten is called Pixel.');
    });

    it('loads stored vectors after a restart instead of embedding the rows again', async () => {
      const first = open({ input: input() });
      await callTool(first.tools, 'save_knowledge', { kind: 'fact', content: 'Petty cash lives in the blue tin.' });
      await first.rag!.whenIdle();
      await first.close?.();
      const requestsBefore = server.requests.length;

      await node.reopen();
      const second = open({ input: input() });
      second.rag!.schedule();
      await second.rag!.whenIdle();
      const found = await callTool(second.tools, 'rag_retrieve', { query: 'where is the money' });
      expect(found.results[0].content).toBe('Petty cash lives in the blue tin.');
      // Only the query was embedded.
      expect(server.requests.slice(requestsBefore).map((r) => r.input)).toEqual([['where is the money']]);
    });
  });

  it('switches to the HNSW index past the threshold and keeps returning the right rows', async () => {
    const librarian = open({ annThreshold: 40 });
    const topics = ['invoices', 'backups', 'deployments', 'kittens', 'forecasts', 'passwords', 'printers', 'holidays'];
    for (let i = 0; i < 60; i++) {
      await callTool(librarian.tools, 'save_knowledge', {
        kind: 'fact',
        content: `Note ${i} about ${topics[i % topics.length]} and item${i}`,
      });
    }
    await callTool(librarian.tools, 'save_knowledge', {
      kind: 'rule',
      content: 'Rotate the production passwords every quarter.',
    });
    await librarian.rag!.whenIdle();
    await (await librarian.rag!.index('knowledge', 512)).buildAnn();
    const found = await callTool(librarian.tools, 'rag_retrieve', {
      query: 'how often do we rotate production passwords',
      limit: 3,
    });
    expect(found.method).toBe('hnsw');
    expect(found.results[0].content).toBe('Rotate the production passwords every quarter.');
  });
});

describe('VectorIndex', () => {
  it('reaches recall@10 of at least 0.95 against exact search with HNSW on 3,000 vectors', async () => {
    const words =
      'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud forest ember frost'.split(
        ' ',
      );
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const text = () =>
      Array.from({ length: 6 }, () => words[Math.floor(random() * words.length)] + Math.floor(random() * 40)).join(' ');
    const local = createLocalEmbeddings();
    const index = new VectorIndex({ dimensions: 512, logger: createMemoryLogger(), annThreshold: 1_000_000 });
    const vectors = await local.embed(Array.from({ length: 3000 }, text));
    vectors.forEach((v, id) => index.upsert(String(id + 1), v));
    const queries = Array.from({ length: 50 }, () => embedLocally(text()));
    const exact = queries.map((q) => index.search(q, 10));
    expect(exact.every((r) => r.method === 'exact')).toBe(true);
    // The build yields to the event loop: timers fire and searches are served (exactly) meanwhile.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const building = index.buildAnn();
    await waitFor(() => ticks >= 2, 20_000, 'timers to fire while the index builds');
    expect(index.annReady).toBe(false);
    expect(index.search(queries[0], 10).method).toBe('exact');
    await building;
    clearInterval(timer);
    expect(ticks).toBeGreaterThanOrEqual(2);
    let hits = 0;
    queries.forEach((q, i) => {
      const approx = index.search(q, 10);
      expect(approx.method).toBe('hnsw');
      const truth = new Set(exact[i].hits.map((h) => h.id));
      hits += approx.hits.filter((h) => truth.has(h.id)).length;
    });
    expect(hits / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);

    // Updates after the build reach the graph too.
    index.upsert('99999', queries[0]);
    expect(index.search(queries[0], 1).hits[0]).toEqual({ id: '99999', score: expect.closeTo(1, 4) });
    index.remove('99999');
    expect(index.search(queries[0], 1).hits[0].id).not.toBe('99999');

    // Closing stops a build in progress: it resolves without a graph.
    const other = new VectorIndex({ dimensions: 512, logger: createMemoryLogger(), annThreshold: 1_000_000 });
    vectors.forEach((v, id) => other.upsert(String(id + 1), v));
    const stopped = other.buildAnn();
    other.close();
    await stopped;
    expect(other.annReady).toBe(false);
    // Building the graph over 3,000 vectors is CPU-bound; 30 s ran out at load 15.
  }, 120_000);
});
