import { visibleOwner } from '../../principal';
import { keyFromRow, type KeyRow, type SecretInfo, type StoredKey, type VaultStore } from '../vault';
import { rows, type PgDatabase, type PgSchema } from './database';

/** The vault's rows: node metadata, each principal's sealed secrets, the node's key pairs. */
export const VAULT_SCHEMA: PgSchema = {
  store: 'vault',
  steps: [
    `CREATE TABLE vault_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE vault_secrets (
       owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, created_at TEXT NOT NULL,
       updated_at TEXT NOT NULL, PRIMARY KEY (owner, name));
     CREATE TABLE vault_keys (
       name TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT NOT NULL, private_key TEXT NOT NULL,
       created_at TEXT NOT NULL);`,
  ],
};

/** The {@link VaultStore} on PostgreSQL; "first writer wins" holds across replicas (ON CONFLICT DO NOTHING). */
export function createPgVaultStore(options: { db: PgDatabase }): VaultStore {
  const { db } = options;
  const meta = async (key: string) =>
    (await rows<{ value: string }>(db, 'SELECT value FROM vault_meta WHERE key = $1', [key]))[0]?.value;
  const key = async (name: string) => {
    const [row] = await rows<KeyRow>(db, 'SELECT * FROM vault_keys WHERE name = $1', [name]);
    return row && keyFromRow(row);
  };
  return {
    meta,
    async initMeta(name, value) {
      await db.query('INSERT INTO vault_meta (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [name, value]);
      return (await meta(name)) as string;
    },
    async putSecret(principal, name, sealed, at) {
      // xmax = 0 only for a row this statement inserted (an update leaves the old version's id).
      const [row] = await rows<{ created: boolean }>(
        db,
        `INSERT INTO vault_secrets (owner, name, value, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (owner, name) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
         RETURNING (xmax = 0) AS created`,
        [principal.id, name, sealed, at],
      );
      return { created: row.created };
    },
    async sealedSecret(principal, name) {
      return (
        await rows<{ value: string }>(db, 'SELECT value FROM vault_secrets WHERE owner = $1 AND name = $2', [
          principal.id,
          name,
        ])
      )[0]?.value;
    },
    async listSecrets(principal) {
      return (
        await rows<{ owner: string; name: string; created_at: string; updated_at: string }>(
          db,
          `SELECT owner, name, created_at, updated_at FROM vault_secrets WHERE ($1::text IS NULL OR owner = $1)
           ORDER BY name COLLATE "C", owner COLLATE "C"`,
          [visibleOwner(principal) ?? null],
        )
      ).map((r): SecretInfo => ({ owner: r.owner, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at }));
    },
    async deleteSecret(principal, name) {
      const result = await db.query('DELETE FROM vault_secrets WHERE owner = $1 AND name = $2', [principal.id, name]);
      return (result.rowCount ?? 0) > 0;
    },
    async allSecrets() {
      return (
        await rows<{ owner: string; name: string; value: string }>(db, 'SELECT owner, name, value FROM vault_secrets')
      ).map((r) => ({ owner: r.owner, name: r.name, sealed: r.value }));
    },
    key,
    async addKey(stored) {
      await db.query(
        `INSERT INTO vault_keys (name, algorithm, public_key, private_key, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [stored.name, stored.algorithm, stored.publicKey, stored.sealedPrivateKey, stored.createdAt],
      );
      return (await key(stored.name)) as StoredKey;
    },
    async listKeys() {
      return (await rows<KeyRow>(db, 'SELECT * FROM vault_keys ORDER BY name COLLATE "C"')).map(keyFromRow);
    },
  };
}
