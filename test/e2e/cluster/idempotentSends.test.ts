import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { rpc, startCluster, type RpcAnswer, type TestCluster } from '../../support/cluster';
import { skipWithoutCluster } from '../../support/prerequisites';
import { waitFor } from '../../support/waitFor';

/**
 * Sends that never run twice (issue 27): three `lango serve` replicas on one
 * PostgreSQL database, the offline model (it runs the tool a message names),
 * one shared workspace. The same message sent 100 times at once over the
 * three replicas runs one turn; a retry after the replica running the first
 * send was killed with -9 gets that task, failed "replica lost", and runs
 * nothing again.
 */
describe('idempotent sends across replicas', () => {
  if (skipWithoutCluster('idempotent sends across replicas')) return;

  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster({ replicas: 3 });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  interface SentTask {
    id: string;
    status?: { state?: string; message?: { parts?: { text?: string }[] } };
  }
  const taskOf = (answer: RpcAnswer) => answer.body.result?.task as SentTask | undefined;
  const lines = (file: string) => {
    const full = path.join(cluster.workspace, file);
    return fs.existsSync(full) ? fs.readFileSync(full, 'utf8').split('\n').filter(Boolean) : [];
  };
  const params = (text: string) => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } });

  it('runs one turn for 100 identical sends in flight at once over three replicas: one task, the command once', async () => {
    const file = 'hundred.txt';
    const sent = params(`exec_shell {"command": "echo once >> ${file}"}`);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => rpc(cluster.replicaUrl(i % 3), 'SendMessage', sent)),
    );
    expect(answers.map((a) => a.body.error)).toEqual(answers.map(() => undefined));
    expect(new Set(answers.map((a) => taskOf(a)?.id)).size).toBe(1);
    expect(answers.every((a) => taskOf(a)?.status?.state === 'TASK_STATE_COMPLETED')).toBe(true);
    expect(lines(file)).toEqual(['once']);
  }, 120_000);

  it('answers a retry after kill -9 of the replica running the first send with that task, failed, and runs nothing', async () => {
    const file = 'killed.txt';
    const sent = params(`exec_shell {"command": "echo started >> ${file}; sleep 20"}`);
    const first = rpc(cluster.replicaUrl(0), 'SendMessage', sent).catch((err: unknown) => err);
    await waitFor(() => lines(file).length === 1, 30_000, 'the first send’s command to start on replica 0');
    await cluster.killReplica(0);
    // The first caller's connection died with the replica: it never got an answer.
    expect(await first).toHaveProperty('message', 'fetch failed');

    const retry = await rpc(cluster.replicaUrl(1), 'SendMessage', sent);
    const task = taskOf(retry);
    expect(task?.status?.state).toBe('TASK_STATE_FAILED');
    expect(task?.status?.message?.parts?.[0]?.text).toBe('replica lost');
    // Through the third replica too, and nothing ran again.
    expect(taskOf(await rpc(cluster.replicaUrl(2), 'SendMessage', sent))?.id).toBe(task?.id);
    expect(lines(file)).toEqual(['started']);
  }, 120_000);
});
