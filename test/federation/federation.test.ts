import http from 'node:http';
import { createMemoryLogger } from '../../src/log/logger';
import { createFederation, type Federation } from '../../src/federation/federation';
import type { RemoteAgent } from '../../src/agent/agent';
import { closeServer, deadPort, listen, startPeer } from '../support/federationPeers';
import { baseOptions, drain, entries, logged } from '../support/federationRun';

/** Resolves with the next agent set the federation announces, or rejects after `ms`. */
function nextChange(federation: Federation, ms = 20_000): Promise<RemoteAgent[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no federation change within ${ms} ms`)), ms);
    const off = federation.onChange((agents) => {
      clearTimeout(timer);
      off();
      resolve(agents);
    });
  });
}

describe('federation health over time', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });

  it('lets a peer that comes up after the hub join the tree without a restart', async () => {
    const port = await deadPort();
    const logger = createMemoryLogger();
    const federation = createFederation({
      ...baseOptions(logger),
      entries: entries({ name: 'late', baseUrl: `http://127.0.0.1:${port}` }),
      circuit: { baseBackoffMs: 150, maxBackoffMs: 400 },
    });
    open.push(federation);
    await federation.start();
    expect(federation.agents()).toEqual([]);
    expect(federation.status()).toEqual([
      expect.objectContaining({
        name: 'late',
        state: 'skipped',
        reason: expect.stringContaining('ECONNREFUSED'),
        nextProbeAt: expect.any(String),
      }),
    ]);
    expect(logged(logger, 'warn', 'remote agent skipped')[0].meta).toMatchObject({ name: 'late' });

    const changed = nextChange(federation);
    open.push(await startPeer({ port, behaviour: 'echo' }));
    const agents = await changed;
    expect(agents.map((a) => a.name)).toEqual(['late']);
    expect(federation.status()[0]).toMatchObject({
      state: 'healthy',
      protocolVersion: '1.0',
      latencyMs: expect.any(Number),
    });
    expect(federation.card('late')?.supportedInterfaces).toContainEqual(
      expect.objectContaining({ url: `http://127.0.0.1:${port}/`, protocolVersion: '1.0' }),
    );
    expect(logged(logger, 'info', 'remote agent joined')[0].meta).toMatchObject({ name: 'late' });
    expect((await drain(agents[0], { text: 'made it' })).outcome).toEqual({
      status: 'completed',
      text: 'echo: made it',
    });
  });

  it('opens the circuit after consecutive failures, drops the peer from the tree, and closes it when a probe succeeds', async () => {
    const first = await startPeer({ behaviour: 'echo' });
    const logger = createMemoryLogger();
    const federation = createFederation({
      ...baseOptions(logger),
      entries: entries({ name: 'flaky', baseUrl: first.url }),
      circuit: { failureThreshold: 2, baseBackoffMs: 300, maxBackoffMs: 1000 },
    });
    open.push(federation);
    await federation.start();
    const [agent] = federation.agents();
    await first.close();

    const dropped = nextChange(federation);
    const one = await drain(agent, { text: 'are you there?' });
    expect(one.outcome).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^remote agent flaky unreachable/),
    });
    expect(federation.status()[0]).toMatchObject({ state: 'healthy', failures: 1 });
    await drain(agent, { text: 'hello?' });
    expect(await dropped).toEqual([]);
    expect(federation.status()[0]).toMatchObject({
      state: 'open',
      failures: 2,
      lastError: expect.stringMatching(/^unreachable/),
    });
    expect(logged(logger, 'warn', 'circuit opened')[0].meta).toMatchObject({ name: 'flaky', failures: 2 });

    const back = nextChange(federation);
    open.push(await startPeer({ port: first.port, behaviour: 'echo' }));
    expect((await back).map((a) => a.name)).toEqual(['flaky']);
    expect(federation.status()[0]).toMatchObject({ state: 'healthy', failures: 0 });
    expect(logged(logger, 'info', 'circuit closed')).toHaveLength(1);
  });

  it('does not count a remote task that failed on its own as a peer failure', async () => {
    const p = await startPeer({ behaviour: 'forward' }); // no onward agent: every task fails, the peer is fine
    open.push(p);
    const federation = createFederation({
      ...baseOptions(),
      entries: entries({ name: 'relay', baseUrl: p.url }),
      circuit: { failureThreshold: 1 },
    });
    open.push(federation);
    await federation.start();
    const { outcome } = await drain(federation.agents()[0], { text: 'go' });
    expect(outcome).toEqual({
      status: 'failed',
      reason: 'remote agent relay ended the task as failed: no onward agent',
    });
    expect(federation.status()[0]).toMatchObject({ state: 'healthy', failures: 0 });
    expect(federation.agents()).toHaveLength(1);
  });

  it('stops probing after close: a peer coming up later is never contacted', async () => {
    const port = await deadPort();
    const logger = createMemoryLogger();
    const federation = createFederation({
      ...baseOptions(logger),
      entries: entries({ name: 'a', baseUrl: `http://127.0.0.1:${port}` }),
      circuit: { baseBackoffMs: 100 },
    });
    await federation.start();
    const due = Date.parse(federation.status()[0].nextProbeAt!);
    await federation.close();
    expect(federation.status()[0]).toMatchObject({ state: 'skipped', nextProbeAt: undefined });
    // Where the peer comes up, every request is seen (its card fetch is what a probe sends).
    const seen: string[] = [];
    const p = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
      seen.push(req.url ?? '');
      res.writeHead(404).end();
    }, port);
    open.push({ close: () => closeServer(p.server) });
    // The probe was due by `due`: a timer set to fire after that fires after the probe's would have, and the
    // test's own request, sent then, is answered after a probe's request would have arrived.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 1));
    await fetch(`${p.origin}/after-the-probe`);
    expect(seen).toEqual(['/after-the-probe']);
    expect(logged(logger, 'info', 'remote agent joined')).toEqual([]);
  });
});
