import { TaskState } from '@a2a-js/sdk';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { skipWithoutPostgres, startTestPostgres, type TestPostgres } from '../support/postgres';
import { startReplicaCluster, type ReplicaCluster } from '../support/pgReplicas';
import { parseScrape } from '../support/prometheus';

/**
 * Two replicas of one node on one throwaway PostgreSQL database, in this
 * process, each on its own 127.0.0.1 port, reached by the real SDK client:
 * a task is the node's, whichever replica ran it.
 */
if (!skipWithoutPostgres('A2A tasks across replicas')) {
  describe('A2A tasks across replicas on PostgreSQL', () => {
    let server: TestPostgres | undefined;
    let cluster: ReplicaCluster | undefined;
    beforeAll(async () => {
      server = await startTestPostgres();
      cluster = await startReplicaCluster({
        url: await server.createDatabase(),
        replicaIds: ['a', 'b'],
        config: { agent: { multiAgent: false }, observability: { metrics: true } },
      });
    }, 90_000);
    afterAll(async () => {
      await cluster?.close();
      await server?.stop();
    });

    it('answers GetTask and ListTasks through B for a task A ran, and B’s /metrics counts it', async () => {
      const [a, b] = cluster!.nodes;
      cluster!.model.push({ text: 'Hello from a.' });
      const done = asTask(await (await a2aClient(a.url, 'JSONRPC')).sendMessage(textRequest('hi')));
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

      const onB = await a2aClient(b.url, 'HTTP+JSON');
      const read = await onB.getTask({ tenant: '', id: done.id, historyLength: undefined });
      expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerText(read)).toBe('Hello from a.');
      const listed = await onB.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageToken: '',
        statusTimestampAfter: undefined,
        pageSize: 10,
      });
      expect(listed.tasks.map((t) => t.id)).toEqual([done.id]);

      const scrape = parseScrape(await (await fetch(`${b.url}/metrics`)).text());
      expect(scrape.value('lango_a2a_tasks', { state: 'TASK_STATE_COMPLETED' })).toBe(1);
    });
  });
}
