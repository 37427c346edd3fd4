import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { buildAgentCard } from '../../src/a2a/card/card';
import { createCallers } from '../../src/identity/callers';
import { principalOfCertificate, principalOfClaims } from '../../src/identity/claims';
import { createIssuerKeys } from '../../src/identity/issuerKeys';
import { resolveConfig } from '../../src/config/load';
import type { ConfigError } from '../../src/errors';
import { createMemoryLogger } from '../../src/log/logger';
import { buildAgentTree } from '../../src/orchestration/tree';
import { NO_TOOLS, OWNER, type Grant } from '../../src/principal';

/**
 * The pieces of inbound identity (issue 26): who a verified token's claims
 * or a client certificate are, the issuer's key set following a key
 * rotation, and the schemes the card declares.
 */

const DEFAULT: Grant = { specialists: 'all', remoteAgents: 'all', toolFamilies: ['librarian', 'chronicler'] };

describe('who a token or certificate is', () => {
  const config = resolveConfig({
    a2a: {
      auth: {
        oidc: {
          issuer: 'https://idp.example',
          audience: 'https://node.example',
          scopes: {
            'lango:read': { grant: { toolFamilies: ['librarian'] } },
            'lango:remember': { grant: { toolFamilies: ['chronicler'], remoteAgents: [] } },
          },
        },
        callers: [
          { name: 'ci', oidcSubjects: ['ci-client'], grant: { toolFamilies: ['librarian', 'exec'] } },
          { name: 'boss', oidcSubjects: ['boss-client'], owner: true },
          { name: 'lab', clientCertificates: [{ subject: 'CN=lab, O=Lango' }] },
        ],
      },
    },
  });
  const oidc = config.a2a.auth!.oidc!;
  const callers = createCallers(config.a2a.auth, { defaultGrant: DEFAULT });

  it('names a configured caller by client id, azp or subject, narrowed to the scopes it carries', () => {
    expect(principalOfClaims({ client_id: 'ci-client', scope: 'lango:read' }, { oidc, callers })).toEqual({
      kind: 'caller',
      id: 'ci',
      grant: { specialists: 'all', remoteAgents: 'all', toolFamilies: ['librarian'] },
    });
    expect(principalOfClaims({ azp: 'ci-client', scp: ['lango:remember'] }, { oidc, callers })?.grant).toEqual({
      specialists: 'all',
      remoteAgents: [],
      toolFamilies: [],
    });
    expect(principalOfClaims({ sub: 'boss-client' }, { oidc, callers })).toBe(OWNER);
  });

  it('gives a subject nobody configured its scopes together (nothing past conversation without one), or refuses it', () => {
    expect(principalOfClaims({ sub: 'someone', scope: 'lango:read lango:remember' }, { oidc, callers })).toEqual({
      kind: 'caller',
      id: 'oidc:someone',
      grant: { specialists: 'all', remoteAgents: 'all', toolFamilies: ['librarian', 'chronicler'] },
    });
    expect(principalOfClaims({ sub: 'someone' }, { oidc, callers })?.grant).toEqual(NO_TOOLS);
    expect(principalOfClaims({ sub: 'a subject with spaces/and slashes' }, { oidc, callers })?.id).toMatch(
      /^oidc-digest:[0-9a-f]{32}$/,
    );
    expect(principalOfClaims({ sub: 'someone' }, { oidc: { ...oidc, unknownSubjects: 'refuse' }, callers })).toBe(
      undefined,
    );
  });

  it('names the caller of a certificate by its subject attributes, else a caller of its own', () => {
    const certificate = (subject: Record<string, string>, fingerprint256: string) =>
      ({ subject, fingerprint256 }) as unknown as Parameters<typeof principalOfCertificate>[0];
    const fp = 'AB:'.repeat(31) + 'CD';
    expect(principalOfCertificate(certificate({ CN: 'lab', O: 'Lango', C: 'PT' }, fp), callers).id).toBe('lab');
    expect(principalOfCertificate(certificate({ CN: 'lab', O: 'Other' }, fp), callers)).toEqual({
      kind: 'caller',
      id: `cert:${'ab'.repeat(8)}`,
      grant: DEFAULT,
    });
  });
});

describe("the issuer's key set", () => {
  let server: http.Server;
  let url = '';
  let keys: JWK[] = [];
  let fetches = 0;
  let issuerNamed = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration')
        res.end(JSON.stringify({ issuer: issuerNamed || url, jwks_uri: `${url}/keys` }));
      else if (req.url === '/keys') {
        fetches++;
        res.end(JSON.stringify({ keys }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const keyPair = async (kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
  };
  const sign = (key: CryptoKey, kid: string) =>
    new SignJWT({ sub: 'x' })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(url)
      .setExpirationTime('5m')
      .sign(key);

  it('follows a key rotation: a token naming a new key fetches the set again and passes', async () => {
    let now = 1_000_000;
    const first = await keyPair('k1');
    keys = [first.jwk];
    const issuerKeys = createIssuerKeys({
      issuer: url,
      allowPrivateNetwork: true,
      logger: createMemoryLogger(),
      minRefreshIntervalMs: 30_000,
      now: () => now,
    });
    await jwtVerify(await sign(first.privateKey, 'k1'), issuerKeys);
    expect(fetches).toBe(1);
    const second = await keyPair('k2');
    keys = [first.jwk, second.jwk];
    // Within the interval an unknown key is refused without asking the issuer again…
    await expect(jwtVerify(await sign(second.privateKey, 'k2'), issuerKeys)).rejects.toThrow();
    expect(fetches).toBe(1);
    // …after it, the set is fetched again and the rotated key is known.
    now += 30_000;
    await jwtVerify(await sign(second.privateKey, 'k2'), issuerKeys);
    expect(fetches).toBe(2);
  });

  it('refuses a discovery document that names another issuer', async () => {
    issuerNamed = 'https://impostor.example';
    const logger = createMemoryLogger();
    const issuerKeys = createIssuerKeys({ issuer: url, allowPrivateNetwork: true, logger });
    try {
      const { privateKey } = await keyPair('k1');
      await expect(jwtVerify(await sign(privateKey, 'k1'), issuerKeys)).rejects.toThrow();
      expect(logger.records.find((r) => r.message === 'token issuer keys unavailable')?.meta.error).toMatch(
        /names issuer "https:\/\/impostor\.example"/,
      );
    } finally {
      issuerNamed = '';
    }
  });
});

describe('the card for token and certificate callers', () => {
  const tree = buildAgentTree({ tools: [] });
  const cardOf = (input: Parameters<typeof resolveConfig>[0]) =>
    buildAgentCard({ config: resolveConfig(input), root: tree, baseUrl: 'https://node.example', version: '1' });

  it('declares OAuth 2 client credentials with the token URL and the scopes it knows', () => {
    const card = cardOf({
      a2a: {
        auth: {
          oidc: {
            issuer: 'https://idp.example/',
            audience: 'https://node.example',
            cardScheme: 'oauth2',
            tokenUrl: 'https://idp.example/oauth/token',
            scopes: { 'lango:read': { description: 'read the knowledge base', grant: {} } },
          },
        },
      },
    });
    expect(card.securitySchemes.oauth2?.scheme).toEqual({
      $case: 'oauth2SecurityScheme',
      value: {
        description: 'A JWT access token from https://idp.example/ for https://node.example.',
        oauth2MetadataUrl: 'https://idp.example/.well-known/openid-configuration',
        flows: {
          flow: {
            $case: 'clientCredentials',
            value: {
              tokenUrl: 'https://idp.example/oauth/token',
              refreshUrl: '',
              scopes: { 'lango:read': 'read the knowledge base' },
            },
          },
        },
      },
    });
    expect(card.capabilities?.extendedAgentCard).toBe(true);
  });

  it('asks for a required certificate with every other credential', () => {
    const card = cardOf({
      server: { tls: { cert: 'c.pem', key: 'k.pem', clientCa: 'ca.pem', clientCert: 'required' } },
      a2a: { auth: { bearerTokens: ['a-static-token'] } },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] }, mtls: { list: [] } } }]);
    expect(card.supportedInterfaces[0].url).toBe('https://node.example');
  });

  it('refuses oauth2 on the card without a token URL, naming the key', () => {
    let issues: string[] = [];
    try {
      resolveConfig({
        a2a: { auth: { oidc: { issuer: 'https://idp.example', audience: 'x', cardScheme: 'oauth2' } } },
      });
    } catch (error) {
      issues = (error as ConfigError).issues;
    }
    expect(issues).toEqual([expect.stringMatching(/^a2a\.auth\.oidc\.tokenUrl: cardScheme oauth2 needs tokenUrl/)]);
  });
});
