import { visibleOwner } from '../../principal';
import { keyFromRow, type KeyRow, type SecretInfo, type StoredKey, type VaultStore } from '../vault';
import { anyOrEqual, bytewise } from './dialect';
import type { Sql, StoreSchema } from './sql';

/** The vault's rows: node metadata, each principal's sealed secrets, the node's key pairs. */
export const VAULT_SCHEMA: StoreSchema = {
  store: 'vault',
  sqlite: [
    `CREATE TABLE vault_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE vault_secrets (
       name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
     CREATE TABLE vault_keys (
       name TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT NOT NULL,
       private_key TEXT NOT NULL, created_at TEXT NOT NULL);`,
    // Secrets are each principal's own; those stored before principals existed are the owner's.
    `CREATE TABLE vault_secrets_by_owner (
       owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
       PRIMARY KEY (owner, name));
     INSERT INTO vault_secrets_by_owner SELECT 'owner', name, value, created_at, updated_at FROM vault_secrets;
     DROP TABLE vault_secrets;
     ALTER TABLE vault_secrets_by_owner RENAME TO vault_secrets;`,
  ],
  postgres: [
    `CREATE TABLE vault_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE vault_secrets (
       owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, created_at TEXT NOT NULL,
       updated_at TEXT NOT NULL, PRIMARY KEY (owner, name));
     CREATE TABLE vault_keys (
       name TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT NOT NULL, private_key TEXT NOT NULL,
       created_at TEXT NOT NULL);`,
  ],
};

/** The {@link VaultStore}; "first writer wins" holds across replicas (`ON CONFLICT DO NOTHING`). */
export function createVaultStore(options: { sql: Sql }): VaultStore {
  const { sql } = options;
  const meta = async (key: string) =>
    (await sql.get<{ value: string }>('SELECT value FROM vault_meta WHERE key = ?', [key]))?.value;
  const key = async (name: string) => {
    const row = await sql.get<KeyRow>('SELECT * FROM vault_keys WHERE name = ?', [name]);
    return row && keyFromRow(row);
  };
  const sealedSecret = async (db: Sql, owner: string, name: string) =>
    (await db.get<{ value: string }>('SELECT value FROM vault_secrets WHERE owner = ? AND name = ?', [owner, name]))
      ?.value;
  return {
    meta,
    async initMeta(name, value) {
      await sql.run('INSERT INTO vault_meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING', [name, value]);
      return (await meta(name)) as string;
    },
    putSecret: (principal, name, sealed, at) =>
      sql.transaction(
        async (tx) => {
          const existed = (await sealedSecret(tx, principal.id, name)) !== undefined;
          await tx.run(
            `INSERT INTO vault_secrets (owner, name, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (owner, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
            [principal.id, name, sealed, at, at],
          );
          return { created: !existed };
        },
        { lock: `lango:vault-secret:${principal.id.length}:${principal.id}${name}` },
      ),
    sealedSecret: (principal, name) => sealedSecret(sql, principal.id, name),
    async listSecrets(principal) {
      const owner = visibleOwner(principal) ?? null;
      const found = await sql.all<{ owner: string; name: string; created_at: string; updated_at: string }>(
        `SELECT owner, name, created_at, updated_at FROM vault_secrets WHERE ${anyOrEqual('owner')}
         ORDER BY ${bytewise(sql.dialect, 'name')}, ${bytewise(sql.dialect, 'owner')}`,
        [owner, owner],
      );
      return found.map((r): SecretInfo => ({
        owner: r.owner,
        name: r.name,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }));
    },
    async deleteSecret(principal, name) {
      return (await sql.run('DELETE FROM vault_secrets WHERE owner = ? AND name = ?', [principal.id, name])) > 0;
    },
    async allSecrets() {
      const found = await sql.all<{ owner: string; name: string; value: string }>(
        'SELECT owner, name, value FROM vault_secrets',
      );
      return found.map((r) => ({ owner: r.owner, name: r.name, sealed: r.value }));
    },
    key,
    async addKey(stored) {
      await sql.run(
        `INSERT INTO vault_keys (name, algorithm, public_key, private_key, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
        [stored.name, stored.algorithm, stored.publicKey, stored.sealedPrivateKey, stored.createdAt],
      );
      return (await key(stored.name)) as StoredKey;
    },
    async listKeys() {
      return (await sql.all<KeyRow>(`SELECT * FROM vault_keys ORDER BY ${bytewise(sql.dialect, 'name')}`)).map(
        keyFromRow,
      );
    },
  };
}
