import { createLocalJWKSet, errors, type CryptoKey, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { errorMessage } from '../errors';
import { fetchJson } from '../federation/cardFetch';
import type { Logger } from '../log/logger';
import { createPinnedAgent } from '../net/dispatcher';
import { parseHost } from '../net/host';
import { formatIp } from '../net/address';
import { createOutboundPolicy, type Lookup } from '../net/policy';

/**
 * The signing keys of the token issuer the node trusts (`a2a.auth.oidc`):
 * its JWKS, found by OpenID discovery unless configured, fetched through
 * the outbound address policy (an issuer on loopback or a private network
 * only with `allowPrivateNetwork`), kept in memory, and fetched again when
 * a token names a key the set does not hold (the issuer rotated its keys)
 * — at most once per `minRefreshIntervalMs`, so tokens naming made-up keys
 * cannot make the node hammer the issuer.
 */

/** Options of {@link createIssuerKeys}. */
export interface IssuerKeysOptions {
  issuer: string;
  /** The key set's URL; discovered from `<issuer>/.well-known/openid-configuration` when absent. */
  jwksUrl?: string;
  /** Opens the issuer's (and the configured JWKS URL's) host when it is not public. */
  allowPrivateNetwork: boolean;
  logger: Logger;
  /** Deadline of one discovery or key-set fetch. */
  timeoutMs?: number;
  /** Shortest time between two fetches of the key set. */
  minRefreshIntervalMs?: number;
  /** The resolver behind the address policy; injected in tests. */
  lookup?: Lookup;
  now?: () => number;
}

/** Resolves the verification key for a token header: jose's `getKey` for `jwtVerify`. */
export type IssuerKeys = (header: JWSHeaderParameters) => Promise<CryptoKey | Uint8Array>;

const MAX_DOCUMENT_BYTES = 256 * 1024;

/**
 * @example
 * const keys = createIssuerKeys({ issuer: 'https://idp.example', allowPrivateNetwork: false, logger });
 * await jwtVerify(token, keys, { issuer: 'https://idp.example', audience: 'https://node.example' });
 */
export function createIssuerKeys(options: IssuerKeysOptions): IssuerKeys {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const minInterval = options.minRefreshIntervalMs ?? 30_000;
  const issuer = options.issuer.replace(/\/+$/, '');
  const opened = new Set(
    options.allowPrivateNetwork ? [hostOf(options.issuer), hostOf(options.jwksUrl)].filter(Boolean) : [],
  );
  const policy = createOutboundPolicy({
    setting: 'a2a.auth.oidc.allowPrivateNetwork',
    allowHosts: (host) => opened.has(host),
    lookup: options.lookup,
  });
  let keySet: ReturnType<typeof createLocalJWKSet> | undefined;
  let jwksUrl = options.jwksUrl;
  let lastFetch = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;

  /** GETs one JSON document through a dispatcher of its own (fetches are rare: nothing to keep open between them). */
  const get = async (url: string): Promise<unknown> => {
    const dispatcher = createPinnedAgent({ policy });
    try {
      return (await fetchJson(url, { timeoutMs, maxBytes: MAX_DOCUMENT_BYTES, dispatcher })).body;
    } finally {
      await dispatcher.close();
    }
  };

  const discover = async (): Promise<string> => {
    const document = (await get(`${issuer}/.well-known/openid-configuration`)) as Record<string, unknown>;
    // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
    if (String(document?.issuer ?? '').replace(/\/+$/, '') !== issuer)
      throw new Error(`the discovery document names issuer ${JSON.stringify(document?.issuer)}, not ${issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error('the discovery document has no jwks_uri');
    return document.jwks_uri;
  };

  const refresh = (): Promise<void> =>
    (refreshing ??= (async () => {
      lastFetch = now();
      try {
        jwksUrl ??= await discover();
        const jwks = (await get(jwksUrl)) as JSONWebKeySet;
        if (!jwks || !Array.isArray(jwks.keys)) throw new Error('the key set has no keys array');
        keySet = createLocalJWKSet(jwks);
        logger.info('token issuer keys loaded', { issuer, keys: jwks.keys.length });
      } catch (error) {
        logger.warn('token issuer keys unavailable', { issuer, error: errorMessage(error) });
      } finally {
        refreshing = undefined;
      }
    })());

  /** Fetches the set again unless it was fetched lately (a fetch in flight is joined); false when it may not. */
  const refreshed = async (): Promise<boolean> => {
    if (refreshing) await refreshing;
    else if (now() - lastFetch >= minInterval) await refresh();
    else return false;
    return true;
  };

  return async (header) => {
    if (!keySet) await refreshed();
    if (!keySet) throw new errors.JWKSNoMatchingKey('the issuer keys are not available');
    try {
      return await keySet(header);
    } catch (error) {
      // A key the set does not hold: the issuer may have rotated its keys since they were fetched.
      if (!(error instanceof errors.JWKSNoMatchingKey) || !(await refreshed())) throw error;
      return keySet(header);
    }
  };
}

/** The canonical host of a URL as the policy compares it. */
function hostOf(url: string | undefined): string {
  if (!url) return '';
  const parsed = parseHost(new URL(url).hostname);
  if (parsed.kind === 'ip') return formatIp(parsed.ip);
  return parsed.kind === 'name' ? parsed.name : '';
}
