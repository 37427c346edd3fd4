import { visibleOwner } from '../../principal';
import { keyFromRow, type KeyRow, type SecretInfo, type VaultStore } from '../vault';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
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
];

/** The {@link VaultStore} in SQLite (`vault_meta`, `vault_secrets`, `vault_keys`). */
export function createSqliteVaultStore(options: { db: SqliteDatabase }): VaultStore {
  const { db } = options;
  migrate(db, 'vault', STEPS);
  const selectSecret = db.prepare('SELECT value FROM vault_secrets WHERE owner = ? AND name = ?');
  return {
    async meta(key) {
      return (db.prepare('SELECT value FROM vault_meta WHERE key = ?').get(key) as { value: string } | undefined)
        ?.value;
    },
    async initMeta(key, value) {
      db.prepare('INSERT OR IGNORE INTO vault_meta (key, value) VALUES (?, ?)').run(key, value);
      return (db.prepare('SELECT value FROM vault_meta WHERE key = ?').get(key) as { value: string }).value;
    },
    async putSecret(principal, name, sealed, at) {
      return db.transaction(() => {
        const existed = selectSecret.get(principal.id, name) !== undefined;
        db.prepare(
          `INSERT INTO vault_secrets (owner, name, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(owner, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        ).run(principal.id, name, sealed, at, at);
        return { created: !existed };
      })();
    },
    async sealedSecret(principal, name) {
      return (selectSecret.get(principal.id, name) as { value: string } | undefined)?.value;
    },
    async listSecrets(principal) {
      const owner = visibleOwner(principal) ?? null;
      return (
        db
          .prepare(
            'SELECT owner, name, created_at, updated_at FROM vault_secrets WHERE (? IS NULL OR owner = ?) ORDER BY name, owner',
          )
          .all(owner, owner) as { owner: string; name: string; created_at: string; updated_at: string }[]
      ).map((r): SecretInfo => ({ owner: r.owner, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at }));
    },
    async deleteSecret(principal, name) {
      return db.prepare('DELETE FROM vault_secrets WHERE owner = ? AND name = ?').run(principal.id, name).changes > 0;
    },
    async allSecrets() {
      return (
        db.prepare('SELECT owner, name, value FROM vault_secrets').all() as {
          owner: string;
          name: string;
          value: string;
        }[]
      ).map((r) => ({ owner: r.owner, name: r.name, sealed: r.value }));
    },
    async key(name) {
      const row = db.prepare('SELECT * FROM vault_keys WHERE name = ?').get(name) as KeyRow | undefined;
      return row && keyFromRow(row);
    },
    async addKey(key) {
      db.prepare(
        'INSERT OR IGNORE INTO vault_keys (name, algorithm, public_key, private_key, created_at) VALUES (?, ?, ?, ?, ?)',
      ).run(key.name, key.algorithm, key.publicKey, key.sealedPrivateKey, key.createdAt);
      return keyFromRow(db.prepare('SELECT * FROM vault_keys WHERE name = ?').get(key.name) as KeyRow);
    },
    async listKeys() {
      return (db.prepare('SELECT * FROM vault_keys ORDER BY name').all() as KeyRow[]).map(keyFromRow);
    },
  };
}
