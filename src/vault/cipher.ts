import crypto from 'node:crypto';
import { ToolExecutionError } from '../errors';

/** Prefix of every sealed value: the format version, so it can change later. */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Derives a purpose-bound 32-byte key from the master key (HKDF-SHA256), so
 * the secrets table, the node key and `crypto_encrypt` never share a key.
 */
export function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), `lango:${purpose}`, 32));
}

/**
 * AES-256-GCM encryption: `v1.<base64 iv|tag|ciphertext>`. `context` is bound
 * as additional data (e.g. the secret's name), so a sealed value copied to
 * another row does not open.
 */
export function seal(key: Buffer, plaintext: string | Buffer, context = ''): string {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

/** Opens a value made by {@link seal}; throws when it was tampered with or sealed under another key or context. */
export function open(key: Buffer, sealed: string, context = ''): Buffer {
  const [version, payload] = sealed.split('.', 2);
  if (version !== VERSION || !payload) throw new ToolExecutionError('not a lango ciphertext (expected "v1.<base64>")');
  const raw = Buffer.from(payload, 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new ToolExecutionError('ciphertext is too short');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    throw new ToolExecutionError('ciphertext could not be decrypted: wrong key, wrong context or tampered data');
  }
}
