import { LangoConfig } from '../../src/config/schema';
import {
  createEmbeddingProvider,
  createLocalEmbeddings,
  createOpenAIEmbeddings,
  dot,
  embedLocally,
  vectorToBlob,
  blobToVector,
} from '../../src/llm/embeddings';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddingsServer';

const norm = (v: Float32Array) => Math.sqrt(dot(v, v));

describe('local embeddings', () => {
  it('returns deterministic unit vectors of the configured size without any network', async () => {
    const local = createLocalEmbeddings({ dimensions: 256 });
    const [a, b] = await local.embed(['Enable WAL mode for SQLite', 'Enable WAL mode for SQLite']);
    expect(a).toHaveLength(256);
    expect(norm(a)).toBeCloseTo(1, 5);
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(local.id).toBe('local:hash-256-v2');
  });

  it('ranks the text sharing words, inflections or misspellings with a query first', () => {
    const docs = [
      'My cat prefers tuna to salmon and sleeps all afternoon',
      'The deployment pipeline publishes containers to the registry every night',
      'Invoices are paid on the first business day of each month',
      'Backups of the database are encrypted and kept for ninety days',
    ].map((d) => embedLocally(d));
    const best = (query: string) => {
      const q = embedLocally(query);
      const scores = docs.map((d) => dot(d, q));
      return scores.indexOf(Math.max(...scores));
    };
    expect(best('when is the container deployed by the pipelines')).toBe(1);
    expect(best('deploymnt pipelne')).toBe(1);
    expect(best('how long do we keep encrypted backup')).toBe(3);
    expect(best('paying invoice')).toBe(2);
    const cat = embedLocally('my cat prefers tuna');
    expect(dot(docs[1], cat)).toBeLessThan(dot(docs[0], cat) / 3);
  });

  it('round-trips a vector through its SQLite BLOB form', () => {
    const v = embedLocally('round trip');
    const blob = vectorToBlob(v);
    expect(blob.byteLength).toBe(v.length * 4);
    expect(Array.from(blobToVector(blob))).toEqual(Array.from(v));
  });
});

describe('openai-compatible embeddings', () => {
  let server: EmbeddingsServer;
  beforeEach(async () => {
    server = await startEmbeddingsServer({ apiKey: 'sk-test-embeddings' });
  });
  afterEach(() => server.close());

  it('embeds through the openai client in batches, in input order, normalised', async () => {
    const provider = createOpenAIEmbeddings({
      model: 'concepts-1',
      baseUrl: server.baseUrl,
      apiKey: 'sk-test-embeddings',
      batchSize: 2,
    });
    const vectors = await provider.embed(['a car', 'a physician', 'glad', 'sunny weather', 'automobile']);
    expect(server.requests.map((r) => r.input.length)).toEqual([2, 2, 1]);
    expect(server.requests[0]).toMatchObject({ model: 'concepts-1' });
    expect(vectors.map((v) => norm(v))).toEqual(vectors.map(() => expect.closeTo(1, 5)));
    expect(dot(vectors[0], vectors[4])).toBeCloseTo(1, 2); // car ~ automobile
    expect(dot(vectors[0], vectors[1])).toBeLessThan(0.1);
    expect(provider.dimensions()).toBe(9);
  });

  it('surfaces an endpoint that refuses the key as an error', async () => {
    const provider = createOpenAIEmbeddings({ model: 'concepts-1', baseUrl: server.baseUrl, apiKey: 'wrong-key' });
    await expect(provider.embed(['x'])).rejects.toThrow(/401|bad key/);
  });

  it('retries a failing endpoint through the client before giving up', async () => {
    const provider = createOpenAIEmbeddings({
      model: 'concepts-1',
      baseUrl: server.baseUrl,
      apiKey: 'sk-test-embeddings',
    });
    server.failNext(1, 500);
    const [v] = await provider.embed(['cash']);
    expect(v.length).toBe(9);
    expect(server.requests).toHaveLength(2);
  });
});

describe('createEmbeddingProvider', () => {
  it('builds local by default, none for provider none, openai from its keys', () => {
    expect(createEmbeddingProvider(LangoConfig.parse({}).embedding)?.id).toBe('local:hash-512-v2');
    expect(createEmbeddingProvider(LangoConfig.parse({ embedding: { provider: 'none' } }).embedding)).toBeUndefined();
    const openai = createEmbeddingProvider(
      LangoConfig.parse({
        embedding: { provider: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' },
      }).embedding,
    );
    expect(openai?.id).toBe('openai:m');
  });
});
