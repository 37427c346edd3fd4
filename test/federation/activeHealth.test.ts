import { createMemoryLogger } from '../../src/log/logger';
import { createFederation, type Federation } from '../../src/federation/federation';
import { jittered, unavailableReason, type PeerStatus } from '../../src/federation/health';
import { deadPort, startPeer, type TestPeer } from '../support/federationPeers';
import { baseOptions, drain, entries, logged } from '../support/federationRun';
import { waitFor } from '../support/waitFor';

/** Issue 28: a peer that stops answering is known to be down before any call to it fails. */
describe('active health of remote agents', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  const INTERVAL = 800;

  async function federationOf(peer: TestPeer, logger = createMemoryLogger()): Promise<Federation> {
    const federation = createFederation({
      ...baseOptions(logger),
      entries: entries({ name: 'weather', baseUrl: peer.url, description: 'Forecasts the weather' }),
      probeIntervalMs: INTERVAL,
      circuit: { baseBackoffMs: 60_000 },
    });
    open.push(federation);
    await federation.start();
    return federation;
  }

  it('marks a peer that stops answering down within one interval, with no call made, and answers for it that it is unavailable', async () => {
    const peer = await startPeer({ behaviour: 'echo' });
    const logger = createMemoryLogger();
    const federation = await federationOf(peer, logger);
    expect(federation.status()[0]).toMatchObject({ state: 'healthy', nextProbeAt: expect.any(String) });
    // Within one interval: the next probe is never further away than that, and the first probe after the close
    // marks the peer down (one failure; the probe's time is the time it went down), without a call.
    expect(Date.parse(federation.status()[0].nextProbeAt!)).toBeLessThanOrEqual(Date.now() + INTERVAL);
    let changes = 0;
    const wentDown = new Promise<PeerStatus>((resolve) =>
      federation.onChange(() => {
        changes++;
        resolve(federation.status()[0]);
      }),
    );

    await peer.close();
    const status = await wentDown;
    expect(peer.requests).toEqual([]);
    expect(federation.agents()).toEqual([]);
    expect(status).toMatchObject({
      state: 'down',
      since: status.lastProbe?.at,
      failures: 1,
      lastError: expect.stringMatching(/^card unreachable: .*ECONNREFUSED/),
      lastProbe: { ok: false, at: expect.any(String) },
    });
    expect(changes).toBe(1);
    expect(logged(logger, 'warn', 'remote agent down')[0].meta).toMatchObject({ name: 'weather' });

    // The tree still holds it, as a stand-in that says why, at once and without the network.
    const [standIn] = federation.routable();
    expect(standIn).toMatchObject({ name: 'weather', kind: 'remote' });
    expect(standIn.description).toMatch(/^Unavailable now \(retrying\)\. Forecasts the weather/);
    const { outcome, events } = await drain(standIn, { text: 'rain tomorrow?' });
    expect(events).toEqual([]);
    const since = new Date(status.since as string);
    const hhmm = `${String(since.getHours()).padStart(2, '0')}:${String(since.getMinutes()).padStart(2, '0')}`;
    expect(outcome).toEqual({
      status: 'failed',
      reason: `weather is unavailable: its card has not answered since ${hhmm}; retrying`,
    });
  });

  it('uses a peer again within one interval of its return', async () => {
    const peer = await startPeer({ behaviour: 'echo' });
    const federation = await federationOf(peer);
    await peer.close();
    await waitFor(() => federation.status()[0].state === 'down', 20_000, 'the peer marked down');
    // Within one interval: a down peer's next probe is never further away than that (its 60 s backoff is
    // capped), and that probe, the first after the peer's return, finds it back.
    const nextProbeAt = await waitFor(() => federation.status()[0].nextProbeAt, 20_000, 'the next probe scheduled');
    expect(Date.parse(nextProbeAt)).toBeLessThanOrEqual(Date.now() + INTERVAL);
    const cameBack = new Promise<PeerStatus>((resolve) => federation.onChange(() => resolve(federation.status()[0])));

    const back = await startPeer({ behaviour: 'echo', port: peer.port });
    open.push(back);
    expect(await cameBack).toMatchObject({ state: 'healthy', lastProbe: { ok: true } });
    const [agent] = federation.routable();
    expect(federation.agents()).toEqual([agent]);
    expect((await drain(agent, { text: 'back?' })).outcome).toEqual({ status: 'completed', text: 'echo: back?' });
    expect(federation.status()[0]).toMatchObject({ state: 'healthy', since: undefined, lastProbe: { ok: true } });
  });

  it('probes at once when asked, and a skipped peer is a stand-in too', async () => {
    const port = await deadPort();
    const federation = createFederation({
      ...baseOptions(),
      entries: entries(
        { name: 'late', baseUrl: `http://127.0.0.1:${port}` },
        { name: 'off', baseUrl: `http://127.0.0.1:${port}`, enabled: false },
      ),
      probeIntervalMs: 60_000,
    });
    open.push(federation);
    await federation.start();
    // Disabled by config: not in the tree; skipped but retried: a stand-in.
    expect(federation.routable().map((a) => a.name)).toEqual(['late']);
    expect((await drain(federation.routable()[0], { text: 'hi' })).outcome).toEqual({
      status: 'failed',
      reason: expect.stringMatching(/^late is unavailable: its card has not answered since \d\d:\d\d; retrying$/),
    });

    const peer = await startPeer({ port, behaviour: 'echo' });
    open.push(peer);
    const statuses = await federation.probe('late');
    expect(statuses.map((s) => [s.name, s.state])).toEqual([
      ['late', 'healthy'],
      ['off', 'skipped'],
    ]);
    expect(federation.agents().map((a) => a.name)).toEqual(['late']);
  });

  it('says why for each kind of outage', () => {
    const since = new Date(2026, 0, 1, 12, 3).toISOString();
    const base = { name: 'weather', cardUrl: 'http://x/', failures: 3, since };
    expect(unavailableReason({ ...base, state: 'open', lastError: 'timed out after 5000 ms' })).toBe(
      'weather is unavailable: its calls have failed since 12:03 (timed out after 5000 ms); retrying',
    );
    expect(unavailableReason({ ...base, state: 'skipped', lastError: 'malformed card: name: required' })).toBe(
      'weather is unavailable: its card could not be used since 12:03 (malformed card: name: required); retrying',
    );
    expect(unavailableReason({ ...base, state: 'down', lastError: 'card timed out after 5000 ms' })).toBe(
      'weather is unavailable: its card has not answered since 12:03; retrying',
    );
    // Jitter only shortens the wait, by at most a fifth.
    expect([jittered(1000, () => 0), jittered(1000, () => 0.999)]).toEqual([1000, 800]);
  });
});
