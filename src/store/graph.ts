import { z } from 'zod';
import type { Principal } from '../principal';

/** One subject–predicate–object statement. */
export const Triple = z.object({
  subject: z.string().trim().min(1).max(500),
  predicate: z.string().trim().min(1).max(200),
  object: z.string().trim().min(1).max(500),
});
export type Triple = z.infer<typeof Triple>;

/** A pattern: any field left out matches everything. */
export type TriplePattern = Partial<Triple>;

/** One edge met while traversing, with its distance from the start node. */
export interface TraversalEdge extends Triple {
  depth: number;
}

/**
 * The knowledge graph: a triple store in which each principal has its own
 * statements (the owner reads everyone's, each triple once). Adding a
 * triple the principal already holds is a no-op.
 */
export interface GraphStore {
  /** Adds triples; returns how many were new. */
  add(principal: Principal, triples: Triple[], source?: string): Promise<number>;
  /** Triples matching the bound fields of `pattern`. */
  query(principal: Principal, pattern: TriplePattern, limit: number): Promise<Triple[]>;
  /** Triples with `node` as their subject (and, for `both`, as their object). */
  neighbours(principal: Principal, node: string, direction: 'out' | 'both'): Promise<Triple[]>;
}

/**
 * Breadth-first walk from `start` up to `depth` hops over the principal's
 * graph, following edges out of a node (and into it with `direction:
 * 'both'`), optionally only along `predicates`. Each edge is reported once,
 * at its first depth. Written once over {@link GraphStore.neighbours}, so
 * every database walks alike.
 */
export async function traverseGraph(
  graph: GraphStore,
  principal: Principal,
  options: { start: string; depth: number; predicates?: string[]; direction: 'out' | 'both'; limit: number },
): Promise<TraversalEdge[]> {
  const allowed = options.predicates?.length ? new Set(options.predicates) : undefined;
  const seenNodes = new Set([options.start]);
  const seenEdges = new Set<string>();
  const edges: TraversalEdge[] = [];
  let frontier = [options.start];
  for (let depth = 1; depth <= options.depth && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const node of frontier) {
      for (const t of await graph.neighbours(principal, node, options.direction)) {
        if (allowed && !allowed.has(t.predicate)) continue;
        const key = JSON.stringify([t.subject, t.predicate, t.object]);
        if (seenEdges.has(key)) continue;
        seenEdges.add(key);
        edges.push({ ...t, depth });
        if (edges.length >= options.limit) return edges;
        const other = t.subject === node ? t.object : t.subject;
        if (!seenNodes.has(other)) {
          seenNodes.add(other);
          next.push(other);
        }
      }
    }
    frontier = next;
  }
  return edges;
}
