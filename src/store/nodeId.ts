import { randomUUID } from 'node:crypto';
import { migrate, type SqliteDatabase } from './database';

/**
 * This node's stable identity on federation hop paths: created once per data
 * directory and kept across restarts. A URL would not do: nodes started on
 * port 0 (tests, demos) would all be `http://127.0.0.1:0` and see loops that
 * are not there.
 */
export function loadNodeId(db: SqliteDatabase): string {
  migrate(db, 'node', ['CREATE TABLE node_identity (id TEXT NOT NULL)']);
  const row = db.prepare('SELECT id FROM node_identity LIMIT 1').get() as { id: string } | undefined;
  if (row) return row.id;
  const id = `urn:lango:${randomUUID()}`;
  db.prepare('INSERT INTO node_identity (id) VALUES (?)').run(id);
  return id;
}
