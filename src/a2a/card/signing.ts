import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { generateAgentCardSignature, type AgentCardSignatureGenerator } from '@a2a-js/sdk';
import { ConfigError } from '../../errors';

/**
 * Agent card signing (JWS over the JCS-canonical card, as the SDK's
 * `generateAgentCardSignature` does) with the key in `a2a.signingKey`: a PEM
 * private key or a private JWK as JSON. The `kid` is derived from the public
 * key, so peers pinning the key can match it without being told.
 */

/** A signer plus the public half, for publishing (JWKS) and for tests. */
export interface CardSigner {
  sign: AgentCardSignatureGenerator;
  kid: string;
  alg: string;
  publicKey: KeyObject;
}

/**
 * Builds a {@link CardSigner} from the configured key text.
 * @example
 * const signer = createCardSigner(config.a2a.signingKey!);
 * const signed = await signer.sign(card);
 */
export function createCardSigner(keyText: string): CardSigner {
  let privateKey: KeyObject;
  try {
    const trimmed = keyText.trim();
    privateKey = trimmed.startsWith('{')
      ? createPrivateKey({ key: JSON.parse(trimmed), format: 'jwk' })
      : createPrivateKey(trimmed);
  } catch {
    // Never echo the key material.
    throw new ConfigError('a2a.signingKey is not a PEM private key or a private JWK', [
      'a2a.signingKey: unreadable key',
    ]);
  }
  const alg = algorithmFor(privateKey);
  const publicKey = createPublicKey(privateKey);
  const kid = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
  return { sign: generateAgentCardSignature(privateKey, { alg, kid, typ: 'JOSE' }), kid, alg, publicKey };
}

function algorithmFor(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return 'ES256';
      if (curve === 'secp384r1') return 'ES384';
      if (curve === 'secp521r1') return 'ES512';
      break;
    }
    case 'ed25519':
      return 'EdDSA';
    case 'rsa':
      return 'RS256';
  }
  throw new ConfigError('a2a.signingKey must be an EC (P-256/384/521), Ed25519 or RSA private key', [
    'a2a.signingKey: unsupported key type',
  ]);
}
