/**
 * How long the node takes to notice what the tests only check it notices
 * (issue 36: speed is the bench's, never a test's): a remote peer going
 * down and coming back (issue 28's "within one probe interval"), and a
 * replica through a PostgreSQL outage (unready within 5 s, a send refused
 * at once, ready within 15 s of the database's return).
 * `npm run bench -- peerHealth databaseOutage`.
 */
import { performance } from 'node:perf_hooks';
import { sendText } from '../../test/support/cluster';
import { startPeer, type TestPeer } from '../../test/support/federationPeers';
import { probe } from '../../test/support/httpProbe';
import { postgresUnavailable } from '../../test/support/postgres';
import { startReplica, withDatabase, withPostgres } from './cluster';
import { nodeSpec, settings, withServer, type ScenarioResult } from './scenarios';
import { median } from './stats';

const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : 'n/a');

/** Polls `check` every `everyMs` until it holds (or `limitMs` passes: then throws naming `what`); resolves with the ms it took. */
async function timeUntil(check: () => Promise<boolean>, what: string, limitMs = 60_000, everyMs = 5): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The probe interval the peerHealth scenario configures. */
const PROBE_INTERVAL_MS = 1_000;

/**
 * Peer health: a node with one remote agent probed every second; the peer
 * is closed (time until the node's public catalog says `down`) and started
 * again on its port (time until `healthy`), `settings.runs` times.
 */
export async function peerHealth(): Promise<ScenarioResult> {
  let peer: TestPeer = await startPeer({ name: 'weather', behaviour: 'echo' });
  const port = peer.port;
  const down: number[] = [];
  const back: number[] = [];
  try {
    const remote = { a2a: { peerHealth: { probeInterval: `${PROBE_INTERVAL_MS}ms` } } };
    const spec = nodeSpec({
      EXTRA_CONFIG: JSON.stringify({
        ...remote,
        a2a: { ...remote.a2a, remoteAgents: [{ name: 'weather', baseUrl: peer.url }] },
      }),
    });
    await withServer(spec, async (server) => {
      const state = async () => {
        const catalog = (await (await fetch(`${server.url}/agents`)).json()) as {
          agents: { name: string; health?: { state: string } }[];
        };
        return catalog.agents.find((a) => a.name === 'weather')?.health?.state;
      };
      await timeUntil(async () => (await state()) === 'healthy', 'the peer healthy at start');
      for (let run = 0; run < settings.runs; run++) {
        await peer.close();
        down.push(await timeUntil(async () => (await state()) === 'down', 'the closed peer marked down'));
        peer = await startPeer({ name: 'weather', behaviour: 'echo', port });
        back.push(await timeUntil(async () => (await state()) === 'healthy', 'the returned peer healthy'));
      }
    });
  } finally {
    await peer.close();
  }
  // A probe of a refused connection takes a few milliseconds, the catalog is read every 5.
  const bound = PROBE_INTERVAL_MS + 100;
  const worst = Math.max(...down, ...back);
  return {
    id: 'peerHealth',
    title: `peer health: a remote peer closed → down in the catalog, started again → healthy (probe every ${PROBE_INTERVAL_MS} ms)`,
    target: `each ≤ one probe interval (${bound} ms with the probe and the polling)`,
    baseline: '—',
    node: `down: median ${fmt(median(down))} ms, max ${fmt(Math.max(...down))} ms; back: median ${fmt(median(back))} ms, max ${fmt(Math.max(...back))} ms`,
    ratio: `${(worst / PROBE_INTERVAL_MS).toFixed(2)} × interval (max)`,
    met: worst <= bound,
    notes: [
      `per run, down: ${down.map(fmt).join(', ')} ms; back: ${back.map(fmt).join(', ')} ms (catalog polled every 5 ms)`,
    ],
  };
}

/**
 * A PostgreSQL outage under one replica: the server halted (time until
 * `/readyz` answers 503 to a probe as haproxy sends it, then how long a send
 * takes to be refused), then resumed (time until `/readyz` answers 200),
 * `settings.runs` times.
 */
export async function databaseOutage(): Promise<ScenarioResult> {
  const unready: number[] = [];
  const refused: number[] = [];
  const ready: number[] = [];
  await withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const replica = await startReplica(databaseUrl, 'outage');
      try {
        const port = Number(new URL(replica.url).port);
        const readiness = async (status: number) => (await probe(port, { path: '/readyz' })).status === status;
        for (let run = 0; run < settings.runs; run++) {
          await pg.halt();
          unready.push(await timeUntil(() => readiness(503), 'the replica unready'));
          const sentAt = performance.now();
          const answer = await sendText(replica.url, 'hi');
          refused.push(performance.now() - sentAt);
          if (!answer.body.error) throw new Error('a send was answered while the database was down');
          await pg.resume();
          ready.push(await timeUntil(() => readiness(200), 'the replica ready again'));
        }
      } finally {
        await replica.stop();
      }
    }),
  );
  const met = Math.max(...unready) <= 5_000 && Math.max(...refused) <= 5_000 && Math.max(...ready) <= 15_000;
  return {
    id: 'databaseOutage',
    title: 'a PostgreSQL outage: database halted → replica unready, a send refused; database back → ready',
    target: 'unready ≤ 5 s, refused ≤ 5 s, ready ≤ 15 s of the return',
    baseline: '—',
    node: `unready max ${fmt(Math.max(...unready))} ms, refused max ${fmt(Math.max(...refused))} ms, ready max ${fmt(Math.max(...ready))} ms`,
    ratio: `${Math.max(Math.max(...unready) / 5_000, Math.max(...refused) / 5_000, Math.max(...ready) / 15_000).toFixed(2)} × its target (the worst of the three)`,
    met,
    notes: [
      `per outage, unready: ${unready.map(fmt).join(', ')} ms; refused: ${refused.map(fmt).join(', ')} ms; ready: ${ready.map(fmt).join(', ')} ms`,
      '/readyz probed every 5 ms as haproxy probes (HTTP/1.0, no Host)',
    ],
  };
}
