import OpenAI from 'openai';
import { LangoError } from '../../errors';
import { createEndpointFetch } from '../../net/endpoint';
import type { Lookup } from '../../net/policy';
import type { EmbeddingProvider } from './provider';
import { normalize } from './vector';

/** Options of {@link createOpenAIEmbeddings}. */
export interface OpenAIEmbeddingsOptions {
  model: string;
  /** Any OpenAI-compatible base URL (`https://…/v1`); the OpenAI API when unset. */
  baseUrl?: string;
  apiKey?: string;
  /** Asked of models that can shorten their vectors (`text-embedding-3-*`). */
  dimensions?: number;
  timeoutMs?: number;
  /** Texts per request; endpoints cap the batch size. */
  batchSize?: number;
  /** The resolver behind the outbound address policy; injected in tests (no real DNS). */
  lookup?: Lookup;
}

/** Largest embeddings response read: 128 texts of 3,072 floats as JSON is about 8 MB. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * Embeddings from any OpenAI-compatible `/embeddings` endpoint through the
 * `openai` client. Vectors are re-normalised, since not every compatible
 * server returns unit vectors. Requests go through the outbound address
 * policy (the configured endpoint's host opened, connections pinned,
 * redirects refused, responses bounded).
 * @example
 * const provider = createOpenAIEmbeddings({ model: 'text-embedding-3-small', apiKey });
 * const [v] = await provider.embed(['hello']);
 */
export function createOpenAIEmbeddings(options: OpenAIEmbeddingsOptions): EmbeddingProvider {
  const client = new OpenAI({
    // Local compatible servers often need no key; the client insists on one.
    apiKey: options.apiKey ?? 'unused',
    baseURL: options.baseUrl,
    timeout: options.timeoutMs ?? 30_000,
    maxRetries: 2,
    fetch: createEndpointFetch({
      baseUrl: options.baseUrl,
      setting: 'embedding.baseUrl',
      lookup: options.lookup,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    }),
  });
  const batchSize = options.batchSize ?? 128;
  let dimensions = options.dimensions;
  return {
    id: `openai:${options.model}${options.dimensions ? `-${options.dimensions}` : ''}`,
    dimensions: () => dimensions,
    async embed(texts, signal) {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const input = texts.slice(start, start + batchSize);
        const response = await client.embeddings.create(
          {
            model: options.model,
            input,
            encoding_format: 'float',
            ...(options.dimensions ? { dimensions: options.dimensions } : {}),
          },
          { signal },
        );
        const rows = [...response.data].sort((a, b) => a.index - b.index);
        if (rows.length !== input.length) {
          throw new LangoError(`embeddings endpoint returned ${rows.length} vectors for ${input.length} texts`);
        }
        for (const row of rows) {
          const v = normalize(Float32Array.from(row.embedding));
          if (dimensions !== undefined && v.length !== dimensions) {
            throw new LangoError(`embeddings endpoint returned ${v.length} dimensions, expected ${dimensions}`);
          }
          dimensions = v.length;
          out.push(v);
        }
      }
      return out;
    },
  };
}
