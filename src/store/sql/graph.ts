import { visibleOwner } from '../../principal';
import type { GraphStore, Triple } from '../graph';
import { anyOrEqual, bytewise } from './dialect';
import type { Sql, StoreSchema } from './sql';

/**
 * Each principal's statements. The primary key leads with the owner (a
 * caller's patterns are range scans of its own triples); SPO, POS and OSP
 * indexes serve the owner's reads across everyone's, so any pattern with a
 * bound field is an index range scan.
 */
export const GRAPH_SCHEMA: StoreSchema = {
  store: 'librarian_graph',
  sqlite: [
    `CREATE TABLE graph_triples (
       subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, source TEXT, created_at TEXT NOT NULL,
       PRIMARY KEY (subject, predicate, object)) WITHOUT ROWID;
     CREATE INDEX graph_pos ON graph_triples (predicate, object, subject);
     CREATE INDEX graph_osp ON graph_triples (object, subject, predicate);`,
    // Each principal has its own statements; those stored before principals existed are the owner's.
    `CREATE TABLE graph_triples_by_owner (
       owner TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, source TEXT,
       created_at TEXT NOT NULL, PRIMARY KEY (owner, subject, predicate, object)) WITHOUT ROWID;
     INSERT INTO graph_triples_by_owner SELECT 'owner', subject, predicate, object, source, created_at FROM graph_triples;
     DROP TABLE graph_triples;
     ALTER TABLE graph_triples_by_owner RENAME TO graph_triples;
     CREATE INDEX graph_spo ON graph_triples (subject, predicate, object);
     CREATE INDEX graph_pos ON graph_triples (predicate, object, subject);
     CREATE INDEX graph_osp ON graph_triples (object, subject, predicate);`,
  ],
  postgres: [
    `CREATE TABLE graph_triples (
       owner TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, source TEXT,
       created_at TEXT NOT NULL, PRIMARY KEY (owner, subject, predicate, object));
     CREATE INDEX graph_spo ON graph_triples (subject, predicate, object);
     CREATE INDEX graph_pos ON graph_triples (predicate, object, subject);
     CREATE INDEX graph_osp ON graph_triples (object, subject, predicate);`,
  ],
};

/** The {@link GraphStore}. */
export function createGraphStore(options: { sql: Sql; clock: () => Date }): GraphStore {
  const { sql, clock } = options;
  // Each triple once, whoever else holds it (the owner reads everyone's).
  const distinct = (where: string, params: unknown[], tail = '') =>
    sql.all<Triple>(
      `SELECT subject, predicate, object FROM graph_triples WHERE ${where} GROUP BY subject, predicate, object${tail}`,
      params,
    );
  return {
    add: (principal, triples, source) =>
      sql.transaction(async (tx) => {
        const now = clock().toISOString();
        let added = 0;
        for (const t of triples) {
          added += await tx.run(
            `INSERT INTO graph_triples (owner, subject, predicate, object, source, created_at) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT DO NOTHING`,
            [principal.id, t.subject, t.predicate, t.object, source ?? null, now],
          );
        }
        return added;
      }),
    async query(principal, pattern, limit) {
      const owner = visibleOwner(principal) ?? null;
      const where = [anyOrEqual('owner')];
      const params: unknown[] = [owner, owner];
      for (const field of ['subject', 'predicate', 'object'] as const) {
        const value = pattern[field];
        if (value !== undefined && value !== '') {
          where.push(`${field} = ?`);
          params.push(value);
        }
      }
      const order = ['subject', 'predicate', 'object'].map((c) => bytewise(sql.dialect, c)).join(', ');
      return distinct(where.join(' AND '), [...params, limit], ` ORDER BY ${order} LIMIT ?`);
    },
    async neighbours(principal, node, direction) {
      const owner = visibleOwner(principal) ?? null;
      const out = await distinct(`subject = ? AND ${anyOrEqual('owner')}`, [node, owner, owner]);
      if (direction === 'out') return out;
      const into = await distinct(`object = ? AND ${anyOrEqual('owner')}`, [node, owner, owner]);
      return [...out, ...into];
    },
  };
}
