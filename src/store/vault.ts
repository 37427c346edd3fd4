import type { Principal } from '../principal';

/** What a listing shows about a secret: never its value. */
export interface SecretInfo {
  /** The principal whose secret it is. */
  owner: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** A key pair of the node (its signing key, the payment wallet); the private half sealed. */
export interface StoredKey {
  name: string;
  algorithm: string;
  publicKey: string;
  /** Sealed by the vault; only the vault can open it. */
  sealedPrivateKey: string;
  createdAt: string;
}

/**
 * The vault's rows: sealed secrets, each principal's own (a caller's
 * `{{secret:NAME}}` is its own NAME, never another's), and the node's key
 * pairs and metadata, which are the owner's alone. Values arrive sealed:
 * the store never sees a plain secret.
 */
export interface VaultStore {
  /** A node-level value (`check`: proof that the master key matches), if set. */
  meta(key: string): Promise<string | undefined>;
  /** Sets a node-level value unless it is set; resolves with the value stored (the first writer's). */
  initMeta(key: string, value: string): Promise<string>;
  /** Stores or replaces the principal's secret `name`. */
  putSecret(principal: Principal, name: string, sealed: string, at: string): Promise<{ created: boolean }>;
  /** The principal's own sealed secret `name`. */
  sealedSecret(principal: Principal, name: string): Promise<string | undefined>;
  /** Secrets the principal can see (the owner: everyone's), by name. */
  listSecrets(principal: Principal): Promise<SecretInfo[]>;
  /** Deletes the principal's own secret; false when there was none. */
  deleteSecret(principal: Principal, name: string): Promise<boolean>;
  /** Every sealed secret with its owner: opening the vault registers each value for masking. */
  allSecrets(): Promise<{ owner: string; name: string; sealed: string }[]>;
  key(name: string): Promise<StoredKey | undefined>;
  /** Stores `key` unless one of its name exists; resolves with the one stored (first writer wins). */
  addKey(key: StoredKey): Promise<StoredKey>;
  listKeys(): Promise<StoredKey[]>;
}

/** A row of `vault_keys`, the same in both databases. */
export interface KeyRow {
  name: string;
  algorithm: string;
  public_key: string;
  private_key: string;
  created_at: string;
}

export const keyFromRow = (r: KeyRow): StoredKey => ({
  name: r.name,
  algorithm: r.algorithm,
  publicKey: r.public_key,
  sealedPrivateKey: r.private_key,
  createdAt: r.created_at,
});
