import { visibleOwner } from '../../principal';
import type { GraphStore, Triple } from '../graph';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
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
];

/**
 * The {@link GraphStore} in SQLite. The primary key leads with the owner
 * (a caller's patterns are range scans of its own triples); SPO, POS and OSP
 * indexes serve the owner's reads across everyone's, so any pattern with a
 * bound field is an index range scan.
 */
export function createSqliteGraphStore(options: { db: SqliteDatabase; clock: () => Date }): GraphStore {
  const { db, clock } = options;
  migrate(db, 'librarian_graph', STEPS);
  return {
    async add(principal, triples, source) {
      const insert = db.prepare(
        'INSERT OR IGNORE INTO graph_triples (owner, subject, predicate, object, source, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      );
      const now = clock().toISOString();
      return db.transaction(() =>
        triples.reduce(
          (added, t) => added + insert.run(principal.id, t.subject, t.predicate, t.object, source ?? null, now).changes,
          0,
        ),
      )();
    },
    async query(principal, pattern, limit) {
      const where = ['(? IS NULL OR owner = ?)'];
      const owner = visibleOwner(principal) ?? null;
      const values: (string | null)[] = [owner, owner];
      for (const field of ['subject', 'predicate', 'object'] as const) {
        const value = pattern[field];
        if (value !== undefined && value !== '') {
          where.push(`${field} = ?`);
          values.push(value);
        }
      }
      const sql = `SELECT DISTINCT subject, predicate, object FROM graph_triples WHERE ${where.join(' AND ')}
        ORDER BY subject, predicate, object LIMIT ?`;
      return db.prepare(sql).all(...values, limit) as Triple[];
    },
    async neighbours(principal, node, direction) {
      const owner = visibleOwner(principal) ?? null;
      const out = db
        .prepare(
          'SELECT DISTINCT subject, predicate, object FROM graph_triples WHERE subject = ? AND (? IS NULL OR owner = ?)',
        )
        .all(node, owner, owner) as Triple[];
      if (direction === 'out') return out;
      const into = db
        .prepare(
          'SELECT DISTINCT subject, predicate, object FROM graph_triples WHERE object = ? AND (? IS NULL OR owner = ?)',
        )
        .all(node, owner, owner) as Triple[];
      return [...out, ...into];
    },
  };
}
