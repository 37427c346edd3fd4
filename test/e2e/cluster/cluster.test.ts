import { answerOf, offlineToolResult as tool, sendText, startCluster, type TestCluster } from '../../support/cluster';
import { skipWithoutCluster } from '../../support/prerequisites';
import { Client } from 'pg';
import { waitFor } from '../../support/waitFor';

/**
 * Three `lango serve` replicas on one PostgreSQL database behind haproxy
 * (round robin, health check on /readyz, no retries), the offline model, a
 * 3 s lease with a 1 s heartbeat. One cluster for the whole file (starting
 * one costs seconds of a 2-core machine); the test that kills a replica runs
 * last.
 */
describe('three replicas behind haproxy', () => {
  if (skipWithoutCluster('the three-replica cluster')) return;

  const LEASE_MS = 3_000;
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster({ replicas: 3, lease: `${LEASE_MS / 1000}s`, heartbeatInterval: '1s' });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  /** When the every-minute cron job was added (the first test adds it; the last counts its runs). */
  let cronAddedAt: number;

  it('spreads requests over all three replicas, each answering', async () => {
    cronAddedAt = Date.now();
    const added = await tool(
      cluster.replicaUrl(0),
      'cron_add {"name": "minutely", "schedule": "* * * * *", "prompt": "hi"}',
    );
    expect(added.added).toBe('minutely');

    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await sendText(cluster.balancerUrl, 'hi'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.servedBy))).toEqual(new Set(['r0', 'r1', 'r2']));
    for (const answer of answers) expect(answerOf(answer).length).toBeGreaterThan(0);
  });

  it('shows a background job submitted through one replica, and its result, through every other', async () => {
    const submitted = await tool(cluster.replicaUrl(0), 'bg_submit {"prompt": "hi", "label": "shared"}');
    const id = String(submitted.id);
    for (const i of [1, 2]) {
      const result = await waitFor(
        async () => {
          const found = await tool(cluster.replicaUrl(i), `bg_result {"id": "${id}"}`);
          return found.status === 'completed' && found;
        },
        20_000,
        `the job to be completed as seen by replica ${i}`,
      );
      expect(String(result.result).length).toBeGreaterThan(0);
    }
  });

  // Bounded by its own waits (a restart may take 60 s to answer /readyz), not jest's default 30 s: a replica
  // restarting on two cores at load ~14 outlasted that while two senders kept the others busy.
  it('restarts a replica drained in haproxy while requests keep coming, none failing', async () => {
    let sending = true;
    const outcomes: string[] = [];
    const sender = async () => {
      while (sending) {
        // Not `instanceof Error`: fetch's errors come from outside jest's realm.
        const answer = await sendText(cluster.balancerUrl, 'hi').catch((err: Error) => ({ failure: err }));
        outcomes.push(
          'failure' in answer
            ? `error ${String(answer.failure.message)} ${String((answer.failure.cause as Error | undefined)?.message)}`
            : answer.status === 200 && !answer.body.error
              ? String(answer.servedBy)
              : `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`,
        );
      }
    };
    const senders = [sender(), sender()];
    try {
      await waitFor(() => outcomes.includes('r1'), 20_000, 'r1 to serve a request');
      await cluster.setBalancerState(1, 'drain');
      // A stopping node ends the connections it still has: its requests in flight finish first.
      await waitFor(async () => (await cluster.inFlight(1)) === 0, 20_000, 'r1 to finish its requests');
      await cluster.killReplica(1, 'SIGTERM');
      const whileDown = outcomes.length;
      await cluster.startReplica(1);
      await cluster.setBalancerState(1, 'ready');
      await waitFor(() => outcomes.slice(whileDown).includes('r1'), 20_000, 'the restarted r1 to serve again');
    } finally {
      sending = false;
      await Promise.all(senders);
    }
    const failed = outcomes.filter((o) => !/^r\d$/.test(o));
    expect(failed).toEqual([]);
    expect(new Set(outcomes)).toEqual(new Set(['r0', 'r1', 'r2']));
  }, 120_000);

  // How soon after the kill (target: within the lease and two beats) is the bench's replicaLoss figure.
  it('fails the running job of a replica killed -9 with "replica lost", and haproxy takes it out', async () => {
    const submitted = await tool(
      cluster.replicaUrl(2),
      'bg_submit {"prompt": "exec_shell {\\"command\\": \\"sleep 20\\"}", "label": "slow"}',
    );
    const id = String(submitted.id);
    await waitFor(
      async () => (await tool(cluster.replicaUrl(0), `bg_status {"id": "${id}"}`)).status === 'running',
      20_000,
      'the slow job to run on replica 2',
    );

    await cluster.killReplica(2, 'SIGKILL');
    const lost = await waitFor(
      async () => {
        const found = await tool(cluster.replicaUrl(0), `bg_result {"id": "${id}"}`);
        return found.status === 'failed' && found;
      },
      LEASE_MS + 20_000,
      'the killed replica’s job to fail',
    );
    expect(lost.result).toBe('replica lost');

    await waitFor(async () => (await cluster.balancerStatus()).r2 === 'DOWN', 20_000, 'haproxy to take r2 out');
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await sendText(cluster.balancerUrl, 'hi'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.servedBy))).toEqual(new Set(['r0', 'r1']));
  });

  it('runs an every-minute cron job exactly three times in three minutes, across a replica restart and a kill', async () => {
    const firstMinute = Math.ceil(cronAddedAt / 60_000) * 60_000;
    const minutes = [0, 1, 2].map((m) => firstMinute + m * 60_000);
    // The rows themselves: every run any replica started, whatever it answered.
    const runs = async () => {
      const db = new Client({ connectionString: cluster.databaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query<{
          scheduled_for: string;
          started_at: string;
          trigger: string;
          replica: string;
        }>(`SELECT scheduled_for, started_at, trigger, replica FROM cron_runs WHERE job_name = 'minutely'`);
        return rows;
      } finally {
        await db.end();
      }
    };
    await waitFor(
      async () => (await runs()).some((r) => Date.parse(r.scheduled_for) === minutes[2]),
      Math.max(0, minutes[2] - Date.now()) + 30_000,
      'the run of the third minute',
    );
    const inWindow = (await runs()).filter((r) => Date.parse(r.scheduled_for) < firstMinute + 180_000);
    const lateness = inWindow.map((r) => Date.parse(r.started_at) - Date.parse(r.scheduled_for));
    process.stderr.write(
      `cron runs: ${inWindow.map((r, i) => `${r.scheduled_for} on ${r.replica}, ${lateness[i]} ms late`).join('; ')}\n`,
    );
    expect(inWindow.map((r) => [Date.parse(r.scheduled_for), r.trigger]).sort()).toEqual(
      minutes.map((m) => [m, 'schedule']),
    );
  }, 240_000);
});
