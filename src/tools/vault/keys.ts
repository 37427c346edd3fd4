import crypto from 'node:crypto';
import type { Vault } from './vault';

/** A key the vault holds, as `crypto_keys` shows it: the public half only. */
export interface KeyInfo {
  name: string;
  algorithm: string;
  publicKey: string;
  createdAt: string;
}

/** The name of the node's own Ed25519 signing key. */
export const NODE_KEY = 'node';

/**
 * Returns a named key pair, generating it on first use with `generate` and
 * storing the private half sealed in `vault_keys`. Generation and insert run
 * in one transaction so two callers cannot end up with different keys.
 */
export function ensureKey(
  vault: Vault,
  name: string,
  algorithm: string,
  generate: () => { publicKey: string; privateKey: string },
): { publicKey: string; privateKey: string } {
  const select = vault.db.prepare('SELECT public_key, private_key FROM vault_keys WHERE name = ?');
  return vault.db.transaction(() => {
    const row = select.get(name) as { public_key: string; private_key: string } | undefined;
    if (row) return { publicKey: row.public_key, privateKey: vault.openPrivate(name, row.private_key) };
    const pair = generate();
    vault.db
      .prepare('INSERT INTO vault_keys (name, algorithm, public_key, private_key, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(name, algorithm, pair.publicKey, vault.sealPrivate(name, pair.privateKey), vault.clock().toISOString());
    return pair;
  })();
}

/** The node's Ed25519 key pair (PEM), created on first use: signs what `crypto_sign` is given. */
export function nodeSigningKey(vault: Vault): {
  publicKey: crypto.KeyObject;
  privateKey: crypto.KeyObject;
  publicKeyPem: string;
} {
  const pair = ensureKey(vault, NODE_KEY, 'Ed25519', () => {
    const generated = crypto.generateKeyPairSync('ed25519');
    return {
      publicKey: generated.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privateKey: generated.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
  });
  return {
    publicKey: crypto.createPublicKey(pair.publicKey),
    privateKey: crypto.createPrivateKey(pair.privateKey),
    publicKeyPem: pair.publicKey,
  };
}

/** Every key in the vault, public halves only. */
export function listKeys(vault: Vault): KeyInfo[] {
  return (
    vault.db.prepare('SELECT name, algorithm, public_key, created_at FROM vault_keys ORDER BY name').all() as {
      name: string;
      algorithm: string;
      public_key: string;
      created_at: string;
    }[]
  ).map((r) => ({ name: r.name, algorithm: r.algorithm, publicKey: r.public_key, createdAt: r.created_at }));
}
