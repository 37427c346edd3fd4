import { errors, jwtVerify, type JWTPayload } from 'jose';
import type { A2aOidc } from '../config/schema';
import type { Logger } from '../log/logger';
import type { Principal } from '../principal';
import type { Callers } from './callers';
import { principalOfClaims } from './claims';
import type { Delegation } from './delegation';
import type { IssuerKeys } from './issuerKeys';

/**
 * Inbound JWT access tokens (`a2a.auth.oidc`, issue 26), validated with
 * `jose`: the signature against the issuer's keys, an algorithm of the
 * allow-list (asymmetric only: `none` and HMAC never pass), `iss`, `aud`,
 * `exp` and `nbf` within the configured tolerance. A valid token's
 * principal is kept until the token expires, so a caller presenting the
 * same token again is known without a signature check, synchronously — the
 * request path then costs what a static bearer token does.
 */

/** The principal of a token, undefined for every token that is not valid (why goes to the debug log, never to the caller). */
export interface TokenValidator {
  /** Synchronous for a token validated before; a pending validation is shared, and its promise never rejects. */
  principal(token: string): Principal | undefined | Promise<Principal | undefined>;
}

/** Options of {@link createTokenValidator}. */
export interface TokenValidatorOptions {
  oidc: A2aOidc;
  callers: Callers;
  keys: IssuerKeys;
  logger: Logger;
  /** Reads a token with an `act` claim (`delegation.ts`); without it every delegated token is refused. */
  delegation?: Delegation;
  now?: () => number;
  /** Most tokens whose validation is kept (oldest dropped first). */
  maxEntries?: number;
  /** Longest a validation is kept, however long the token lives (a grant changed in config is seen after it). */
  maxCacheMs?: number;
}

interface Validated {
  principal: Principal | undefined;
  /** Until when (ms since the epoch) the validation stands. */
  until: number;
}

/** Three base64url segments: a JWS in compact form (anything else is not a token of the issuer). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

/**
 * @example
 * const tokens = createTokenValidator({ oidc: config.a2a.auth.oidc, callers, keys, logger });
 * const principal = await tokens.principal(bearerToken);
 */
export function createTokenValidator(options: TokenValidatorOptions): TokenValidator {
  const { oidc, keys, logger } = options;
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 10_000;
  const maxCacheMs = options.maxCacheMs ?? 10 * 60_000;
  const toleranceMs = oidc.clockToleranceSeconds * 1000;
  const valid = new Map<string, Validated>();
  const pending = new Map<string, Promise<Principal | undefined>>();

  const verify = async (token: string): Promise<Principal | undefined> => {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, keys, {
        issuer: oidc.issuer,
        audience: oidc.audience,
        algorithms: oidc.algorithms,
        clockTolerance: oidc.clockToleranceSeconds,
        currentDate: new Date(now()),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      logger.debug('bearer token refused', { reason: refusalReason(error) });
      return undefined;
    }
    // A delegated token (RFC 8693 `act`) runs as its subject only as the delegation rules allow.
    const verdict =
      claims.act === undefined
        ? { principal: principalOfClaims(claims, { oidc, callers: options.callers }) }
        : (options.delegation?.principalOf(claims) ?? { refused: 'a delegated token' });
    const principal = 'principal' in verdict ? verdict.principal : undefined;
    if (!principal)
      logger.debug('bearer token refused', {
        reason: 'refused' in verdict ? verdict.refused : 'its subject names no configured caller',
      });
    else remember(token, principal, (claims.exp as number) * 1000 + toleranceMs);
    return principal;
  };

  const remember = (token: string, principal: Principal, expires: number) => {
    if (valid.size >= maxEntries) valid.delete(valid.keys().next().value as string);
    valid.set(token, { principal, until: Math.min(expires, now() + maxCacheMs) });
  };

  return {
    principal(token) {
      const known = valid.get(token);
      if (known) {
        if (known.until > now()) return known.principal;
        valid.delete(token);
      }
      if (!COMPACT_JWS.test(token)) return undefined;
      let validation = pending.get(token);
      if (!validation) {
        validation = verify(token)
          .catch(() => undefined)
          .finally(() => pending.delete(token));
        pending.set(token, validation);
      }
      return validation;
    },
  };
}

/** Why jose refused a token, as a short code for the debug log (never the token). */
function refusalReason(error: unknown): string {
  if (error instanceof errors.JWTClaimValidationFailed) return `${error.code} (${error.claim} ${error.reason})`;
  if (error instanceof errors.JOSEError) return error.code;
  return 'unreadable token';
}
