import fs from 'node:fs';
import { cliWorkdir, runCliInProcess, startServe, type CliProcess } from '../support/cliProcess';
import { startPeer, type TestPeer } from '../support/federationPeers';
import { waitFor } from '../support/waitFor';

jest.setTimeout(120_000);

const lango = runCliInProcess;
const INTERVAL_MS = 1000;

/** The health the serving node's public catalog shows for `name` (reading it probes nothing). */
async function catalogState(url: string, name: string): Promise<string | undefined> {
  const catalog = (await (await fetch(`${url}/agents`)).json()) as {
    agents: { name: string; health?: { state: string } }[];
  };
  return catalog.agents.find((agent) => agent.name === name)?.health?.state;
}

/**
 * Issue 28, acceptance: a peer killed mid-session, as the CLI sees it through the node that serves. That the
 * probe that finds it down or back is never more than one interval away is checked on the federation itself
 * (test/federation/activeHealth.test.ts); how long it takes is the bench's `peerHealth` figure.
 */
describe('a remote agent killed mid-session', () => {
  let cwd: string;
  let serve: CliProcess | undefined;
  const peers: TestPeer[] = [];
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
    while (peers.length) await peers.pop()!.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('is marked down by a probe with no call made, answered as unavailable, and used again once it returns', async () => {
    const peer = await startPeer({ name: 'weather', behaviour: 'echo' });
    cwd = cliWorkdir(
      `a2a:\n  peerHealth:\n    probeInterval: ${INTERVAL_MS}ms\n  remoteAgents:\n` +
        `    - { name: weather, baseUrl: "${peer.url}" }\n`,
    );
    const started = await startServe(cwd);
    serve = started.serve;
    const healthy = await lango(['agents', '--check'], cwd);
    expect(healthy.code).toBe(0);
    expect(healthy.out).toMatch(/^ {2}weather +healthy +http:\/\/127\.0\.0\.1:\d+\//m);

    await peer.close();
    await waitFor(async () => (await catalogState(started.url, 'weather')) === 'down', 30_000, 'weather down');
    // Nothing was asked of the peer: no call failed first.
    expect(peer.requests).toEqual([]);

    const down = await lango(['agents', '--check'], cwd);
    expect(down.code).toBe(1);
    expect(down.out).toMatch(/^ {2}weather +down +http:\/\/127\.0\.0\.1:\d+\/\S* \(.*last error: card unreachable/m);

    const unavailable = await lango(['chat', 'weather: will it rain tomorrow?'], cwd);
    expect(unavailable.code).toBe(0);
    expect(unavailable.out).toMatch(/weather is unavailable: its card has not answered since \d\d:\d\d; retrying/);
    expect(unavailable.out).not.toContain('Nothing in your message matched');

    const back = await startPeer({ name: 'weather', behaviour: 'echo', port: peer.port });
    peers.push(back);
    await waitFor(async () => (await catalogState(started.url, 'weather')) === 'healthy', 30_000, 'weather back');
    const used = await lango(['chat', 'weather: will it rain tomorrow?'], cwd);
    expect(used.code).toBe(0);
    expect(used.out).toContain('echo: weather: will it rain tomorrow?');
    expect(back.requests.map((r) => r.method)).toEqual(['SendStreamingMessage']);
    expect((await lango(['agents', '--check'], cwd)).code).toBe(0);
  });
});
