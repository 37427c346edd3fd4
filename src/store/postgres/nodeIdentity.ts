import { randomUUID } from 'node:crypto';
import type { NodeIdentityStore } from '../index';
import { rows, type PgDatabase, type PgSchema } from './database';

/** One row: the node's id, shared by every replica (they are one node). */
export const NODE_SCHEMA: PgSchema = {
  store: 'node',
  steps: [
    'CREATE TABLE node_identity (singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton), id TEXT NOT NULL)',
  ],
};

/** The {@link NodeIdentityStore} on PostgreSQL: the first replica to ask creates the id, the others read it. */
export function createPgNodeIdentityStore(options: { db: PgDatabase }): NodeIdentityStore {
  const { db } = options;
  return {
    async nodeId() {
      await db.query('INSERT INTO node_identity (id) VALUES ($1) ON CONFLICT DO NOTHING', [
        `urn:lango:${randomUUID()}`,
      ]);
      const [row] = await rows<{ id: string }>(db, 'SELECT id FROM node_identity');
      return row.id;
    },
  };
}
