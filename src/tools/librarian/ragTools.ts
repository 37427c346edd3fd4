import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { RagService } from './rag';

/** `rag_retrieve`: nearest rows by embedding; offered only when an embedding provider is configured. */
export function createRagTools(options: { rag: RagService }): AnyTool[] {
  const { rag } = options;
  return [
    defineTool({
      name: 'rag_retrieve',
      description: `Retrieves saved knowledge by meaning: the rows whose embeddings are closest to the query, with cosine scores. Collections: ${rag.collectionNames.join(', ')} (all by default).`,
      parameters: z.object({
        query: z.string().trim().min(1).max(4000),
        limit: z.number().int().min(1).max(50).default(5),
        collections: z.array(z.string()).max(10).optional(),
      }),
      execute: async ({ query, limit, collections }, ctx) => {
        try {
          const { hits, method } = await rag.retrieve(ctx.principal, query, { limit, collections });
          return { results: hits, method, provider: rag.provider.id };
        } catch (error) {
          if (error instanceof RangeError) throw new ToolExecutionError(error.message);
          throw error;
        }
      },
    }),
  ];
}
