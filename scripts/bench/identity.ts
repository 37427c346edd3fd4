import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import {
  describeLoad,
  httpWindow,
  loadNotes,
  medians,
  nodeSpec,
  paired,
  pairedRatio,
  settings,
  type MeasuredLoad,
  type ScenarioResult,
} from './scenarios';

/**
 * Issue 26: the greeting sent with a JWT access token that the node checks
 * against its issuer's key set (`a2a.auth.oidc`) against the same greeting
 * sent with a static bearer token (`a2a.auth.bearerTokens`), in paired
 * windows (both nodes up, windows alternated, the ratio taken per round).
 * The node keeps a valid token's verdict until the token expires, so after
 * the first request a token costs what a static one does; the target is
 * ≥ 0.95 × the static token's req/s (issue 37).
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
    const runs = await paired(
      {
        'static bearer token': nodeSpec({ EXTRA_CONFIG: bearerConfig }),
        'OIDC token': nodeSpec({ EXTRA_CONFIG: oidcConfig }),
      },
      httpWindow((side) => ({
        ...greeting,
        AUTHORIZATION: `Bearer ${side === 'OIDC token' ? issuer.token : STATIC_TOKEN}`,
      })),
      Math.max(settings.runs, 5),
    );
    const bearer = medians(runs['static bearer token']);
    const oidc = medians(runs['OIDC token']);
    const failures = Object.values(runs)
      .flat()
      .reduce((sum, r) => sum + r.failed, 0);
    const perRound = (figure: (r: MeasuredLoad) => number) =>
      pairedRatio(runs['OIDC token'], runs['static bearer token'], figure);
    const ratio = perRound((r) => r.okPerSec);
    const fmt = (x: number) => x.toFixed(2);
    return {
      id: 'oidcGreeting',
      title: 'greeting with a JWT access token checked against its issuer (`a2a.auth.oidc`) vs a static bearer token',
      target: '≥ 0.95 × the static bearer token req/s (median of paired windows)',
      baseline: `static bearer token: ${describeLoad(bearer)}`,
      node: `OIDC token: ${describeLoad(oidc)}`,
      ratio: `${fmt(ratio)} × req/s, ${fmt(perRound((r) => r.p99))} × p99, ${fmt(perRound((r) => r.cpuUsPerReq))} × CPU/req, paired medians`,
      met: ratio >= 0.95 && failures === 0,
      notes: [
        ...loadNotes(runs),
        `the issuer's key set was fetched ${issuer.jwksFetches()} times over ${runs['OIDC token'].length} windows of one node`,
      ],
    };
  } finally {
    await issuer.close();
  }
}
