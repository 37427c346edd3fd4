import { z } from 'zod';
import type { SqliteDatabase } from '../../store/database';
import { migrate } from '../../store/database';

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

const STEPS = [
  `CREATE TABLE graph_triples (
     subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, source TEXT, created_at TEXT NOT NULL,
     PRIMARY KEY (subject, predicate, object)) WITHOUT ROWID;
   CREATE INDEX graph_pos ON graph_triples (predicate, object, subject);
   CREATE INDEX graph_osp ON graph_triples (object, subject, predicate);`,
];

/**
 * A triple store in SQLite. The primary key is the SPO index; POS and OSP
 * indexes cover the other access paths, so any pattern with a bound field is
 * an index range scan. Adding an existing triple is a no-op.
 */
export class GraphStore {
  private readonly db: SqliteDatabase;
  private readonly clock: () => Date;

  constructor(options: { db: SqliteDatabase; clock: () => Date }) {
    this.db = options.db;
    this.clock = options.clock;
    migrate(this.db, 'librarian_graph', STEPS);
  }

  /** Adds triples; returns how many were new. */
  add(triples: Triple[], source?: string): number {
    const insert = this.db.prepare(
      'INSERT OR IGNORE INTO graph_triples (subject, predicate, object, source, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    const now = this.clock().toISOString();
    return this.db.transaction(() =>
      triples.reduce(
        (added, t) => added + insert.run(t.subject, t.predicate, t.object, source ?? null, now).changes,
        0,
      ),
    )();
  }

  /** Triples matching the bound fields of `pattern`. */
  query(pattern: TriplePattern, limit: number): Triple[] {
    const where: string[] = [];
    const values: string[] = [];
    for (const field of ['subject', 'predicate', 'object'] as const) {
      const value = pattern[field];
      if (value !== undefined && value !== '') {
        where.push(`${field} = ?`);
        values.push(value);
      }
    }
    const sql = `SELECT subject, predicate, object FROM graph_triples ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY subject, predicate, object LIMIT ?`;
    return this.db.prepare(sql).all(...values, limit) as Triple[];
  }

  /**
   * Breadth-first walk from `start` up to `depth` hops, following edges out
   * of a node (and into it with `direction: 'both'`), optionally only along
   * `predicates`. Each edge is reported once, at its first depth.
   */
  traverse(options: {
    start: string;
    depth: number;
    predicates?: string[];
    direction: 'out' | 'both';
    limit: number;
  }): TraversalEdge[] {
    const allowed = options.predicates?.length ? new Set(options.predicates) : undefined;
    const out = this.db.prepare('SELECT subject, predicate, object FROM graph_triples WHERE subject = ?');
    const into = this.db.prepare('SELECT subject, predicate, object FROM graph_triples WHERE object = ?');
    const seenNodes = new Set([options.start]);
    const seenEdges = new Set<string>();
    const edges: TraversalEdge[] = [];
    let frontier = [options.start];
    for (let depth = 1; depth <= options.depth && frontier.length > 0; depth++) {
      const next: string[] = [];
      for (const node of frontier) {
        const found = out.all(node) as Triple[];
        if (options.direction === 'both') found.push(...(into.all(node) as Triple[]));
        for (const t of found) {
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
}
