import { createHash } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { createCallers } from '../../src/identity/callers';
import { createIdentity, type Identity } from '../../src/identity/identity';
import type { CallerRequest } from '../../src/identity/request';
import { createTokenValidator } from '../../src/identity/tokens';
import { resolveConfig } from '../../src/config/load';
import type { ConfigError } from '../../src/errors';
import { createMemoryLogger } from '../../src/log/logger';
import { ANONYMOUS_ID, inTenant, OWNER_ID, type Principal } from '../../src/principal';
import { DEFAULT_PEER_GRANT } from '../../src/tools/families';

/**
 * Issue 37 §2: principal ids live in disjoint namespaces, so no two
 * credentials — of one kind or of two — can become one principal. Every kind
 * the identity component reads is presented, each crafted to spell another's
 * id (a token subject that is a digest of another subject, a caller's name, a
 * credential's hash id, `owner`, `anonymous`, the scraper's id), through the
 * node's own identity component and a real signed token for each subject.
 */

const ISSUER = 'https://idp.example';
const AUDIENCE = 'https://node.example';
const TOKEN = 'shared-secret-value-0123456789';
const ALICE_TOKEN = 'alice-token-abcdef0123456789';
const METRICS_TOKEN = 'metrics-token-0123456789';
const FINGERPRINT = 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89';

describe('principal ids of every credential kind are disjoint', () => {
  let identity: Identity;
  let sign: (sub: string) => Promise<string>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    sign = (sub) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(sub)
        .setExpirationTime('10m')
        .sign(privateKey as CryptoKey);
    const config = resolveConfig({
      server: { tls: undefined },
      observability: { metricsToken: METRICS_TOKEN },
      a2a: {
        auth: {
          // The same secret as a plain bearer token and as a plain API key: two credentials, two principals.
          bearerTokens: [TOKEN],
          apiKeys: [TOKEN],
          callers: [{ name: 'alice', bearerTokens: [ALICE_TOKEN] }],
          oidc: { issuer: ISSUER, audience: AUDIENCE },
        },
      },
    });
    const callers = createCallers(config.a2a.auth, { defaultGrant: DEFAULT_PEER_GRANT });
    const logger = createMemoryLogger();
    const tokens = createTokenValidator({ oidc: config.a2a.auth!.oidc!, callers, keys: async () => publicKey, logger });
    identity = createIdentity({ config, callers, logger, tokens });
  });

  const request = (headers: Record<string, string>, certificate?: PeerCertificate): CallerRequest => ({
    method: 'POST',
    path: '/',
    headers,
    remoteAddress: '127.0.0.1',
    peerCertificate: certificate,
  });
  const who = async (headers: Record<string, string>, certificate?: PeerCertificate): Promise<Principal> => {
    const principal = await identity.principal(request(headers, certificate));
    if (!principal) throw new Error(`refused: ${JSON.stringify(headers)}`);
    return principal;
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('gives each credential its own principal, whatever the values spell', async () => {
    const plainBearer = await who(bearer(TOKEN));
    const plainKey = await who({ 'x-api-key': TOKEN });
    const digestSubject = 'a subject with spaces, so it is kept by digest';
    const digested = await who(bearer(await sign(digestSubject)));
    const digest = digested.id.slice(digested.id.indexOf(':') + 1);
    const byId: Array<[string, Principal]> = [
      ['plain bearer token', plainBearer],
      ['plain API key, same secret', plainKey],
      ["alice's token", await who(bearer(ALICE_TOKEN))],
      ['the metrics token', await who(bearer(METRICS_TOKEN))],
      ['no credential', await who({})],
      ['a subject kept by digest', digested],
      ['a subject that is that digest', await who(bearer(await sign(digest)))],
      ['a subject spelling the digested id', await who(bearer(await sign(digested.id)))],
      ['a subject named like a caller', await who(bearer(await sign('alice')))],
      ["a subject spelling a token's id", await who(bearer(await sign(plainBearer.id)))],
      ["a subject spelling a key's id", await who(bearer(await sign(plainKey.id)))],
      ['a subject named owner', await who(bearer(await sign(OWNER_ID)))],
      ['a subject named anonymous', await who(bearer(await sign(ANONYMOUS_ID)))],
      ["a subject spelling the scraper's id", await who(bearer(await sign('node:metrics')))],
      ['a subject spelling a tenant', await who(bearer(await sign('acme/alice')))],
    ];
    const ids = byId.map(([what, principal]) => `${principal.id} <- ${what}`);
    expect(new Set(byId.map(([, p]) => p.id)).size).toBe(byId.length);
    // Nobody but a credential marked owner is the owner; no credential is anonymous, never the owner.
    expect(ids.filter((line) => line.startsWith(`${OWNER_ID} `))).toEqual([]);
    expect(byId.find(([what]) => what === 'no credential')![1].kind).toBe('anonymous');
    expect(byId.filter(([, p]) => p.kind === 'anonymous')).toHaveLength(1);
    // The same principals in a tenant stay apart too.
    expect(new Set(byId.map(([, p]) => inTenant(p, 'acme').id)).size).toBe(byId.length);
  });

  it('keeps a client certificate apart from a subject or token spelling its id', async () => {
    const certificate = { fingerprint256: FINGERPRINT, subject: { CN: 'x' } } as unknown as PeerCertificate;
    const config = resolveConfig({ server: { tls: undefined }, a2a: { auth: { bearerTokens: [TOKEN] } } });
    const callers = createCallers(config.a2a.auth, { defaultGrant: DEFAULT_PEER_GRANT });
    const withCa = resolveConfig({
      a2a: { auth: { bearerTokens: [TOKEN] } },
      server: { tls: { cert: 'c.pem', key: 'k.pem', clientCa: 'ca.pem', clientCert: 'optional' } },
    });
    const identityWithCa = createIdentity({ config: withCa, callers, logger: createMemoryLogger() });
    const fromCertificate = await identityWithCa.principal(request({}, certificate));
    const fromToken = await identityWithCa.principal(request(bearer(TOKEN)));
    expect(fromCertificate?.id).toMatch(/^cert:[0-9a-f]{16}$/);
    expect(fromCertificate?.id).not.toBe(fromToken?.id);
    const expected = createHash('sha256').update(TOKEN).digest('hex').slice(0, 16);
    expect(fromToken?.id).toBe(`bearer:${expected}`);
  });

  it('refuses a configured caller whose name would spell a reserved or derived id', () => {
    for (const name of ['owner', 'anonymous', 'bearer:0123456789abcdef', 'oidc:alice', 'acme/alice']) {
      let error: ConfigError | undefined;
      try {
        resolveConfig({ a2a: { auth: { callers: [{ name, bearerTokens: ['t-0123456789'] }] } } });
      } catch (err) {
        error = err as ConfigError;
      }
      expect({ name, refused: error !== undefined }).toEqual({ name, refused: true });
    }
  });
});
