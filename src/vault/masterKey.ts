import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors';

/** File name of the generated master key inside the data directory. */
export const MASTER_KEY_FILE = 'master.key';

/** Where the master key came from, for `lango doctor` and the logs (never the key itself). */
export type MasterKeySource = 'config' | 'file' | 'generated';

/** Options for {@link loadMasterKey}. */
export interface MasterKeyOptions {
  /** `security.masterKey` (from `LANGO_MASTER_KEY`): hex, base64 or a passphrase. */
  masterKey?: string;
  dataDir: string;
}

/**
 * Turns a configured master key into 32 bytes: 64 hex characters or base64 of
 * 32 bytes are taken as they are; anything else is a passphrase stretched
 * with scrypt, so a short human key still yields a full-strength AES key.
 */
export function parseMasterKey(value: string): Buffer {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed, 'base64');
    if (bytes.length === 32) return bytes;
  }
  if (trimmed.length < 8) throw new ConfigError('security.masterKey is too short: use at least 8 characters');
  return crypto.scryptSync(trimmed, 'lango-vault-master-key-v1', 32);
}

/**
 * Loads the vault's master key: the configured one, else the key file
 * `<dataDir>/master.key`, created with mode 0600 on first use. A key file
 * that others can read is refused rather than trusted.
 * @example
 * const { key, source } = loadMasterKey({ masterKey: config.security.masterKey, dataDir });
 */
export function loadMasterKey(options: MasterKeyOptions): { key: Buffer; source: MasterKeySource } {
  if (options.masterKey) return { key: parseMasterKey(options.masterKey), source: 'config' };
  const file = path.join(options.dataDir, MASTER_KEY_FILE);
  fs.mkdirSync(options.dataDir, { recursive: true });
  try {
    const fd = fs.openSync(file, 'wx', 0o600);
    try {
      fs.writeSync(fd, crypto.randomBytes(32).toString('hex') + '\n');
    } finally {
      fs.closeSync(fd);
    }
    fs.chmodSync(file, 0o600); // the umask may have narrowed it further, never widened: make it exact
    return { key: parseKeyFile(file), source: 'generated' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) {
    throw new ConfigError(
      `master key file ${file} is readable by others (mode ${mode.toString(8)}); run chmod 600 on it`,
    );
  }
  return { key: parseKeyFile(file), source: 'file' };
}

function parseKeyFile(file: string): Buffer {
  const text = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new ConfigError(`master key file ${file} does not hold 64 hex characters`);
  return Buffer.from(text, 'hex');
}
