import crypto from 'node:crypto';
import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import { NODE_KEY, nodeSigningKey } from './keys';
import type { Vault } from '../../vault/vault';

const HASHES = ['sha256', 'sha512', 'sha3-256', 'sha3-512', 'sha1', 'md5'] as const;

/**
 * The vault's cryptography tools: `crypto_hash`, `crypto_encrypt`,
 * `crypto_decrypt` (AES-256-GCM under a key derived from the master key),
 * `crypto_sign`, `crypto_verify` (the node's Ed25519 key) and `crypto_keys`.
 * @example
 * const tools = createCryptoTools({ vault: await openVault({ store: stores.vault, dataDir, secrets, clock, logger }) });
 */
export function createCryptoTools(options: { vault: Vault }): AnyTool[] {
  const { vault } = options;
  return [
    defineTool({
      name: 'crypto_hash',
      description: `Hashes text (UTF-8) with ${HASHES.join(', ')}; sha256 and hex by default.`,
      parameters: z.object({
        text: z.string(),
        algorithm: z.enum(HASHES).optional(),
        encoding: z.enum(['hex', 'base64']).optional(),
      }),
      execute: async ({ text, algorithm = 'sha256', encoding = 'hex' }) => ({
        algorithm,
        digest: crypto.createHash(algorithm).update(text, 'utf8').digest(encoding),
      }),
    }),
    defineTool({
      name: 'crypto_encrypt',
      description: 'Encrypts text with the node vault key (AES-256-GCM); only this node can decrypt the result.',
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }) => ({ algorithm: 'AES-256-GCM', ciphertext: vault.encrypt(text) }),
    }),
    defineTool({
      name: 'crypto_decrypt',
      description: 'Decrypts a ciphertext made by crypto_encrypt on this node.',
      parameters: z.object({ ciphertext: z.string().min(1) }),
      execute: async ({ ciphertext }) => ({ text: vault.decrypt(ciphertext.trim()) }),
    }),
    defineTool({
      name: 'crypto_sign',
      description: "Signs text (UTF-8) with the node's Ed25519 key; returns a base64 signature and the public key.",
      parameters: z.object({ message: z.string() }),
      execute: async ({ message }) => {
        const key = await nodeSigningKey(vault);
        return {
          algorithm: 'Ed25519',
          keyName: NODE_KEY,
          signature: crypto.sign(null, Buffer.from(message, 'utf8'), key.privateKey).toString('base64'),
          publicKey: key.publicKeyPem,
        };
      },
    }),
    defineTool({
      name: 'crypto_verify',
      description: "Verifies an Ed25519 signature over text, against the node's key or a given public key (PEM).",
      parameters: z.object({
        message: z.string(),
        signature: z.string().min(1).describe('base64'),
        publicKey: z.string().optional().describe("PEM public key; the node's own key when omitted"),
      }),
      execute: async ({ message, signature, publicKey }) => {
        let key: crypto.KeyObject;
        try {
          key = publicKey ? crypto.createPublicKey(publicKey) : (await nodeSigningKey(vault)).publicKey;
        } catch {
          throw new ToolExecutionError('publicKey is not a valid PEM public key');
        }
        if (key.asymmetricKeyType !== 'ed25519') throw new ToolExecutionError('publicKey is not an Ed25519 key');
        const valid = crypto.verify(null, Buffer.from(message, 'utf8'), key, Buffer.from(signature, 'base64'));
        return { algorithm: 'Ed25519', valid };
      },
    }),
    defineTool({
      name: 'crypto_keys',
      description: 'Lists the keys the vault holds (public halves only), creating the node signing key if needed.',
      parameters: z.object({}),
      execute: async () => {
        await nodeSigningKey(vault);
        return { keys: await vault.listKeys() };
      },
    }),
  ];
}
