import fs from 'node:fs';
import path from 'node:path';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { Client as PgClient } from 'pg';
import { a2aClient, textRequest } from '../../support/a2aClient';
import {
  offlineToolResult as tool,
  rpc,
  SERVED_BY,
  skipWithoutCluster,
  startCluster,
  type TestCluster,
} from '../../support/cluster';
import { processEnded as ended, processesWith } from '../../support/processes';
import { holdsFor, waitFor } from '../../support/waitFor';

/**
 * What issue 16 asks of three replicas behind haproxy when something goes
 * wrong: a cancel received by one replica stops the tool another is
 * running; a replica killed -9 mid-stream leaves its task failed "replica
 * lost" for every other replica within the lease; a background job queued
 * on a replica killed before it starts runs exactly once elsewhere. One
 * cluster for the file (the offline model, a 3 s lease, one background slot
 * per replica); the tests that kill replicas run last.
 */
describe('three replicas behind haproxy, failing over', () => {
  if (skipWithoutCluster('the cluster failover tests')) return;

  const LEASE_MS = 3_000;
  const HEARTBEAT_MS = 1_000;
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster({
      replicas: 3,
      lease: `${LEASE_MS / 1000}s`,
      heartbeatInterval: `${HEARTBEAT_MS / 1000}s`,
      extraConfig: 'background:\n  concurrency: 1',
    });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  /** The task id a stream's first event names. */
  const taskIdOf = (event: StreamResponse): string => {
    const payload = event.payload;
    if (payload?.$case === 'task') return payload.value.id;
    if (payload?.$case === 'statusUpdate') return payload.value.taskId;
    throw new Error(`no task in the stream's first event: ${JSON.stringify(event)}`);
  };

  /** A task's state and status text through the replica or balancer at `url` (GetTask, JSON-RPC). */
  const taskThrough = async (url: string, id: string) => {
    const answer = await rpc(url, 'GetTask', { id });
    if (answer.body.error) throw new Error(`GetTask: ${answer.body.error.message}`);
    const status = (answer.body.result as { status?: { state?: string; message?: { parts?: { text?: string }[] } } })
      .status;
    return {
      state: status?.state,
      text: (status?.message?.parts ?? []).map((p) => p.text ?? '').join(''),
      servedBy: answer.servedBy,
    };
  };

  it('stops a command running on A within 100 ms (median of five) when the task is canceled through C', async () => {
    const tries = 5;
    const gone: number[] = [];
    const answered: number[] = [];
    for (let n = 1; n <= tries; n++) {
      // An unusual length per try names its process.
      const command = `sleep 23.${n}`;
      const onA = await a2aClient(cluster.replicaUrl(0), 'JSONRPC');
      const stream = onA.sendMessageStream(textRequest(`exec_shell {"command": "${command}"}`));
      const first = await stream.next();
      const taskId = taskIdOf(first.value as StreamResponse);
      const pid = await waitFor(() => processesWith(command)[0], 15_000, `"${command}" to run on A`);
      let lastState: TaskState | undefined;
      const drained = (async () => {
        for await (const event of stream) {
          if (event.payload?.$case === 'statusUpdate') lastState = event.payload.value.status?.state;
          if (event.payload?.$case === 'task') lastState = event.payload.value.status?.state;
        }
      })();

      // Still running when the cancel goes out: what is measured is the cancel's doing.
      await holdsFor(() => !ended(pid), 200, `"${command}" running before the cancel`);
      const sentAt = performance.now();
      const canceling = rpc(cluster.replicaUrl(2), 'CancelTask', { id: taskId }).then((answer) => {
        answered.push(performance.now() - sentAt);
        return answer;
      });
      // Polled every millisecond, not waitFor's 20: the figure is tens of milliseconds.
      await new Promise<void>((resolve, reject) => {
        const poll = () => {
          if (ended(pid)) return resolve();
          if (performance.now() - sentAt > 15_000)
            return reject(new Error(`"${command}" still runs 15 s after the cancel`));
          setTimeout(poll, 1);
        };
        poll();
      });
      gone.push(performance.now() - sentAt);
      const canceled = await canceling;
      expect(canceled.body.error).toBeUndefined();
      expect((canceled.body.result as { status?: { state?: string } }).status?.state).toBe('TASK_STATE_CANCELED');
      await drained;
      expect(lastState).toBe(TaskState.TASK_STATE_CANCELED);
      expect((await taskThrough(cluster.balancerUrl, taskId)).state).toBe('TASK_STATE_CANCELED');
    }
    const sorted = [...gone].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    process.stderr.write(
      `cancel through C → command on A gone: ${gone.map((ms) => ms.toFixed(1)).join(', ')} ms (median ${median.toFixed(1)}); ` +
        `CancelTask answered after ${answered.map((ms) => ms.toFixed(1)).join(', ')} ms\n`,
    );
    // Issue 16's figure, held as a median of five: it measured 18–25 ms (max 57 ms) with three replicas, haproxy,
    // PostgreSQL and jest on two cores at load ~10. No single try may take a second either: a median would hide
    // one cancel that went astray and reached A late.
    expect(median).toBeLessThan(100);
    expect(Math.max(...gone)).toBeLessThan(1_000);
  }, 120_000);

  /** One event of a stream as a JSON-RPC `result` (ProtoJSON of a StreamResponse) and when it came. */
  type Streamed = {
    result: Record<string, { status?: { state?: string; message?: { parts?: { text?: string }[] } } }>;
    at: number;
  };

  /**
   * A streaming JSON-RPC call (`SubscribeToTask`) to `url`, a replica or the
   * balancer: resolves once the answer is a stream (rejecting with what came
   * instead), with the events seen so far and a promise of the stream's end.
   */
  const subscribe = async (url: string, id: string) => {
    const res = await fetch(`${url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id } }),
    });
    if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream') || !res.body)
      throw new Error(`SubscribeToTask answered ${res.status}: ${await res.text()}`);
    const events: Streamed[] = [];
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const ended = (async () => {
      let buffered = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffered += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffered.indexOf('\n\n')) >= 0) {
          const data = buffered
            .slice(0, cut)
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5))
            .join('\n');
          buffered = buffered.slice(cut + 2);
          if (!data) continue;
          const message = JSON.parse(data) as { result?: Streamed['result']; error?: { message: string } };
          if (message.error) throw new Error(`stream error: ${message.error.message}`);
          events.push({ result: message.result!, at: Date.now() });
        }
      }
    })();
    return { events, ended, servedBy: res.headers.get(SERVED_BY) };
  };
  /** A stream's last status: its state and its message's text. */
  const lastStatus = (events: Streamed[]) => {
    const last = events.at(-1)?.result;
    const status = last?.statusUpdate?.status ?? last?.task?.status;
    return { state: status?.state, text: (status?.message?.parts ?? []).map((p) => p.text ?? '').join('') };
  };

  it('ends a stream followed through B, and one resubscribed through the balancer after A is killed -9, "replica lost" within the lease', async () => {
    const command = 'sleep 24.5';
    const onA = await a2aClient(cluster.replicaUrl(0), 'JSONRPC');
    const stream = onA.sendMessageStream(textRequest(`exec_shell {"command": "${command}"}`));
    const first = await stream.next();
    const taskId = taskIdOf(first.value as StreamResponse);
    const pid = await waitFor(() => processesWith(command)[0], 15_000, `"${command}" to run on A`);
    const streamEnd = (async () => {
      try {
        for await (const event of stream) void event;
        return 'ended';
      } catch (err) {
        return `broke: ${(err as Error).message}`;
      }
    })();
    // Another client already follows the task through B (B does not run it): it has the task as it is now.
    const onB = await subscribe(cluster.replicaUrl(1), taskId);
    await waitFor(() => onB.events.length > 0, 10_000, 'B’s stream to send the task');
    expect(lastStatus(onB.events).state).toBe('TASK_STATE_WORKING');

    await cluster.killReplica(0, 'SIGKILL');
    const killedAt = Date.now();
    // The caller's stream breaks with its replica (it must not hang); it resubscribes through the balancer,
    // again while haproxy still sends some requests to the dead r0 (those fail: no retries).
    expect(await streamEnd).toMatch(/^(ended|broke)/);
    const resubscribed = await waitFor(
      () => subscribe(cluster.balancerUrl, taskId).catch(() => undefined),
      LEASE_MS,
      'a resubscribe through the balancer to reach a live replica',
    );
    expect(['r1', 'r2']).toContain(resubscribed.servedBy);

    await Promise.all([onB.ended, resubscribed.ended]);
    for (const followed of [onB, resubscribed]) {
      expect(lastStatus(followed.events)).toEqual({ state: 'TASK_STATE_FAILED', text: 'replica lost' });
    }
    const detectedMs = onB.events.at(-1)!.at - killedAt;
    process.stderr.write(
      `a killed replica's task ended "replica lost" on B's stream ${detectedMs} ms after the kill (lease ${LEASE_MS} ms); ` +
        `resubscribed through the balancer on ${resubscribed.servedBy}\n`,
    );
    // Its last heartbeat was at most one beat before the kill; a survivor's sweep runs every beat.
    expect(detectedMs).toBeLessThan(LEASE_MS + 2 * HEARTBEAT_MS + 1_000);
    // The sandbox dies with its parent: nothing of the killed replica's command is left running.
    await waitFor(() => ended(pid), 5_000, 'the killed replica’s command to end with it');

    // Every survivor, through the balancer too, tells the same: GetTask and ListTasks.
    await waitFor(async () => (await cluster.balancerStatus()).r0 === 'DOWN', 5_000, 'haproxy to take r0 out');
    for (const url of [cluster.replicaUrl(1), cluster.replicaUrl(2), cluster.balancerUrl]) {
      expect(await taskThrough(url, taskId)).toMatchObject({ state: 'TASK_STATE_FAILED', text: 'replica lost' });
    }
    const listed = await rpc(cluster.balancerUrl, 'ListTasks', { status: 'TASK_STATE_FAILED', pageSize: 50 });
    expect(listed.body.error).toBeUndefined();
    const failed = (listed.body.result as { tasks?: { id: string; status?: { state?: string } }[] }).tasks ?? [];
    expect(failed.find((t) => t.id === taskId)?.status?.state).toBe('TASK_STATE_FAILED');
  }, 60_000);

  it('runs a background job queued on a replica killed -9 before it started exactly once, on another', async () => {
    // Replica 0 is gone; 1 is the victim, 2 the survivor. One slot each (background.concurrency 1), both filled.
    const victim = 1;
    const survivor = 2;
    const marker = path.join(cluster.workspace, 'queued-job-runs.txt');
    const slow = async (i: number, command: string) => {
      const submitted = await tool(
        cluster.replicaUrl(i),
        `bg_submit {"prompt": "exec_shell {\\"command\\": \\"${command}\\"}", "label": "slow-${i}"}`,
      );
      await waitFor(() => processesWith(command).length === 1, 15_000, `"${command}" to run on replica ${i}`);
      return String(submitted.id);
    };
    const victimSlow = await slow(victim, 'sleep 25.1');
    const survivorSlow = await slow(survivor, 'sleep 25.2');

    const queued = await tool(
      cluster.replicaUrl(victim),
      `bg_submit {"prompt": "exec_shell {\\"command\\": \\"echo ran >> ${marker}\\"}", "label": "queued"}`,
    );
    const id = String(queued.id);
    expect(queued.status).toBe('queued');
    // Past the hand-off delay (two polls of 500 ms): nobody has a free slot, so it stays queued.
    await holdsFor(
      async () => (await tool(cluster.replicaUrl(survivor), `bg_status {"id": "${id}"}`)).status === 'queued',
      1_500,
      'the job queued while every slot is taken',
    );

    await cluster.killReplica(victim, 'SIGKILL');
    await waitFor(
      async () =>
        (await tool(cluster.replicaUrl(survivor), `bg_result {"id": "${victimSlow}"}`)).result === 'replica lost',
      LEASE_MS + 10_000,
      'the victim’s running job to be failed "replica lost"',
    );
    // Still queued: it is not the victim's to lose, it waits for a slot.
    expect((await tool(cluster.replicaUrl(survivor), `bg_status {"id": "${id}"}`)).status).toBe('queued');

    // The survivor's slot comes free; it takes the job.
    await tool(cluster.replicaUrl(survivor), `bg_cancel {"id": "${survivorSlow}"}`);
    const done = await waitFor(
      async () => {
        const found = await tool(cluster.replicaUrl(survivor), `bg_result {"id": "${id}"}`);
        return found.status === 'completed' && found;
      },
      20_000,
      'the queued job to complete on the survivor',
    );
    expect(String(done.result).length).toBeGreaterThan(0);
    const db = new PgClient({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ replica: string; status: string }>(
        'SELECT replica, status FROM bg_jobs WHERE id = $1',
        [id],
      );
      expect(rows).toEqual([{ replica: cluster.replicaId(survivor), status: 'completed' }]);
    } finally {
      await db.end();
    }
    // Exactly once: one line, and no second run shows up while the queue's polls go by.
    await holdsFor(() => fs.readFileSync(marker, 'utf8') === 'ran\n', 2_000, 'one run of the queued job');
  }, 90_000);
});
