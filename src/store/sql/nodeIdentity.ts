import { randomUUID } from 'node:crypto';
import type { NodeIdentityStore } from '../index';
import type { Sql, StoreSchema } from './sql';

/** One row: the node's id, shared by every replica (they are one node). */
export const NODE_SCHEMA: StoreSchema = {
  store: 'node',
  sqlite: ['CREATE TABLE node_identity (id TEXT NOT NULL)'],
  postgres: [
    'CREATE TABLE node_identity (singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton), id TEXT NOT NULL)',
  ],
};

/** The {@link NodeIdentityStore}: the first process (or replica) to ask creates the id, the others read it. */
export function createNodeIdentityStore(options: { sql: Sql }): NodeIdentityStore {
  const { sql } = options;
  return {
    nodeId: () =>
      sql.transaction(
        async (tx) => {
          const row = await tx.get<{ id: string }>('SELECT id FROM node_identity LIMIT 1');
          if (row) return row.id;
          const id = `urn:lango:${randomUUID()}`;
          await tx.run('INSERT INTO node_identity (id) VALUES (?)', [id]);
          return id;
        },
        { lock: 'lango:node-identity' },
      ),
  };
}
