import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { Principal } from '../../principal';
import { Triple, type GraphStore } from '../../store/graph';
import { KnowledgeKind, type InquiryStore, type KnowledgeStore } from '../../store/knowledge';

/** What the knowledge tools work on. `graph` is absent with `graph.enabled: false`; `onSaved` starts background embedding. */
export interface KnowledgeToolsOptions {
  knowledge: KnowledgeStore;
  inquiries: InquiryStore;
  graph?: GraphStore;
  onSaved: () => void;
}

const Tags = z.array(z.string().trim().min(1).max(64)).max(20).default([]);
const Limit = z.number().int().min(1).max(50).default(5);
/** A row id as the tools returned it; a model may send it back as a number. */
const RowId = z
  .union([z.string().trim().min(1).max(64), z.number().int().nonnegative()])
  .transform(String)
  .describe('the id as returned');

/**
 * `save_knowledge`, `save_learning`, `search_knowledge`, `search_learnings`,
 * `librarian_pending_inquiries`, `librarian_dismiss_inquiry`. A search that
 * finds nothing records the query as a knowledge gap (an inquiry).
 */
export function createKnowledgeTools(options: KnowledgeToolsOptions): AnyTool[] {
  const { knowledge, inquiries, graph, onSaved } = options;
  const gap = async (principal: Principal, query: string, origin: string, sessionId: string) => {
    const inquiry = await inquiries.raise(principal, { question: query, origin, sessionId });
    return {
      results: [],
      inquiry: { id: inquiry.id, question: inquiry.question },
      note: `nothing known yet; recorded as knowledge gap #${inquiry.id}`,
    };
  };
  return [
    defineTool({
      name: 'save_knowledge',
      description:
        'Saves a piece of knowledge (a fact, rule, definition or preference) with its source and tags, so it can be found again by keyword or by meaning. Optional subject-predicate-object triples go to the knowledge graph.',
      parameters: z.object({
        kind: KnowledgeKind,
        content: z.string().trim().min(1).max(10_000),
        source: z.string().trim().min(1).max(500).optional().describe('where this came from: a URL, a person, a file'),
        tags: Tags,
        triples: z.array(Triple).max(50).optional().describe('statements for the knowledge graph'),
      }),
      execute: async (args, ctx) => {
        const entry = await knowledge.saveKnowledge(ctx.principal, { ...args, sessionId: ctx.sessionId });
        let triplesAdded: number | undefined;
        let note: string | undefined;
        if (args.triples?.length) {
          if (graph) triplesAdded = await graph.add(ctx.principal, args.triples, `knowledge:${entry.id}`);
          else note = 'the knowledge graph is disabled (graph.enabled: false); triples were not stored';
        }
        onSaved();
        return { saved: entry, ...(triplesAdded !== undefined ? { triplesAdded } : {}), ...(note ? { note } : {}) };
      },
    }),
    defineTool({
      name: 'save_learning',
      description:
        'Saves a learning: an error pattern, its diagnosis and the fix that worked, to be found when the error comes back.',
      parameters: z.object({
        errorPattern: z.string().trim().min(1).max(2000).describe('the error message or symptom'),
        diagnosis: z.string().trim().min(1).max(5000),
        fix: z.string().trim().min(1).max(5000),
        tags: Tags,
      }),
      execute: async (args, ctx) => {
        const entry = await knowledge.saveLearning(ctx.principal, { ...args, sessionId: ctx.sessionId });
        onSaved();
        return { saved: entry };
      },
    }),
    defineTool({
      name: 'search_knowledge',
      description:
        'Full-text search over saved knowledge, ranked by relevance (bm25, higher score is better). A search that finds nothing is recorded as a knowledge gap.',
      parameters: z.object({
        query: z.string().trim().min(1).max(1000),
        limit: Limit,
        kinds: z.array(KnowledgeKind).optional(),
      }),
      execute: async ({ query, limit, kinds }, ctx) => {
        const results = await knowledge.searchKnowledge(ctx.principal, query, { limit, kinds });
        return results.length ? { results } : gap(ctx.principal, query, 'search_knowledge', ctx.sessionId);
      },
    }),
    defineTool({
      name: 'search_learnings',
      description:
        'Full-text search over saved learnings (error pattern, diagnosis, fix), ranked by relevance with scores.',
      parameters: z.object({ query: z.string().trim().min(1).max(1000), limit: Limit }),
      execute: async ({ query, limit }, ctx) => {
        const results = await knowledge.searchLearnings(ctx.principal, query, { limit });
        return results.length ? { results } : gap(ctx.principal, query, 'search_learnings', ctx.sessionId);
      },
    }),
    defineTool({
      name: 'librarian_pending_inquiries',
      description: 'Lists pending knowledge inquiries: questions searches could not answer, oldest first.',
      parameters: z.object({ limit: z.number().int().min(1).max(100).default(10) }),
      execute: async ({ limit }, ctx) => ({ inquiries: await inquiries.pending(ctx.principal, limit) }),
    }),
    defineTool({
      name: 'librarian_dismiss_inquiry',
      description: 'Dismisses a pending knowledge inquiry (answered, or no longer relevant), with an optional reason.',
      parameters: z.object({ id: RowId, reason: z.string().trim().max(500).optional() }),
      execute: async ({ id, reason }, ctx) => {
        const dismissed = await inquiries.dismiss(ctx.principal, id, reason);
        if (!dismissed) throw new ToolExecutionError(`no pending inquiry #${id}`);
        return { dismissed };
      },
    }),
  ];
}
