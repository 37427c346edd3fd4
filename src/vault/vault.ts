import crypto from 'node:crypto';
import { ConfigError, ToolExecutionError } from '../errors';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import { OWNER_ID, type Principal } from '../principal';
import type { SecretInfo, StoredKey, VaultStore } from '../store/vault';
import { deriveKey, open, seal } from './cipher';
import { loadMasterKey, type MasterKeySource } from './masterKey';

/** A secret name: letters, digits, `_` and `-`, starting with a letter (it also names an env variable). */
export const SECRET_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Options for {@link openVault}. */
export interface VaultOptions {
  store: VaultStore;
  dataDir: string;
  /** `security.masterKey`; a key file in dataDir when unset. */
  masterKey?: string;
  /** Every secret value is registered here so no log line can carry it. */
  secrets: SecretRegistry;
  clock: () => Date;
  logger: Logger;
}

/**
 * The node's vault: secrets (each principal's own) and the node's keys in
 * its store, each value sealed with AES-256-GCM under a key derived from the
 * master key. Values only leave it through {@link Vault.secretValue}, which
 * tools call while executing.
 */
export interface Vault {
  readonly keySource: MasterKeySource;
  storeSecret(principal: Principal, name: string, value: string): Promise<{ created: boolean }>;
  /** The principal's own plain value, for tool execution only; undefined when unknown. */
  secretValue(principal: Principal, name: string): Promise<string | undefined>;
  /** Secrets the principal can see (the owner: everyone's). */
  listSecrets(principal: Principal): Promise<SecretInfo[]>;
  deleteSecret(principal: Principal, name: string): Promise<boolean>;
  /** Seals data for `crypto_encrypt` (its own derived key). */
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
  /**
   * The node's key pair `name`, generated with `generate` on first use and
   * kept with its private half sealed; two callers racing get the same pair.
   */
  ensureKey(
    name: string,
    algorithm: string,
    generate: () => { publicKey: string; privateKey: string },
  ): Promise<{ publicKey: string; privateKey: string }>;
  /** The node's keys, public halves only. */
  listKeys(): Promise<Omit<StoredKey, 'sealedPrivateKey'>[]>;
}

/**
 * The vault as the composition root opened it, once: the vault, or why the
 * node has none (`security.enabled: false`, a master key that does not match).
 * Families that need it fail with that reason; the node starts without them.
 */
export type VaultAccess =
  { readonly ok: true; readonly vault: Vault } | { readonly ok: false; readonly reason: string };

/** The vault of `access`, or a ConfigError saying why there is none. */
export function requireVault(access: VaultAccess): Vault {
  if (!access.ok) throw new ConfigError(access.reason);
  return access.vault;
}

function checkName(name: string): void {
  if (!SECRET_NAME.test(name)) {
    throw new ToolExecutionError(
      `invalid secret name "${name}": letters, digits, _ and -, starting with a letter, at most 64`,
    );
  }
}

/**
 * What a secret's seal is bound to: the owner's secrets by name (as they
 * were sealed before principals existed), a caller's by owner and name, so a
 * sealed value copied to another principal's row does not open.
 */
const secretContext = (owner: string, name: string) => (owner === OWNER_ID ? name : `${owner}/${name}`);

/**
 * Opens the vault over its store, checking the master key against the one
 * the vault was first sealed with (a changed key is a clear error, not
 * garbage), and registering every stored value for masking.
 * @example
 * const vault = await openVault({ store: stores.vault, dataDir, masterKey: config.security.masterKey, secrets, clock, logger });
 * await vault.storeSecret(OWNER, 'GITHUB_TOKEN', 'ghp_…');
 */
export async function openVault(options: VaultOptions): Promise<Vault> {
  const { store, secrets, clock } = options;
  const { key: master, source } = loadMasterKey({ masterKey: options.masterKey, dataDir: options.dataDir });
  const secretKey = deriveKey(master, 'secrets');
  const dataKey = deriveKey(master, 'crypto-tool');
  const privateKey = deriveKey(master, 'keys');
  master.fill(0);
  secrets.add(options.masterKey);

  const check = await store.initMeta('check', seal(secretKey, crypto.randomBytes(16), 'check'));
  try {
    open(secretKey, check, 'check');
  } catch {
    throw new ConfigError('the vault master key does not match the one this vault was created with');
  }
  const all = await store.allSecrets();
  for (const row of all) secrets.add(open(secretKey, row.sealed, secretContext(row.owner, row.name)).toString('utf8'));
  options.logger.info('vault opened', { keySource: source, entries: all.length });

  const secretValue = async (principal: Principal, name: string): Promise<string | undefined> => {
    const sealed = await store.sealedSecret(principal, name);
    if (sealed === undefined) return undefined;
    const value = open(secretKey, sealed, secretContext(principal.id, name)).toString('utf8');
    // Stored through another replica since this one opened the vault: known from its first use here.
    secrets.add(value);
    return value;
  };

  return {
    keySource: source,
    async storeSecret(principal, name, value) {
      checkName(name);
      if (value.length === 0) throw new ToolExecutionError('a secret value cannot be empty');
      secrets.add(value);
      const sealed = seal(secretKey, value, secretContext(principal.id, name));
      return store.putSecret(principal, name, sealed, clock().toISOString());
    },
    secretValue,
    listSecrets: (principal) => store.listSecrets(principal),
    // The old value stays masked: it may still sit in earlier output of this process.
    deleteSecret: (principal, name) => store.deleteSecret(principal, name),
    encrypt: (plaintext) => seal(dataKey, plaintext, 'crypto_encrypt'),
    decrypt: (sealed) => open(dataKey, sealed, 'crypto_encrypt').toString('utf8'),
    async ensureKey(name, algorithm, generate) {
      const existing = await store.key(name);
      const kept =
        existing ??
        (await (async () => {
          const pair = generate();
          return store.addKey({
            name,
            algorithm,
            publicKey: pair.publicKey,
            sealedPrivateKey: seal(privateKey, pair.privateKey, `key:${name}`),
            createdAt: clock().toISOString(),
          });
        })());
      return {
        publicKey: kept.publicKey,
        privateKey: open(privateKey, kept.sealedPrivateKey, `key:${name}`).toString('utf8'),
      };
    },
    listKeys: async () => (await store.listKeys()).map(({ sealedPrivateKey: _sealed, ...key }) => key),
  };
}
