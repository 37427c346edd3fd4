import { randomUUID } from 'node:crypto';
import type { NodeIdentityStore } from '../index';
import { migrate, type SqliteDatabase } from './database';

/** The {@link NodeIdentityStore} in SQLite (`node_identity`). */
export function createSqliteNodeIdentityStore(options: { db: SqliteDatabase }): NodeIdentityStore {
  const { db } = options;
  migrate(db, 'node', ['CREATE TABLE node_identity (id TEXT NOT NULL)']);
  return {
    async nodeId() {
      return db.transaction(() => {
        const row = db.prepare('SELECT id FROM node_identity LIMIT 1').get() as { id: string } | undefined;
        if (row) return row.id;
        const id = `urn:lango:${randomUUID()}`;
        db.prepare('INSERT INTO node_identity (id) VALUES (?)').run(id);
        return id;
      })();
    },
  };
}
