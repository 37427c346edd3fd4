import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, createLocalJWKSet, type JWTPayload } from 'jose';
import { runClient, type ServerProcess } from './proc';
import {
  alternate,
  describeLoad,
  load,
  loadNotes,
  medians,
  nodeSpec,
  settings,
  withServer,
  type ScenarioResult,
} from './scenarios';
import { median } from './stats';

/**
 * Issue 33: a network that knows who is asking. A node A (instant model:
 * the orchestrator transfers every message to its remote agent `b` at once)
 * in front of a node B (offline model), both checking tokens of one token
 * service that also exchanges them (RFC 8693), measuring:
 * - `onBehalfOf`: A calling B on behalf of its caller (the caller's token
 *   exchanged, kept after the first exchange) against A calling B with its
 *   own client-credentials token, alternated in one run: ≥ 0.9 × req/s;
 * - `accounting`: A → B with every task's account kept and nested (and the
 *   trace context sent, as always) against the same with
 *   `observability.accounting: false`: ≥ 0.95 × req/s;
 * - `onBehalfOfHop`: the same hop with sequential requests, on behalf of the
 *   caller against client credentials: ≤ +3 ms p50 (the hop's own cost is
 *   the `hop` scenario's, ≤ +3 ms over A alone + B directly).
 */

const AUD_A = 'https://a.bench.example/a2a';
const AUD_B = 'https://b.bench.example/a2a';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const CLIENT_SECRET = 'bench-client-secret-4c7e1a9d';

/** A token service on 127.0.0.1: discovery, its key set, and a token endpoint doing client credentials and token exchange. */
async function startTokenService(): Promise<{
  url: string;
  /** A token of caller `x` for A, an hour long. */
  tokenOfX(audience?: string): Promise<string>;
  requests(): number;
  close(): Promise<void>;
}> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-ex-1', alg: 'RS256', use: 'sig' };
  const keys = createLocalJWKSet({ keys: [jwk] });
  let url = '';
  let tokenRequests = 0;
  const sign = (claims: JWTPayload, audience: string, expires: number | string = '1h') =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'bench-ex-1', typ: 'at+jwt' })
      .setIssuer(url)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(expires)
      .sign(privateKey);
  const issue = async (form: URLSearchParams, client: string): Promise<Record<string, unknown>> => {
    const audience = form.get('resource') ?? form.get('audience') ?? AUD_B;
    if (form.get('grant_type') === 'client_credentials') {
      return { access_token: await sign({ sub: client, client_id: client }, audience), expires_in: 3600 };
    }
    if (form.get('grant_type') !== EXCHANGE) return { error: 'unsupported_grant_type' };
    const subject = (await jwtVerify(form.get('subject_token') ?? '', keys, { issuer: url })).payload;
    const act = { sub: client, ...(subject.act ? { act: subject.act } : {}) };
    return {
      access_token: await sign({ sub: subject.sub, client_id: client, act }, audience, subject.exp ?? '1h'),
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: Math.max(1, (subject.exp ?? 0) - Math.floor(Date.now() / 1000)),
    };
  };
  const server = http.createServer((req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/openid-configuration')
      return json(200, { issuer: url, jwks_uri: `${url}/jwks`, token_endpoint: `${url}/token` });
    if (req.url === '/jwks') return json(200, { keys: [jwk] });
    if (req.url !== '/token' || req.method !== 'POST') return json(404, {});
    tokenRequests++;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const [client, secret] = basic.split(':').map(decodeURIComponent);
      if (secret !== CLIENT_SECRET) return json(401, { error: 'invalid_client' });
      issue(new URLSearchParams(Buffer.concat(chunks).toString('utf8')), client)
        .then((body) => json('error' in body ? 400 : 200, body))
        .catch(() => json(400, { error: 'invalid_grant' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    tokenOfX: (audience = AUD_A) => sign({ sub: 'x', client_id: 'x' }, audience),
    requests: () => tokenRequests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `a2a.auth` of a node of `audience` of the token service: X a caller; `actors` may act for others. */
function authOf(url: string, audience: string, actors?: string[]): Record<string, unknown> {
  return {
    oidc: { issuer: url, audience, allowPrivateNetwork: true },
    ...(actors ? { delegation: { actors } } : {}),
    callers: [
      { name: 'x', oidcSubjects: ['x'] },
      { name: 'hub', oidcSubjects: ['hub'] },
    ],
  };
}

/** Node A's configuration: its remote `b` at `bUrl`, called with `auth`. */
function hubConfig(service: string, bUrl: string, auth: Record<string, unknown>): string {
  return JSON.stringify({
    a2a: { auth: authOf(service, AUD_A), remoteAgents: [{ name: 'b', baseUrl: bUrl, auth }] },
  });
}

const exchangeAuth = (service: string, onBehalfOf: 'required' | 'preferred' = 'required') => ({
  type: 'tokenExchange',
  tokenUrl: `${service}/token`,
  clientId: 'hub',
  clientSecret: CLIENT_SECRET,
  audience: AUD_B,
  onBehalfOf,
});
const clientCredentialsAuth = (service: string) => ({
  type: 'oauth2',
  tokenUrl: `${service}/token`,
  clientId: 'hub',
  clientSecret: CLIENT_SECRET,
  audience: AUD_B,
});

/** Node B: accepts X's tokens exchanged by the hub, and the hub's own. */
const peerSpec = (service: string, extra: Record<string, unknown> = {}) =>
  nodeSpec({ EXTRA_CONFIG: JSON.stringify({ a2a: { auth: authOf(service, AUD_B, ['hub']) }, ...extra }) });

const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/** A → B on behalf of the caller (after the first exchange) vs with the hub's client credentials. */
export async function onBehalfOf(): Promise<ScenarioResult> {
  const service = await startTokenService();
  try {
    const loadEnv = { KIND: 'send', TEXT: 'hi', AUTHORIZATION: `Bearer ${await service.tokenOfX()}` };
    return await withServer(peerSpec(service.url), async (b) => {
      const hub = (auth: Record<string, unknown>) =>
        withServer(
          nodeSpec({ MODEL: 'instant', INSTANT_AGENT: 'b', EXTRA_CONFIG: hubConfig(service.url, b.url, auth) }),
          (a) => load(a, loadEnv),
        );
      const before = service.requests();
      const runs = await alternate({
        'client credentials': () => hub(clientCredentialsAuth(service.url)),
        'on behalf of the caller': () => hub(exchangeAuth(service.url)),
      });
      const cc = medians(runs['client credentials']);
      const obo = medians(runs['on behalf of the caller']);
      const failures = Object.values(runs)
        .flat()
        .reduce((sum, r) => sum + r.failed, 0);
      const ratio = obo.rps / cc.rps;
      return {
        id: 'onBehalfOf',
        title:
          "delegated greeting A → B on behalf of the caller (its token exchanged, RFC 8693) vs with A's client credentials",
        target: '≥ 0.9 × req/s of the same with client credentials (after the first exchange)',
        baseline: `client credentials: ${describeLoad(cc)}`,
        node: `on behalf of the caller: ${describeLoad(obo)}`,
        ratio: `${fmt(ratio)} × req/s, ${fmt(obo.p99 / cc.p99)} × p99, ${fmt(obo.cpu / cc.cpu)} × CPU/req (A)`,
        met: ratio >= 0.9 && failures === 0,
        notes: [
          ...loadNotes(runs),
          `${service.requests() - before} token requests over ${2 * settings.runs} hub runs (one per hub start: the exchanged token, or the client-credentials one, is kept)`,
        ],
      };
    });
  } finally {
    await service.close();
  }
}

/** A → B with each task's account kept and nested vs `observability.accounting: false` on both nodes. */
export async function accounting(): Promise<ScenarioResult> {
  const loadEnv = { KIND: 'send', TEXT: 'hi' };
  const side = (on: boolean) => () =>
    withServer(nodeSpec({ EXTRA_CONFIG: JSON.stringify({ observability: { accounting: on } }) }), (b) =>
      withServer(
        nodeSpec({
          MODEL: 'instant',
          INSTANT_AGENT: 'b',
          EXTRA_CONFIG: JSON.stringify({
            observability: { accounting: on },
            a2a: { remoteAgents: [{ name: 'b', baseUrl: b.url }] },
          }),
        }),
        (a) => load(a, loadEnv),
      ),
    );
  const runs = await alternate({ 'accounting off': side(false), 'accounting on': side(true) });
  const off = medians(runs['accounting off']);
  const on = medians(runs['accounting on']);
  const failures = Object.values(runs)
    .flat()
    .reduce((sum, r) => sum + r.failed, 0);
  const ratio = on.rps / off.rps;
  return {
    id: 'accounting',
    title:
      "delegated greeting A → B with every task's account kept, B's nested in A's (`observability.accounting`), vs off",
    target: '≥ 0.95 × req/s with accounting off',
    baseline: `off: ${describeLoad(off)}`,
    node: `on: ${describeLoad(on)}`,
    ratio: `${fmt(ratio)} × req/s, ${fmt(on.p99 / off.p99)} × p99, ${fmt(on.cpu / off.cpu)} × CPU/req (A)`,
    met: ratio >= 0.95 && failures === 0,
    notes: [
      ...loadNotes(runs),
      'trace context (`traceparent` in the headers and the message) goes out on both sides: it has no switch',
    ],
  };
}

interface LatencyResult {
  ok: number;
  failed: number;
  p50: number;
  p99: number;
  sample?: string;
}

/**
 * The on-behalf-of hop, sequential requests: A → B on behalf of the caller against A → B with A's client
 * credentials (what delegating on behalf adds to a hop: judged, ≤ +3 ms p50), with A alone and B directly
 * beside them (the hop's own cost is the `hop` scenario's).
 */
export async function onBehalfOfHop(): Promise<ScenarioResult> {
  const service = await startTokenService();
  try {
    const forA = `Bearer ${await service.tokenOfX(AUD_A)}`;
    const forB = `Bearer ${await service.tokenOfX(AUD_B)}`;
    const latency = (server: ServerProcess, authorization: string) =>
      runClient<LatencyResult>('latencyClient.js', {
        URL: `${server.url}/`,
        N: '300',
        WARMUP: '30',
        TEXT: 'hi',
        AUTHORIZATION: authorization,
      });
    return await withServer(peerSpec(service.url), async (b) => {
      const via = (auth: Record<string, unknown>) =>
        withServer(
          nodeSpec({ MODEL: 'instant', INSTANT_AGENT: 'b', EXTRA_CONFIG: hubConfig(service.url, b.url, auth) }),
          (a) => latency(a, forA),
        );
      const aloneConfig = JSON.stringify({ a2a: { auth: authOf(service.url, AUD_A) } });
      const runs = await alternate({
        'on behalf of the caller': () => via(exchangeAuth(service.url)),
        'client credentials': () => via(clientCredentialsAuth(service.url)),
        'A alone': () => withServer(nodeSpec({ EXTRA_CONFIG: aloneConfig }), (a) => latency(a, forA)),
        'B directly': () => latency(b, forB),
      });
      const p50 = (name: keyof typeof runs) => median(runs[name].map((r) => r.p50));
      const obo = p50('on behalf of the caller');
      const cc = p50('client credentials');
      const all = Object.values(runs).flat();
      const failed = all.reduce((sum, r) => sum + r.failed, 0);
      const sample = all.find((r) => r.sample)?.sample;
      return {
        id: 'onBehalfOfHop',
        title:
          "one hop A → B on behalf of the caller (its token exchanged, kept) vs with A's client credentials, sequential requests, both nodes checking tokens",
        target: 'p50 ≤ +3 ms over the same hop with client credentials',
        baseline: `A → B with client credentials: p50 ${fmt(cc)} ms`,
        node: `A → B on behalf of the caller: p50 ${fmt(obo)} ms (${failed} failed)`,
        ratio: `+${fmt(obo - cc)} ms; A alone p50 ${fmt(p50('A alone'))} ms, B directly ${fmt(p50('B directly'))} ms`,
        met: obo - cc <= 3 && failed === 0,
        notes: [
          ...Object.entries(runs).map(([name, r]) => `${name} p50 per run: ${r.map((x) => x.p50).join(', ')} ms`),
          'B streams its answer to A (its card says it can): A → B includes B streaming a turn, B directly is a blocking send',
          ...(sample ? [`first failed body: ${sample}`] : []),
        ],
      };
    });
  } finally {
    await service.close();
  }
}
