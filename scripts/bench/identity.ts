import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import {
  alternate,
  describeLoad,
  load,
  loadNotes,
  medians,
  nodeSpec,
  withServer,
  type ScenarioResult,
} from './scenarios';

/**
 * Issue 26: the greeting sent with a JWT access token that the node checks
 * against its issuer's key set (`a2a.auth.oidc`) against the same greeting
 * sent with a static bearer token (`a2a.auth.bearerTokens`), alternated in
 * one run. The node keeps a valid token's verdict until the token expires,
 * so after the first request a token costs what a static one does; the
 * target is ≥ 0.9 × the static token's req/s.
 */

const AUDIENCE = 'https://bench.example/a2a';
const STATIC_TOKEN = 'bench-static-bearer-token-5b8e2c1d9f';

/** A token issuer on 127.0.0.1: OpenID discovery and a key set, and one signed token (an hour long). */
async function startIssuer(): Promise<{
  url: string;
  token: string;
  jwksFetches: () => number;
  close(): Promise<void>;
}> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-1', alg: 'RS256', use: 'sig' };
  let url = '';
  let jwksFetches = 0;
  const server = http.createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
    } else if (req.url === '/jwks') {
      jwksFetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = await new SignJWT({ sub: 'bench-client', client_id: 'bench-client', scope: 'lango:chat' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench-1', typ: 'at+jwt' })
    .setIssuer(url)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
  return {
    url,
    token,
    jwksFetches: () => jwksFetches,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The greeting with an OIDC-validated token vs with a static bearer token. */
export async function oidcGreeting(): Promise<ScenarioResult> {
  const issuer = await startIssuer();
  try {
    const greeting = { KIND: 'send', TEXT: 'hi' };
    const bearerConfig = JSON.stringify({ a2a: { auth: { bearerTokens: [STATIC_TOKEN] } } });
    const oidcConfig = JSON.stringify({
      a2a: { auth: { oidc: { issuer: issuer.url, audience: AUDIENCE, allowPrivateNetwork: true } } },
    });
    const runs = await alternate({
      'static bearer token': () =>
        withServer(nodeSpec({ EXTRA_CONFIG: bearerConfig }), (s) =>
          load(s, { ...greeting, AUTHORIZATION: `Bearer ${STATIC_TOKEN}` }),
        ),
      'OIDC token': () =>
        withServer(nodeSpec({ EXTRA_CONFIG: oidcConfig }), (s) =>
          load(s, { ...greeting, AUTHORIZATION: `Bearer ${issuer.token}` }),
        ),
    });
    const bearer = medians(runs['static bearer token']);
    const oidc = medians(runs['OIDC token']);
    const failures = Object.values(runs)
      .flat()
      .reduce((sum, r) => sum + r.failed, 0);
    const ratio = oidc.rps / bearer.rps;
    const fmt = (x: number) => x.toFixed(2);
    return {
      id: 'oidcGreeting',
      title: 'greeting with a JWT access token checked against its issuer (`a2a.auth.oidc`) vs a static bearer token',
      target: '≥ 0.9 × the static bearer token req/s',
      baseline: `static bearer token: ${describeLoad(bearer)}`,
      node: `OIDC token: ${describeLoad(oidc)}`,
      ratio: `${fmt(ratio)} × req/s, ${fmt(oidc.p99 / bearer.p99)} × p99, ${fmt(oidc.cpu / bearer.cpu)} × CPU/req`,
      met: ratio >= 0.9 && failures === 0,
      notes: [
        ...loadNotes(runs),
        `the issuer's key set was fetched ${issuer.jwksFetches()} times over ${runs['OIDC token'].length} node runs (once per node start)`,
      ],
    };
  } finally {
    await issuer.close();
  }
}
