import crypto from 'node:crypto';
import { migrate, type SqliteDatabase } from '../../store/database';
import { ConfigError, ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { SecretRegistry } from '../../log/redact';
import { deriveKey, open, seal } from './cipher';
import { loadMasterKey, type MasterKeySource } from './masterKey';

const MIGRATIONS = [
  `CREATE TABLE vault_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE vault_secrets (
     name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
   CREATE TABLE vault_keys (
     name TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT NOT NULL,
     private_key TEXT NOT NULL, created_at TEXT NOT NULL);`,
];

/** A secret name: letters, digits, `_` and `-`, starting with a letter (it also names an env variable). */
export const SECRET_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** What `secrets_list` shows about a secret: never its value. */
export interface SecretInfo {
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** Options for {@link openVault}. */
export interface VaultOptions {
  db: SqliteDatabase;
  dataDir: string;
  /** `security.masterKey`; a key file in dataDir when unset. */
  masterKey?: string;
  /** Every secret value is registered here so no log line can carry it. */
  secrets: SecretRegistry;
  clock: () => Date;
  logger: Logger;
}

/**
 * The node's vault: secrets and keys in SQLite, each value sealed with
 * AES-256-GCM under a key derived from the master key. Values only leave it
 * through {@link Vault.secretValue}, which tools call while executing.
 */
export interface Vault {
  readonly keySource: MasterKeySource;
  storeSecret(name: string, value: string): { created: boolean };
  /** The plain value, for tool execution only; undefined when unknown. */
  secretValue(name: string): string | undefined;
  listSecrets(): SecretInfo[];
  deleteSecret(name: string): boolean;
  /** Seals data for `crypto_encrypt` (its own derived key). */
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
  /** Key material for `vault_keys` rows (node signing keys). */
  sealPrivate(name: string, data: string): string;
  openPrivate(name: string, sealed: string): string;
  readonly db: SqliteDatabase;
  readonly clock: () => Date;
}

function checkName(name: string): void {
  if (!SECRET_NAME.test(name)) {
    throw new ToolExecutionError(
      `invalid secret name "${name}": letters, digits, _ and -, starting with a letter, at most 64`,
    );
  }
}

/**
 * Opens the vault over the node database, creating its tables and checking
 * the master key against the one the vault was first sealed with (a changed
 * key is a clear error, not garbage).
 * @example
 * const vault = openVault({ db, dataDir, masterKey: config.security.masterKey, secrets, clock, logger });
 * vault.storeSecret('GITHUB_TOKEN', 'ghp_…');
 */
export function openVault(options: VaultOptions): Vault {
  const { db, secrets, clock } = options;
  migrate(db, 'vault', MIGRATIONS);
  const { key: master, source } = loadMasterKey({ masterKey: options.masterKey, dataDir: options.dataDir });
  const secretKey = deriveKey(master, 'secrets');
  const dataKey = deriveKey(master, 'crypto-tool');
  const privateKey = deriveKey(master, 'keys');
  master.fill(0);
  secrets.add(options.masterKey);

  const check = db.prepare('SELECT value FROM vault_meta WHERE key = ?').get('check') as { value: string } | undefined;
  if (!check) {
    db.prepare('INSERT INTO vault_meta (key, value) VALUES (?, ?)').run(
      'check',
      seal(secretKey, crypto.randomBytes(16), 'check'),
    );
  } else {
    try {
      open(secretKey, check.value, 'check');
    } catch {
      throw new ConfigError('the vault master key does not match the one this vault was created with');
    }
  }
  const rows = db.prepare('SELECT name, value FROM vault_secrets').all() as { name: string; value: string }[];
  for (const row of rows) secrets.add(open(secretKey, row.value, row.name).toString('utf8'));
  options.logger.info('vault opened', { keySource: source, entries: rows.length });

  const get = db.prepare('SELECT value FROM vault_secrets WHERE name = ?');
  const secretValue = (name: string): string | undefined => {
    const row = get.get(name) as { value: string } | undefined;
    return row ? open(secretKey, row.value, name).toString('utf8') : undefined;
  };

  return {
    keySource: source,
    db,
    clock,
    storeSecret(name, value) {
      checkName(name);
      if (value.length === 0) throw new ToolExecutionError('a secret value cannot be empty');
      secrets.add(value);
      const previous = secretValue(name);
      const now = clock().toISOString();
      db.prepare(
        `INSERT INTO vault_secrets (name, value, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ).run(name, seal(secretKey, value, name), now, now);
      return { created: previous === undefined };
    },
    secretValue,
    listSecrets: () =>
      (
        db.prepare('SELECT name, created_at, updated_at FROM vault_secrets ORDER BY name').all() as {
          name: string;
          created_at: string;
          updated_at: string;
        }[]
      ).map((r) => ({ name: r.name, createdAt: r.created_at, updatedAt: r.updated_at })),
    deleteSecret(name) {
      const value = secretValue(name);
      if (value === undefined) return false;
      db.prepare('DELETE FROM vault_secrets WHERE name = ?').run(name);
      // Keep masking the old value: it may still sit in earlier output of this process.
      return true;
    },
    encrypt: (plaintext) => seal(dataKey, plaintext, 'crypto_encrypt'),
    decrypt: (sealed) => open(dataKey, sealed, 'crypto_encrypt').toString('utf8'),
    sealPrivate: (name, data) => seal(privateKey, data, `key:${name}`),
    openPrivate: (name, sealed) => open(privateKey, sealed, `key:${name}`).toString('utf8'),
  };
}
