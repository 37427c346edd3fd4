import { visibleOwner } from '../../principal';
import type { GraphStore, Triple } from '../graph';
import { rows, type PgDatabase, type PgSchema } from './database';

/** The triple store: the owner leads the key; SPO, POS and OSP indexes serve the owner's reads across everyone's. */
export const GRAPH_SCHEMA: PgSchema = {
  store: 'librarian_graph',
  steps: [
    `CREATE TABLE graph_triples (
       owner TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, source TEXT,
       created_at TEXT NOT NULL, PRIMARY KEY (owner, subject, predicate, object));
     CREATE INDEX graph_spo ON graph_triples (subject, predicate, object);
     CREATE INDEX graph_pos ON graph_triples (predicate, object, subject);
     CREATE INDEX graph_osp ON graph_triples (object, subject, predicate);`,
  ],
};

/** The {@link GraphStore} on PostgreSQL. */
export function createPgGraphStore(options: { db: PgDatabase; clock: () => Date }): GraphStore {
  const { db, clock } = options;
  // Each triple once, whoever else holds it (the owner reads everyone's).
  const distinct = (where: string, params: unknown[], tail = '') =>
    rows<Triple>(
      db,
      `SELECT subject, predicate, object FROM graph_triples WHERE ${where} GROUP BY subject, predicate, object${tail}`,
      params,
    );
  return {
    async add(principal, triples, source) {
      if (triples.length === 0) return 0;
      const result = await db.query(
        `INSERT INTO graph_triples (owner, subject, predicate, object, source, created_at)
         SELECT $1, s, p, o, $2, $3 FROM unnest($4::text[], $5::text[], $6::text[]) AS t(s, p, o)
         ON CONFLICT DO NOTHING`,
        [
          principal.id,
          source ?? null,
          clock().toISOString(),
          triples.map((t) => t.subject),
          triples.map((t) => t.predicate),
          triples.map((t) => t.object),
        ],
      );
      return result.rowCount ?? 0;
    },
    async query(principal, pattern, limit) {
      const where = ['($1::text IS NULL OR owner = $1)'];
      const params: unknown[] = [visibleOwner(principal) ?? null];
      for (const field of ['subject', 'predicate', 'object'] as const) {
        const value = pattern[field];
        if (value !== undefined && value !== '') {
          params.push(value);
          where.push(`${field} = $${params.length}`);
        }
      }
      params.push(limit);
      // COLLATE "C": the byte order SQLite sorts text in, so both databases list alike.
      return distinct(
        where.join(' AND '),
        params,
        ` ORDER BY subject COLLATE "C", predicate COLLATE "C", object COLLATE "C" LIMIT $${params.length}`,
      );
    },
    async neighbours(principal, node, direction) {
      const owner = visibleOwner(principal) ?? null;
      const out = await distinct('subject = $1 AND ($2::text IS NULL OR owner = $2)', [node, owner]);
      if (direction === 'out') return out;
      const into = await distinct('object = $1 AND ($2::text IS NULL OR owner = $2)', [node, owner]);
      return [...out, ...into];
    },
  };
}
