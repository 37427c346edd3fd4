import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { rpc, startCluster, type RpcAnswer, type TestCluster } from '../../support/cluster';
import { skipWithoutCluster } from '../../support/prerequisites';

/**
 * One owner per task, cluster-wide (issue 24): two `lango serve` replicas on
 * one PostgreSQL database behind haproxy, the offline model, commands held
 * for the caller's yes (`tools.exec.policy: ask`), one shared workspace. An
 * input-required task is answered through both replicas at once: one turn
 * runs (its command appends one line), the other answer is refused as a
 * single node refuses a message to a working task, and so is a follow-up
 * through either replica while that turn works.
 */
describe('one owner per task across replicas behind haproxy', () => {
  if (skipWithoutCluster('one owner per task across replicas')) return;

  let cluster: TestCluster;
  beforeAll(async () => {
    // Continues the `tools:` mapping the cluster's generated config ends with (workspace, browser off).
    cluster = await startCluster({ replicas: 2, extraConfig: '  exec:\n    policy: ask\n' });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  interface SentTask {
    id: string;
    contextId: string;
    status?: { state?: string };
    artifacts?: unknown[];
  }
  const taskOf = (answer: RpcAnswer) => answer.body.result?.task as SentTask | undefined;
  const send = (url: string, text: string, task?: SentTask) =>
    rpc(url, 'SendMessage', {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text }],
        ...(task ? { taskId: task.id, contextId: task.contextId } : {}),
      },
    });

  it('runs one turn when two replicas race to answer one input-required task; a follow-up meanwhile is refused alike', async () => {
    const file = 'owner-race.txt';
    const asked = taskOf(await send(cluster.balancerUrl, `exec_shell {"command": "sleep 4; echo once >> ${file}"}`));
    expect(asked?.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');

    const answers = [0, 1].map((i) => send(cluster.replicaUrl(i), 'yes', asked));
    // The loser is refused at once; the winner's turn runs its command for four seconds.
    const [refused, loser] = await Promise.race(answers.map((a, i) => a.then((answer) => [answer, i] as const)));
    const refusal = `task ${asked!.id} is still working: wait for its answer or cancel it first`;
    expect(refused.body.error?.message).toBe(refusal);
    const winner = 1 - loser;

    // While the winner's command runs: a follow-up through the replica running it (the single-node refusal)
    // and through the other get the same answer (once the turn has ended it would be a terminal-state one).
    const [onWinner, onLoser] = await Promise.all([
      send(cluster.replicaUrl(winner), 'and again', asked),
      send(cluster.replicaUrl(loser), 'and again', asked),
    ]);
    expect(onWinner.body.error?.message).toBe(refusal);
    expect(onLoser.status).toBe(onWinner.status);
    expect(onLoser.body.error).toEqual(onWinner.body.error);
    expect(refused.body.error).toEqual(onWinner.body.error);

    const answered = await answers[winner];
    expect(taskOf(answered)?.status?.state).toBe('TASK_STATE_COMPLETED');
    expect(fs.readFileSync(path.join(cluster.workspace, file), 'utf8')).toBe('once\n');

    // Settled, it reads the same through either replica.
    const read = await Promise.all([0, 1].map((i) => rpc(cluster.replicaUrl(i), 'GetTask', { id: asked!.id })));
    expect(read[1].body.result).toEqual(read[0].body.result);
    expect((read[0].body.result as unknown as SentTask).status?.state).toBe('TASK_STATE_COMPLETED');
  }, 60_000);
});
