import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';
import { startMisbehavingPeer, type MisbehavingPeer } from '../support/misbehavingPeer';
import { waitFor } from '../support/waitFor';

/**
 * Issue 11, item 1 and G, against the real `lango serve` process: peers
 * whose cards answer every class of failure at start-up, and again while
 * the node runs (the background re-probe), never end the process; each is
 * skipped with a warning naming the fault. A peer echoing its token finds
 * it masked in the answer and the logs; a credential in a card URL never
 * shows in `/agents` or the extended card.
 */

const CARD_FAULTS = [
  '301',
  '302',
  '307',
  '308',
  '400',
  '401',
  '403',
  '404',
  '410',
  '429',
  '500',
  '502',
  '503',
  '504',
  'reset',
  'truncated',
  'slow',
  'huge',
  'huge-declared',
  'gzip-bomb',
  'garbage',
  'endless',
  'redirect-private',
];
const NODE_TOKEN = 'node-owner-token-5150';
const PEER_TOKEN = 'peer-token-SECRET-7781';
const QUERY_SECRET = 'card-query-secret-2718';
const USERINFO_SECRET = 'card-userinfo-secret-1618';

interface AgentsDoc {
  agents: Array<{ name: string; kind: string; cardUrl?: string; health?: { state: string; reason?: string } }>;
}

describe('lango serve with peers that fail at start-up and while running', () => {
  let faulty: MisbehavingPeer;
  let echo: MisbehavingPeer;
  let canary: http.Server;
  let canaryHits = 0;
  let serve: ServeProcess | undefined;
  let dir: string;

  const auth = { authorization: `Bearer ${NODE_TOKEN}` };
  const agents = async (): Promise<AgentsDoc> =>
    (await (await fetch(`${serve!.url}/agents`, { headers: auth })).json()) as AgentsDoc;
  /** A JSON-RPC call to the node as its owner. */
  const call = (id: number, method: string, params: Record<string, unknown>) =>
    fetch(`${serve!.url}/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
  const say = (id: number, text: string) =>
    call(id, 'SendMessage', { message: { messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text }] } });
  const alive = async () => {
    expect(serve!.child.exitCode).toBeNull();
    expect((await fetch(`${serve!.url}/healthz`)).status).toBe(200);
  };

  beforeAll(async () => {
    canary = http.createServer((_req, res) => {
      canaryHits++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.2', resolve));
    const canaryUrl = `http://127.0.0.2:${(canary.address() as AddressInfo).port}/latest/meta-data/`;
    faulty = await startMisbehavingPeer({ name: 'faulty', redirectTo: canaryUrl });
    echo = await startMisbehavingPeer({ name: 'echoer', keyword: 'zebrafacts' });
    echo.call = 'echo-auth';
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-outbound-serve-'));
    const config = {
      dataDir: path.join(dir, 'data'),
      logLevel: 'info',
      tools: { browser: { enabled: false } },
      a2a: {
        auth: { bearerTokens: [NODE_TOKEN] },
        cardFetchTimeoutMs: 10_000,
        remoteAgents: [
          ...CARD_FAULTS.map((fault) => ({ name: `card-${fault}`, agentCardUrl: `${faulty.origin}/cards/${fault}` })),
          {
            name: 'echoer',
            agentCardUrl: `${echo.cardUrl}?key=${QUERY_SECRET}`,
            auth: { type: 'bearer', token: PEER_TOKEN },
          },
          { name: 'basic', agentCardUrl: echo.cardUrl.replace('http://', `http://carduser:${USERINFO_SECRET}@`) },
        ],
      },
    };
    const configFile = path.join(dir, 'lango.config.json');
    fs.writeFileSync(configFile, JSON.stringify(config));
    serve = await spawnServe({ cwd: dir, configFile, port: await freePort() });
  }, 40_000);

  afterAll(async () => {
    await serve?.stop();
    await faulty?.close();
    await echo?.close();
    await new Promise<void>((resolve) => canary?.close(() => resolve()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts, skipping every failing peer with a warning that names its fault', async () => {
    await alive();
    const doc = await agents();
    for (const fault of CARD_FAULTS) {
      const agent = doc.agents.find((a) => a.name === `card-${fault}`);
      expect([fault, agent?.health?.state]).toEqual([fault, 'skipped']);
      expect(agent?.health?.reason).toMatch(/^card /);
    }
    const reason = (fault: string) => doc.agents.find((a) => a.name === `card-${fault}`)?.health?.reason;
    expect(reason('302')).toBe('card HTTP 302: the server answered with a redirect (not followed)');
    expect(reason('500')).toBe('card HTTP 500: the server answered with an error');
    expect(reason('slow')).toBe('card timed out after 10000 ms');
    expect(reason('huge')).toMatch(/^card body too large: more than 262144 bytes$/);
    expect(reason('gzip-bomb')).toBe('card body too large: more than 262144 bytes once decoded');
    expect(reason('huge-declared')).toMatch(/^card body too large: \d+ bytes declared/);
    expect(reason('garbage')).toBe('card body is not valid JSON');
    expect(reason('truncated')).toMatch(/^card body cut off: /);
    expect(reason('reset')).toMatch(/^card unreachable: /);
    expect(doc.agents.find((a) => a.name === 'echoer')?.health?.state).toBe('healthy');
    const warnings = serve!
      .output()
      .split('\n')
      .filter((l) => l.includes('"remote agent skipped"'));
    expect(warnings).toHaveLength(CARD_FAULTS.length);
    expect(serve!.output()).not.toMatch(/Unhandled|RequestAbortedError|\n\s+at /);
    expect(canaryHits).toBe(0);
  });

  it('survives the background re-probe when every failing peer now answers 502', async () => {
    faulty.card = 502;
    const stillSkipped = () =>
      serve!
        .output()
        .split('\n')
        .filter((l) => l.includes('"remote agent still skipped"'));
    // Skipped peers are probed again after 5 s: the probe that used to kill the process.
    // Every peer whose fault changed is logged again, now with the 502 (the one already answering 502 is not).
    await waitFor(
      () => stillSkipped().filter((l) => l.includes('card HTTP 502')).length >= CARD_FAULTS.length - 2,
      20_000,
      'the re-probe to log every changed peer with its 502',
    );
    await alive();
    const answer = await say(1, 'hello');
    expect(answer.status).toBe(200);
    expect(serve!.output()).not.toMatch(/Unhandled|RequestAbortedError|\n\s+at /);
  }, 60_000);

  it('masks a peer token the peer echoes back, in the answer and in the logs', async () => {
    const body = await (await say(2, 'zebrafacts please')).text();
    expect(echo.bodies.length).toBeGreaterThan(0);
    expect(body).toContain('your credentials were Bearer [REDACTED]');
    expect(body).not.toContain(PEER_TOKEN);
    expect(serve!.output()).not.toContain(PEER_TOKEN);
  });

  it('shows no card URL credential in /agents, the extended card or the logs', async () => {
    const doc = await agents();
    const shown = doc.agents.find((a) => a.name === 'echoer');
    expect(shown?.cardUrl).toBe(`${echo.cardUrl}?key=***`);
    expect(JSON.stringify(doc)).not.toContain(QUERY_SECRET);
    const basic = doc.agents.find((a) => a.name === 'basic');
    expect(basic?.cardUrl).toBe(echo.cardUrl);
    expect(JSON.stringify(doc)).not.toContain(USERINFO_SECRET);
    const card = await (await call(3, 'GetExtendedAgentCard', {})).text();
    expect(card).toContain('echoer');
    expect(card).not.toContain(QUERY_SECRET);
    expect(card).not.toContain(USERINFO_SECRET);
    expect(serve!.output()).not.toContain(QUERY_SECRET);
    expect(serve!.output()).not.toContain(USERINFO_SECRET);
    // The peer itself did receive the credentials it asked for: in the query, and as Basic auth.
    expect(echo.seen.some((s) => s.includes(`key=${QUERY_SECRET}`))).toBe(true);
    const basicAuth = `Basic ${Buffer.from(`carduser:${USERINFO_SECRET}`).toString('base64')}`;
    expect(echo.seen.some((s) => s.endsWith(basicAuth))).toBe(true);
  });
});
