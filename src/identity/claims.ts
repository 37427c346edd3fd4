import { createHash } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import type { JWTPayload } from 'jose';
import type { A2aOidc } from '../config/schema';
import { derivedId, isOwner, namedCaller, NO_TOOLS, type Grant, type Principal, type Reach } from '../principal';
import { normalizeFingerprint, type Callers } from './callers';

/**
 * Who a verified token or client certificate is (issue 26). A token's
 * client id or subject names a configured caller (`oidcSubjects`), and its
 * scopes grant what `a2a.auth.oidc.scopes` says: a named caller reaches at
 * most its own grant, narrowed to its token's scopes; a subject nobody
 * configured runs as `oidc:<subject>` with its scopes' grant (or is refused,
 * `unknownSubjects: refuse`). A client certificate the configured CA issued
 * is the caller whose subject or fingerprint it matches, else a caller of
 * its own (`cert:<fingerprint>`) with the default grant, as a plain token is.
 */

/**
 * The principal of a verified token's claims; undefined when its subject
 * names no caller and unknown subjects are refused (or it names none).
 * @example
 * principalOfClaims({ sub: 'ci', scope: 'lango:read' }, { oidc, callers }); // the caller "ci", narrowed to lango:read
 */
export function principalOfClaims(
  claims: JWTPayload,
  options: { oidc: A2aOidc; callers: Callers },
): Principal | undefined {
  const { oidc, callers } = options;
  const names = [claims.client_id, claims.azp, claims.sub].filter(
    (n): n is string => typeof n === 'string' && n !== '',
  );
  const configured = names.map((name) => callers.subjects.get(name)).find(Boolean);
  const scoped = scopesGrant(tokenScopes(claims), oidc, callers.defaultGrant);
  if (configured) {
    if (isOwner(configured) || !scoped) return configured;
    return namedCaller(configured.id, intersect(configured.grant ?? NO_TOOLS, scoped));
  }
  if (oidc.unknownSubjects === 'refuse' || names.length === 0) return undefined;
  return namedCaller(subjectId(claims.sub ?? names[0]), scoped ?? callers.defaultGrant);
}

/**
 * The principal of a client certificate the configured CA verified: the
 * caller a configured subject or fingerprint names, else a caller of its
 * own with the default grant.
 */
export function principalOfCertificate(certificate: PeerCertificate, callers: Callers): Principal {
  const fingerprint = normalizeFingerprint(certificate.fingerprint256);
  const match = callers.certificates.find((c) =>
    c.fingerprint
      ? c.fingerprint === fingerprint
      : Object.entries(c.subject ?? {}).every(([key, value]) => attribute(certificate.subject, key).includes(value)),
  );
  return match?.principal ?? namedCaller(derivedId('cert', fingerprint.slice(0, 16)), callers.defaultGrant);
}

/** The scopes a token carries: `scope` (RFC 9068, space-separated) or `scp` (a list, as some issuers write it). */
function tokenScopes(claims: JWTPayload): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter(Boolean);
  if (Array.isArray(claims.scp)) return claims.scp.filter((s): s is string => typeof s === 'string');
  if (typeof claims.scp === 'string') return claims.scp.split(' ').filter(Boolean);
  return [];
}

/**
 * What a token's scopes grant together: undefined when no scope is
 * configured (scopes then grant nothing beyond the caller's own reach);
 * conversation only when none of its scopes is.
 */
function scopesGrant(scopes: string[], oidc: A2aOidc, defaults: Grant): Grant | undefined {
  if (Object.keys(oidc.scopes).length === 0) return undefined;
  const grants = scopes.flatMap((scope) => {
    const granted = Object.hasOwn(oidc.scopes, scope) ? oidc.scopes[scope].grant : undefined;
    return granted ? [{ ...defaults, ...definedFields(granted) }] : [];
  });
  if (grants.length === 0) return NO_TOOLS;
  return grants.reduce(union);
}

function definedFields(grant: Partial<Grant>): Partial<Grant> {
  return Object.fromEntries(Object.entries(grant).filter(([, value]) => value !== undefined));
}

const KINDS = ['specialists', 'remoteAgents', 'toolFamilies'] as const;

function union(a: Grant, b: Grant): Grant {
  const reach = (x: Reach, y: Reach): Reach => (x === 'all' || y === 'all' ? 'all' : [...new Set([...x, ...y])]);
  return Object.freeze(Object.fromEntries(KINDS.map((kind) => [kind, reach(a[kind], b[kind])])) as unknown as Grant);
}

/** What two grants allow together: each kind's names in both (`all` leaves the other as it is). */
export function intersect(a: Grant, b: Grant): Grant {
  const reach = (x: Reach, y: Reach): Reach =>
    x === 'all' ? y : y === 'all' ? x : x.filter((name) => y.includes(name));
  return Object.freeze(Object.fromEntries(KINDS.map((kind) => [kind, reach(a[kind], b[kind])])) as unknown as Grant);
}

/**
 * A subject as a principal id (stored with every row): `oidc:<subject>` when plain and short, else
 * `oidc-digest:<sha-256>` — another namespace, so no subject can name the digest of another.
 */
export function subjectId(subject: string): string {
  if (/^[A-Za-z0-9._@:-]{1,128}$/.test(subject)) return derivedId('oidc', subject);
  return derivedId('oidc-digest', createHash('sha256').update(subject).digest('hex').slice(0, 32));
}

/** A subject attribute's values (a certificate may repeat one, `OU=a, OU=b`). */
function attribute(subject: PeerCertificate['subject'], key: string): string[] {
  const value = (subject as unknown as Record<string, string | string[] | undefined>)?.[key];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
