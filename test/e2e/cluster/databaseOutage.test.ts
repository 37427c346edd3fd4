import { randomUUID } from 'node:crypto';
import { answerOf, rpc, sendText, startCluster, type TestCluster } from '../../support/cluster';
import { skipWithoutCluster } from '../../support/prerequisites';
import { probe } from '../../support/httpProbe';
import { startTestPostgres, type TestPostgres } from '../../support/postgres';
import { waitFor } from '../../support/waitFor';

/**
 * Two `lango serve` replicas on one PostgreSQL behind haproxy, checked the
 * way haproxy checks by default (`option httpchk GET /readyz`: HTTP/1.0, no
 * Host), when the database stops and comes back: each replica says it is
 * unready, answers a send with an error saying so, keeps running, and is
 * ready and serving again once the database returns. How soon (unready
 * within 5 s, a send refused at once, ready within 15 s of the return) is
 * the bench's databaseOutage figure.
 */
describe('replicas through a PostgreSQL outage', () => {
  if (skipWithoutCluster('the database outage of a cluster')) return;

  let pg: TestPostgres;
  let cluster: TestCluster;
  beforeAll(async () => {
    pg = await startTestPostgres();
    cluster = await startCluster({ replicas: 2, postgres: pg });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
    await pg?.stop();
  }, 60_000);

  const portOf = (i: number) => Number(new URL(cluster.replicaUrl(i)).port);
  const alive = (i: number) => cluster.replica(i)?.child.exitCode === null;
  /** Waits until replica `i`'s readiness is `status`. */
  const readinessIs = (i: number, status: 200 | 503) =>
    waitFor(async () => (await probe(portOf(i), { path: '/readyz' })).status === status, 30_000, `r${i} ${status}`);

  it('answers probes with no Host or a pod address, and nothing else without a proper Host', async () => {
    // haproxy itself saw both replicas up with its default check, or the cluster would not have started.
    expect(await cluster.balancerStatus()).toEqual({ r0: 'UP', r1: 'UP' });
    for (const path of ['/healthz', '/readyz']) {
      expect((await probe(portOf(0), { path })).status).toBe(200);
      expect((await probe(portOf(0), { path, version: '1.1', host: '10.1.2.3:4000' })).status).toBe(200);
    }
    const ready = await probe(portOf(0), { path: '/readyz' });
    expect(JSON.parse(ready.body)).toEqual({ status: 'ready', checks: { database: 'ok', tree: 'ok' } });
    for (const path of ['/.well-known/agent-card.json', '/agents', '/tasks', '/metrics']) {
      expect((await probe(portOf(0), { path })).status).toBe(421);
      expect((await probe(portOf(0), { path, version: '1.1', host: '10.1.2.3:4000' })).status).toBe(421);
    }
  });

  it('is unready while the database is stopped, refuses sends, lives, and serves again once it returns', async () => {
    expect(answerOf(await sendText(cluster.balancerUrl, 'hi')).length).toBeGreaterThan(0);

    await pg.halt();
    await Promise.all([0, 1].map((i) => readinessIs(i, 503)));
    const probed = await probe(portOf(0), { path: '/readyz' });
    expect(JSON.parse(probed.body)).toEqual({ status: 'not ready', checks: { database: 'unavailable', tree: 'ok' } });
    await waitFor(
      async () => Object.values(await cluster.balancerStatus()).every((state) => state === 'DOWN'),
      20_000,
      'haproxy to take both replicas out',
    );

    // Sent to a replica directly (haproxy has none to send to): a clear error on both bindings.
    const refused = await sendText(cluster.replicaUrl(0), 'hi');
    expect(refused.body.error).toEqual({
      code: -32603,
      message: "the node's database does not answer now; try again shortly (another replica may serve it)",
      data: [expect.objectContaining({ reason: 'STORAGE_UNAVAILABLE' })],
    });
    const rest = await fetch(`${cluster.replicaUrl(1)}/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } }),
    });
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('5');
    expect(((await rest.json()) as { error: { status: string } }).error.status).toBe('UNAVAILABLE');
    const read = await rpc(cluster.replicaUrl(1), 'GetTask', { id: randomUUID() });
    expect(read.body.error?.message).toMatch(/database does not answer/);
    expect([alive(0), alive(1)]).toEqual([true, true]);

    await pg.resume();
    await Promise.all([0, 1].map((i) => readinessIs(i, 200)));
    await waitFor(
      async () => Object.values(await cluster.balancerStatus()).every((state) => state === 'UP'),
      20_000,
      'haproxy to take both replicas back',
    );
    const answers = [await sendText(cluster.balancerUrl, 'hi'), await sendText(cluster.balancerUrl, 'hi')];
    expect(answers.map((a) => [a.status, answerOf(a).length > 0])).toEqual([
      [200, true],
      [200, true],
    ]);
    expect(new Set(answers.map((a) => a.servedBy))).toEqual(new Set(['r0', 'r1']));
    expect([alive(0), alive(1)]).toEqual([true, true]);
  }, 90_000);
});
