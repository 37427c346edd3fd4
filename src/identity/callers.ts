import { createHash } from 'node:crypto';
import type { A2aCaller, LangoConfig } from '../config/schema';
import { ConfigError, errorMessage } from '../errors';
import {
  ANONYMOUS,
  ANONYMOUS_ID,
  derivedId,
  namedCaller,
  OWNER,
  OWNER_ID,
  tenantAware,
  type Grant,
  type Principal,
  type PrincipalDirectory,
} from '../principal';

/**
 * The node's callers (issue 11 A): every credential of `a2a.auth` and the
 * principal it authenticates. A named caller of `a2a.auth.callers` runs as
 * itself with its grant (or as the owner with `owner: true`); each token of
 * the plain `bearerTokens` / `apiKeys` lists is a caller of its own, named by
 * a hash of it (`bearer:<hash>`), with the default grant.
 */
export interface Callers extends PrincipalDirectory {
  /** Whether any credential is configured (else every caller is anonymous, hence the owner by the exposure rule). */
  readonly enabled: boolean;
  /** The bearer tokens and API keys, each with the principal it authenticates. */
  readonly credentials: readonly CallerCredential[];
  /** Token subjects and client ids (`oidcSubjects`) and the caller each names. */
  readonly subjects: ReadonlyMap<string, Principal>;
  /** Client certificates (`clientCertificates`) and the caller each names. */
  readonly certificates: readonly CertificateMatch[];
  /** The grant of a caller configured without one. */
  readonly defaultGrant: Grant;
}

/** One accepted credential. */
export interface CallerCredential {
  readonly kind: 'bearer' | 'apiKey';
  /** The value as presented (secret references already resolved). */
  readonly value: string;
  readonly principal: Principal;
}

/** One configured client certificate: by its subject attributes or its SHA-256 fingerprint (lower-case hex, no colons). */
export interface CertificateMatch {
  readonly subject?: Readonly<Record<string, string>>;
  readonly fingerprint?: string;
  readonly principal: Principal;
}

/** The names a grant may use, to check a configured grant against the node. */
export interface KnownNames {
  specialists: readonly string[];
  remoteAgents: readonly string[];
  toolFamilies: readonly string[];
}

/** Options of {@link createCallers}. */
export interface CallersOptions {
  /**
   * The grant of a peer caller configured without one: every specialist and
   * remote agent, and only the tool families marked for peers (no shell,
   * files, skills, browser, keys, secrets or payments).
   */
  defaultGrant: Grant;
  /** Checks every configured grant's names; unknown names fail the start with their key path. */
  known?: KnownNames;
}

/** The id of a credential of the plain lists: its kind and a short hash, never the value. */
export function credentialId(kind: CallerCredential['kind'], value: string): string {
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 16);
  return derivedId(kind === 'bearer' ? 'bearer' : 'apikey', hash);
}

/**
 * Builds the callers of `auth` (credentials already resolved, see
 * {@link resolveCallerCredentials}).
 * @throws ConfigError naming the key path of a grant with an unknown name or a credential used twice.
 * @example
 * const callers = createCallers(config.a2a.auth, { defaultGrant });
 * callers.byId('alice').grant?.toolFamilies; // ['librarian']
 */
export function createCallers(auth: LangoConfig['a2a']['auth'], options: CallersOptions): Callers {
  const { defaultGrant } = options;
  const problems: string[] = [];
  const byName = new Map<string, Principal>();
  const credentials: CallerCredential[] = [];
  const subjects = new Map<string, Principal>();
  const certificates: CertificateMatch[] = [];
  const add = (kind: CallerCredential['kind'], value: string, principal: Principal, at: string) => {
    if (credentials.some((c) => c.kind === kind && c.value === value)) {
      problems.push(`${at}: this credential is already another caller's`);
      return;
    }
    credentials.push({ kind, value, principal });
  };
  (auth?.callers ?? []).forEach((caller, index) => {
    const at = `a2a.auth.callers[${index}]`;
    if (options.known && caller.grant) problems.push(...unknownNames(caller.grant, options.known, `${at}.grant`));
    const principal = caller.owner ? OWNER : namedCaller(caller.name, grantOf(caller, defaultGrant));
    byName.set(caller.name, principal);
    caller.bearerTokens.forEach((token, i) => add('bearer', token, principal, `${at}.bearerTokens[${i}]`));
    caller.apiKeys.forEach((key, i) => add('apiKey', key, principal, `${at}.apiKeys[${i}]`));
    caller.oidcSubjects.forEach((subject, i) => {
      if (subjects.has(subject)) problems.push(`${at}.oidcSubjects[${i}]: this subject is already another caller's`);
      else subjects.set(subject, principal);
    });
    for (const certificate of caller.clientCertificates)
      certificates.push(
        'subject' in certificate
          ? { subject: parseSubject(certificate.subject), principal }
          : { fingerprint: normalizeFingerprint(certificate.fingerprint), principal },
      );
  });
  (auth?.bearerTokens ?? []).forEach((token, i) =>
    add('bearer', token, namedCaller(credentialId('bearer', token), defaultGrant), `a2a.auth.bearerTokens[${i}]`),
  );
  (auth?.apiKeys ?? []).forEach((key, i) =>
    add('apiKey', key, namedCaller(credentialId('apiKey', key), defaultGrant), `a2a.auth.apiKeys[${i}]`),
  );
  if (problems.length > 0) {
    throw new ConfigError(`invalid a2a.auth (${problems.length} problem${problems.length === 1 ? '' : 's'})`, problems);
  }
  const ids = new Map(credentials.map((c) => [c.principal.id, c.principal]));
  return {
    enabled: credentials.length > 0 || subjects.size > 0 || certificates.length > 0 || Boolean(auth?.oidc),
    credentials,
    subjects,
    certificates,
    defaultGrant,
    // A stored id names a configured caller (with its grant today, not the one it had when the row was written),
    // a plain token's hash, or a caller no longer configured (the default grant, never more).
    // A tenant-qualified id is the same caller in that tenant.
    ...tenantAware((id) =>
      id === OWNER_ID
        ? OWNER
        : id === ANONYMOUS_ID
          ? ANONYMOUS
          : (byName.get(id) ?? ids.get(id) ?? namedCaller(id, defaultGrant)),
    ),
  };
}

/** `CN=peer-a, O=Example` as attributes (each must match a certificate's). */
export function parseSubject(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) attributes[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return attributes;
}

/** A SHA-256 fingerprint as compared: lower-case hex without colons (Node gives `AB:CD:…`). */
export function normalizeFingerprint(text: string): string {
  return text.replace(/:/g, '').toLowerCase();
}

/** A configured caller's grant: each field given, else the default's. */
function grantOf(caller: A2aCaller, defaults: Grant): Grant {
  return Object.freeze({
    specialists: caller.grant?.specialists ?? defaults.specialists,
    remoteAgents: caller.grant?.remoteAgents ?? defaults.remoteAgents,
    toolFamilies: caller.grant?.toolFamilies ?? defaults.toolFamilies,
  });
}

function unknownNames(grant: NonNullable<A2aCaller['grant']>, known: KnownNames, at: string): string[] {
  const problems: string[] = [];
  for (const kind of ['specialists', 'remoteAgents', 'toolFamilies'] as const) {
    const reach = grant[kind];
    if (!reach || reach === 'all') continue;
    for (const name of reach) {
      if (!known[kind].includes(name)) {
        const choices = known[kind].length > 0 ? known[kind].join(', ') : 'none configured';
        problems.push(`${at}.${kind}: unknown name "${name}" (known: ${choices})`);
      }
    }
  }
  return problems;
}

/**
 * `auth` with every `{{secret:NAME}}` in a caller's credentials replaced by
 * the owner's secret (`${ENV}` is replaced when the file is read), so a
 * credential need not be written in the config file.
 * @throws ConfigError naming the key path of a credential whose secret cannot be read.
 */
export async function resolveCallerCredentials(
  auth: LangoConfig['a2a']['auth'],
  resolve: (text: string) => Promise<string>,
): Promise<LangoConfig['a2a']['auth']> {
  if (!auth || !/\{\{secret:/.test(JSON.stringify(auth))) return auth;
  const problems: string[] = [];
  const each = (values: readonly string[], at: string) =>
    Promise.all(
      values.map((value, i) =>
        resolve(value).catch((err: unknown) => {
          problems.push(`${at}[${i}]: ${errorMessage(err)}`);
          return value;
        }),
      ),
    );
  const resolved = {
    ...auth,
    bearerTokens: await each(auth.bearerTokens, 'a2a.auth.bearerTokens'),
    apiKeys: await each(auth.apiKeys, 'a2a.auth.apiKeys'),
    callers: await Promise.all(
      auth.callers.map(async (caller, index) => ({
        ...caller,
        bearerTokens: await each(caller.bearerTokens, `a2a.auth.callers[${index}].bearerTokens`),
        apiKeys: await each(caller.apiKeys, `a2a.auth.callers[${index}].apiKeys`),
      })),
    ),
  };
  if (problems.length > 0) throw new ConfigError('cannot read the secrets of a2a.auth', problems);
  return resolved;
}
