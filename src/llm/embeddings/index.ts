import type { LangoConfig } from '../../config/schema';
import { createLocalEmbeddings } from './local';
import { createOpenAIEmbeddings } from './openai';
import type { EmbeddingProvider } from './provider';

export type { EmbeddingProvider } from './provider';
export { createLocalEmbeddings, embedLocally, LOCAL_EMBEDDING_DIMENSIONS } from './local';
export { createOpenAIEmbeddings, type OpenAIEmbeddingsOptions } from './openai';
export { normalize, dot, vectorToBlob, blobToVector } from './vector';

/**
 * The provider `embedding` config asks for, or `undefined` for
 * `provider: none` (then retrieval tools are not offered).
 * @example
 * const provider = createEmbeddingProvider(config.embedding); // local by default
 */
export function createEmbeddingProvider(
  embedding: LangoConfig['embedding'],
  options: { timeoutMs?: number } = {},
): EmbeddingProvider | undefined {
  switch (embedding.provider) {
    case 'none':
      return undefined;
    case 'local':
      return createLocalEmbeddings({ dimensions: embedding.dimensions });
    case 'openai':
      return createOpenAIEmbeddings({
        model: embedding.model,
        baseUrl: embedding.baseUrl,
        apiKey: embedding.apiKey,
        dimensions: embedding.dimensions,
        timeoutMs: options.timeoutMs,
      });
  }
}
