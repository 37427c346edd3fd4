/**
 * What turns text into vectors for retrieval (RAG). Providers: `local`
 * (embedded, no network) and `openai` (any OpenAI-compatible `/embeddings`
 * endpoint). `embedding.provider: none` means no provider, and then no
 * `rag_retrieve` tool.
 */
export interface EmbeddingProvider {
  /** `local:hash-512-v2`, `openai:text-embedding-3-small`: stored with every vector so a model change re-embeds. */
  readonly id: string;
  /** Length of every vector this provider returns; known after the first call for remote providers. */
  dimensions(): number | undefined;
  /** Embeds `texts` in order; every vector is L2-normalised. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
