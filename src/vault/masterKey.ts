import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors';
import { assertPrivate, makePrivateDir } from '../privateFiles';

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
 * that others can read, or that another user could have put there (the file
 * or its folder is another user's, or writable by others), is refused
 * rather than trusted (`UnsafePathError`: the node does not start).
 * @example
 * const { key, source } = loadMasterKey({ masterKey: config.security.masterKey, dataDir });
 */
export function loadMasterKey(options: MasterKeyOptions): { key: Buffer; source: MasterKeySource } {
  if (options.masterKey) return { key: parseMasterKey(options.masterKey), source: 'config' };
  const file = path.join(options.dataDir, MASTER_KEY_FILE);
  makePrivateDir(options.dataDir);
  assertPrivate(options.dataDir, 'folder', 'the folder of the vault master key');
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
  assertPrivate(file, 'file', 'the vault master key');
  return { key: parseKeyFile(file), source: 'file' };
}

/**
 * Checks, before the node writes anything, that the key file the vault will
 * use (none when `masterKey` is configured) and its folder, where they exist,
 * are this user's alone.
 * @throws UnsafePathError naming the path and the fix.
 */
export function checkMasterKeyFile(options: MasterKeyOptions): void {
  if (options.masterKey) return;
  const file = path.join(options.dataDir, MASTER_KEY_FILE);
  if (fs.existsSync(options.dataDir)) assertPrivate(options.dataDir, 'folder', 'the folder of the vault master key');
  if (fs.lstatSync(file, { throwIfNoEntry: false })) assertPrivate(file, 'file', 'the vault master key');
}

function parseKeyFile(file: string): Buffer {
  const text = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new ConfigError(`master key file ${file} does not hold 64 hex characters`);
  return Buffer.from(text, 'hex');
}
