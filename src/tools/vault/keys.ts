import crypto from 'node:crypto';
import type { Vault } from '../../vault/vault';

/** The name of the node's own Ed25519 signing key. */
export const NODE_KEY = 'node';

/** The node's Ed25519 key pair (PEM), created on first use: signs what `crypto_sign` is given. */
export async function nodeSigningKey(vault: Vault): Promise<{
  publicKey: crypto.KeyObject;
  privateKey: crypto.KeyObject;
  publicKeyPem: string;
}> {
  const pair = await vault.ensureKey(NODE_KEY, 'Ed25519', () => {
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
