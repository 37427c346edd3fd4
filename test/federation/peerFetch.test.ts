import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { DEFAULT_PEER_LIMITS, PeerCallMeters } from '../../src/federation/peerCallMeter';
import { createPeerFetch } from '../../src/federation/peerFetch';

/**
 * One peer fetch serves every call to a pinned card (issue 15, the hop):
 * each request finds its call's meter by the call's abort signal, so one
 * call's fault is named on that call alone, a request outside every call
 * never leaves, and the bounds hold on a body the peer compressed unasked.
 */

let server: http.Server;
let url: string;
let hits = 0;
const dispatcher = new Agent();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits += 1;
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      if (method === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('<<<garbage>>>');
      } else if (method === 'gzip-stream') {
        const events = [1, 2, 3].map((n) => `data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { n } })}\n\n`);
        res
          .writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' })
          .end(gzipSync(events.join('')));
      } else {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id, result: {} }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await dispatcher.close();
  await new Promise((resolve) => server.close(resolve));
});

function peerFetch(maxEvents = DEFAULT_PEER_LIMITS.maxEvents) {
  const meters = new PeerCallMeters();
  const fetchImpl = createPeerFetch({
    dispatcher,
    limits: { ...DEFAULT_PEER_LIMITS, maxEvents, maxDurationMs: 20_000 },
    meters,
    legacy: false,
    onDeviation: () => undefined,
  });
  const post = (method: string, signal: AbortSignal) =>
    fetchImpl(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method }),
      signal,
    });
  return { meters, post };
}

it('names each call by what its own requests saw, with one fetch serving both at once', async () => {
  const { meters, post } = peerFetch();
  const good = AbortSignal.timeout(20_000);
  const bad = AbortSignal.timeout(20_000);
  const goodMeter = meters.start(good);
  const badMeter = meters.start(bad);
  const [fine, broken] = await Promise.allSettled([post('ok', good), post('garbage', bad)]);
  expect(fine.status).toBe('fulfilled');
  expect(broken).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/not JSON/) } });
  expect(goodMeter).toMatchObject({ responded: true, invalid: undefined });
  expect(badMeter.invalid).toMatch(/^not JSON \(starts "<<<garbage>>>"\)$/);
});

it('refuses a request that belongs to no call before it leaves', async () => {
  const { post } = peerFetch();
  const before = hits;
  await expect(post('ok', AbortSignal.timeout(20_000))).rejects.toThrow(/outside a delegated call/);
  expect(hits).toBe(before);
});

it('decodes a stream the peer compressed unasked and still counts its events against the cap', async () => {
  const within = peerFetch();
  const signal = AbortSignal.timeout(20_000);
  within.meters.start(signal);
  const text = await (await within.post('gzip-stream', signal)).text();
  expect(text.match(/^data: /gm)).toHaveLength(3);
  expect(text).toContain('"result":{"n":3}');

  const capped = peerFetch(2);
  const cappedSignal = AbortSignal.timeout(20_000);
  const meter = capped.meters.start(cappedSignal);
  const response = await capped.post('gzip-stream', cappedSignal);
  await expect(response.text()).rejects.toThrow(/more than a2a\.peerLimits\.maxEvents \(2\)/);
  expect(meter.invalid).toMatch(/maxEvents/);
});
