import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { scriptedAgent, type OpenAIServer } from '../support/openaiServer';
import { startRelayModel } from '../support/reliabilityPeer';
import { askNode, startReliabilityNode, type ReliabilityNode } from '../support/reliabilityNode';
import { startMisbehavingPeer, type MisbehavingPeer, type Misbehaviour } from '../support/misbehavingPeer';

/**
 * Issue 11 (items 1 and 8, F) and issue 12 (naming faults): a running
 * node (the real composition root, listening on 127.0.0.1) delegates to
 * peers that fail in every way a peer can. Each call ends in a clear
 * failure note naming the fault, nothing over a cap is kept, and the node
 * keeps serving. A healthy answer after every fault keeps the circuit
 * closed, so each fault is seen on its own.
 */

const LIMITS = { maxAnswerBytes: 64 * 1024, maxEvents: 40, maxDurationMs: 3_000 };

async function stillServing(node: ReliabilityNode): Promise<void> {
  const health = await fetch(`${node.url}/healthz`);
  expect(health.status).toBe(200);
  const card = await fetch(`${node.url}/.well-known/agent-card.json`);
  expect(card.status).toBe(200);
}

describe.each([
  { streaming: false, version: '1.0' as const },
  { streaming: true, version: '1.0' as const },
  { streaming: true, version: '0.3' as const },
])('a running node delegating to a misbehaving peer (streaming: $streaming, v$version)', ({ streaming, version }) => {
  let peer: MisbehavingPeer;
  let canary: http.Server;
  let canaryHits = 0;
  let model: OpenAIServer;
  let node: ReliabilityNode;

  beforeAll(async () => {
    canary = http.createServer((_req, res) => {
      canaryHits++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.2', resolve));
    peer = await startMisbehavingPeer({
      name: 'weird',
      streaming,
      version,
      redirectTo: `http://127.0.0.2:${(canary.address() as AddressInfo).port}/latest/meta-data/`,
    });
    model = await startRelayModel('weird');
    node = await startReliabilityNode({
      config: {
        agent: scriptedAgent(model),
        a2a: { peerLimits: LIMITS, remoteAgents: [{ name: 'weird', agentCardUrl: peer.cardUrl }] },
      },
    });
  });

  afterAll(async () => {
    await node?.close();
    await peer?.close();
    await model?.close();
    await new Promise<void>((resolve) => canary?.close(() => resolve()));
  });

  const faults: Array<[string, Misbehaviour, RegExp]> = [
    ['a redirect to a private address', 'redirect-private', /weird invalid answer: redirect \(HTTP 307\) not followed/],
    ['a 302', 302, /weird invalid answer: redirect \(HTTP 302\) not followed/],
    ['a 404 page', 404, /weird invalid answer: HTTP 404 \(starts "<html><body>status 404/],
    ['a 429 page', 429, /weird invalid answer: HTTP 429/],
    ['a 500 page', 500, /weird invalid answer: HTTP 500/],
    ['a 502 page', 502, /weird invalid answer: HTTP 502/],
    ['a 503 page', 503, /weird invalid answer: HTTP 503/],
    ['a reset connection', 'reset', /weird unreachable: .*(socket hang up|other side closed|ECONNRESET)/],
    ['a truncated body', 'truncated', /weird invalid answer: cut off/],
    ['garbage', 'garbage', /weird invalid answer: not JSON \(starts "\{"jsonrpc":"2\.0","id":1,"result":<<<garb…"\)/],
    ['a huge body', 'huge', /weird invalid answer: larger than a2a\.peerLimits\.maxAnswerBytes \(65536 bytes\)/],
    ['a gzip bomb', 'gzip-bomb', /weird invalid answer: larger than a2a\.peerLimits\.maxAnswerBytes/],
    ['no answer at all', 'slow', /weird timed out after 3000 ms \(a2a\.peerLimits\.maxDurationMs\)/],
  ];
  const streamFaults: Array<[string, Misbehaviour, RegExp]> = [
    [
      'an endless stream of events',
      'endless',
      /weird invalid answer: more than a2a\.peerLimits\.maxEvents \(40\) stream events/,
    ],
    [
      'an answer streamed past the cap',
      'big-chunks',
      /weird invalid answer: answer larger than a2a\.peerLimits\.maxAnswerBytes/,
    ],
    ['a stream that never ends', 'heartbeats', /weird timed out after 3000 ms \(a2a\.peerLimits\.maxDurationMs\)/],
  ];

  it('relays a healthy answer', async () => {
    peer.call = 'ok';
    const outcome = await askNode(node, 'ping');
    expect(outcome.text).toContain('pong: ping');
  });

  it.each(streaming ? [...faults, ...streamFaults] : faults)(
    'fails the call clearly on %s, keeps nothing of it, and keeps serving',
    async (_what, mode, expected) => {
      peer.call = mode;
      // Each fault's note names the limit or answer that ended the call (a peer that never answers is ended by
      // maxDurationMs alone), so no clock is read here.
      const failed = await askNode(node, `try ${String(mode)}`);
      expect(failed.text).toMatch(expected);
      expect(failed.text).not.toMatch(/xxxxxxxx|yyyyyyyy|aaaaaaaa|zzzzzzzz|<<<garbage>>>[^"]/);
      expect(failed.text.length).toBeLessThan(2_000);
      await stillServing(node);
      peer.call = 'ok';
      expect((await askNode(node, `after ${String(mode)}`)).text).toContain(`pong: after ${String(mode)}`);
      expect(canaryHits).toBe(0);
    },
    20_000,
  );

  it('never stored a byte of an oversized answer (database file and its WAL)', () => {
    const files = fs.readdirSync(node.dir).filter((f) => f.startsWith('lango.db'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = fs.readFileSync(path.join(node.dir, file)).toString('latin1');
      expect([file, /x{1024}|y{1024}|a{1024}|z{1024}/.test(bytes)]).toEqual([file, false]);
    }
  });
});
