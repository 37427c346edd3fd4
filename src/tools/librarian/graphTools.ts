import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { traverseGraph, Triple, type GraphStore } from '../../store/graph';

const Term = z.string().trim().min(1).max(500);

/** `graph_add`, `graph_query`, `graph_traverse` over the triple store; offered only with `graph.enabled`. */
export function createGraphTools(options: { graph: GraphStore }): AnyTool[] {
  const { graph } = options;
  return [
    defineTool({
      name: 'graph_add',
      description: 'Adds subject-predicate-object triples to the knowledge graph (existing ones are kept once).',
      parameters: z.object({ triples: z.array(Triple).min(1).max(100), source: z.string().trim().max(500).optional() }),
      execute: async ({ triples, source }, ctx) => ({
        added: await graph.add(ctx.principal, triples, source),
        given: triples.length,
      }),
    }),
    defineTool({
      name: 'graph_query',
      description:
        'Finds triples matching a pattern: give any of subject, predicate, object; the others match anything.',
      parameters: z.object({
        subject: Term.optional(),
        predicate: Term.optional(),
        object: Term.optional(),
        limit: z.number().int().min(1).max(500).default(50),
      }),
      execute: async ({ limit, ...pattern }, ctx) => ({ triples: await graph.query(ctx.principal, pattern, limit) }),
    }),
    defineTool({
      name: 'graph_traverse',
      description:
        'Walks the knowledge graph breadth-first from a start node up to a depth, optionally only along some predicates; returns the edges met with their depth.',
      parameters: z.object({
        start: Term,
        depth: z.number().int().min(1).max(5).default(2),
        predicates: z.array(Term).max(20).optional(),
        direction: z.enum(['out', 'both']).default('out'),
        limit: z.number().int().min(1).max(500).default(100),
      }),
      execute: async (args, ctx) => ({ start: args.start, edges: await traverseGraph(graph, ctx.principal, args) }),
    }),
  ];
}
