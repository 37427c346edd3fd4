import { constants, createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { canonicalizeAgentCard, type AgentCard } from '@a2a-js/sdk';
import type { Dispatcher } from 'undici';
import type { ParsedAgentCard } from '../protocol/cardSchema';
import { errorMessage, RemoteAgentError } from '../errors';
import { fetchJson } from './cardFetch';

/**
 * Signed agent cards (A2A §8.4): a JWS over the JCS-canonical card. Keys are
 * pinned per peer in config (`publicKey`: PEM, JWKS JSON or a JWKS URL);
 * keys named by the card itself (`jku`) are never trusted, since whoever
 * forged the card would name their own key.
 */

/** `a2a.verifyCards`: ignore signatures, check them when present, or insist on one. */
export type VerifyCardsMode = 'off' | 'ifPresent' | 'require';

/** What verification concluded for one card. */
export type CardVerification =
  | { status: 'verified'; kid: string }
  | { status: 'unsigned' }
  | { status: 'unchecked'; reason: string }
  | { status: 'skipped' };

const HASH: Record<string, string | null> = {
  ES256: 'sha256',
  ES384: 'sha384',
  ES512: 'sha512',
  RS256: 'sha256',
  RS384: 'sha384',
  RS512: 'sha512',
  PS256: 'sha256',
  PS384: 'sha384',
  PS512: 'sha512',
  EdDSA: null,
  Ed25519: null,
};

/** RFC 7518 §3.5: the PSS salt is as long as the hash. */
const PSS_SALT: Record<string, number> = { PS256: 32, PS384: 48, PS512: 64 };

/**
 * Applies `mode` to a parsed card. Resolves with what was concluded, or
 * rejects with a {@link RemoteAgentError} when the card must be refused:
 * a signature that does not verify, a required signature missing, or a
 * pinned key with an unsigned card.
 * @example
 * await verifyCard(parsed, raw, { mode: 'require', publicKey: pem });
 */
export async function verifyCard(
  parsed: ParsedAgentCard,
  raw: Record<string, unknown>,
  options: { mode: VerifyCardsMode; publicKey?: string; timeoutMs?: number; dispatcher?: Dispatcher },
): Promise<CardVerification> {
  if (options.mode === 'off') return { status: 'skipped' };
  const signatures = parsed.card.signatures;
  if (signatures.length === 0) {
    if (options.mode === 'require') throw new RemoteAgentError('card is unsigned and a2a.verifyCards is require');
    if (options.publicKey) throw new RemoteAgentError('entry pins a publicKey but the card is unsigned');
    return { status: 'unsigned' };
  }
  if (!options.publicKey) {
    if (options.mode === 'require')
      throw new RemoteAgentError('card is signed but the entry pins no publicKey to check it with');
    return { status: 'unchecked', reason: 'signed card but no publicKey pinned for this peer' };
  }
  const keys = await loadPinnedKeys(options.publicKey, options);
  const payload = Buffer.from(
    parsed.version === '1.0' ? canonicalizeAgentCard(raw as unknown as AgentCard) : canonicalizeLegacy(raw),
  );
  const problems: string[] = [];
  for (const sig of signatures) {
    try {
      const header = JSON.parse(Buffer.from(sig.protected, 'base64url').toString('utf8')) as Record<string, unknown>;
      const alg = String(header.alg ?? '');
      const kid = String(header.kid ?? '');
      if (!(alg in HASH)) throw new Error(`unsupported alg ${alg || '(none)'}`);
      const key = keys.get(kid) ?? (keys.size === 1 ? [...keys.values()][0] : undefined);
      if (!key) throw new Error(`no pinned key with kid ${kid || '(none)'}`);
      const input = Buffer.from(`${sig.protected}.${payload.toString('base64url')}`);
      const signature = Buffer.from(sig.signature, 'base64url');
      const ok = alg.startsWith('ES')
        ? cryptoVerify(HASH[alg], input, { key, dsaEncoding: 'ieee-p1363' }, signature)
        : alg.startsWith('PS')
          ? cryptoVerify(
              HASH[alg],
              input,
              { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: PSS_SALT[alg] },
              signature,
            )
          : cryptoVerify(HASH[alg], input, key, signature);
      if (ok) return { status: 'verified', kid };
      problems.push(`signature ${kid || '(no kid)'} does not match`);
    } catch (error) {
      problems.push(errorMessage(error));
    }
  }
  throw new RemoteAgentError(`card signature rejected: ${problems.join('; ')}`);
}

/** Parses a pinned key (PEM, JWK, JWKS JSON, or a JWKS URL fetched once) into KeyObjects by kid ('' when none). */
export async function loadPinnedKeys(
  publicKey: string,
  options: { timeoutMs?: number; dispatcher?: Dispatcher } = {},
): Promise<Map<string, KeyObject>> {
  const text = publicKey.trim();
  const keys = new Map<string, KeyObject>();
  try {
    if (text.startsWith('-----BEGIN')) {
      keys.set('', createPublicKey(text));
      return keys;
    }
    let json: unknown;
    if (/^https?:\/\//.test(text)) {
      json = (
        await fetchJson(text, {
          timeoutMs: options.timeoutMs ?? 5000,
          maxBytes: 64 * 1024,
          dispatcher: options.dispatcher,
        })
      ).body;
    } else {
      json = JSON.parse(text);
    }
    const list = Array.isArray((json as { keys?: unknown }).keys) ? (json as { keys: unknown[] }).keys : [json];
    for (const jwk of list) {
      const kid = typeof (jwk as { kid?: unknown }).kid === 'string' ? (jwk as { kid: string }).kid : '';
      keys.set(kid, createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }));
    }
  } catch (error) {
    if (error instanceof RemoteAgentError) throw new RemoteAgentError(`publicKey JWKS ${error.message}`);
    throw new RemoteAgentError('publicKey is neither a PEM public key nor a JWK/JWKS');
  }
  if (keys.size === 0) throw new RemoteAgentError('publicKey JWKS holds no keys');
  return keys;
}

/** JCS (RFC 8785) of a v0.3 card without `signatures` and empty values, as the v1.0 canonicalization does. */
export function canonicalizeLegacy(raw: Record<string, unknown>): string {
  const { signatures: _ignored, ...rest } = raw;
  return jcs(cleanEmpty(rest) ?? {});
}

function cleanEmpty(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const list = value.map(cleanEmpty).filter((v) => v !== undefined);
    return list.length ? list : undefined;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const cleaned = cleanEmpty(v);
      if (cleaned !== undefined) out[k] = cleaned;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}

function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(record[k])}`)
    .join(',')}}`;
}
