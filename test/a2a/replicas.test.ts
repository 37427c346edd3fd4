import { TaskState } from '@a2a-js/sdk';
import type { StreamResponse } from '@a2a-js/sdk';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useReplicaCluster } from '../support/pgReplicas';
import { parseScrape } from '../support/prometheus';
import { waitFor } from '../support/waitFor';

/**
 * Two replicas of one node on one throwaway PostgreSQL database, in this
 * process, each on its own 127.0.0.1 port, reached by the real SDK client:
 * a task is the node's, whichever replica ran it.
 */
if (!skipWithoutPostgres('A2A tasks across replicas')) {
  describe('A2A tasks across replicas on PostgreSQL', () => {
    const cluster = useReplicaCluster({
      replicaIds: ['a', 'b'],
      config: { agent: { multiAgent: false }, observability: { metrics: true } },
    });

    it('answers GetTask and ListTasks through B for a task A ran, and B’s /metrics counts it', async () => {
      const [a, b] = cluster().nodes;
      cluster().model.push({ text: 'Hello from a.' });
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

    it('stops a model call running on A when the task is canceled through B, and A’s stream ends canceled', async () => {
      const [a, b] = cluster().nodes;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const modelCalls = cluster().model.requests.length;
      cluster().model.push({ chunks: ['never sent'], before: () => held });
      try {
        const stream = (await a2aClient(a.url, 'JSONRPC')).sendMessageStream(textRequest('wait for it'));
        const seen: StreamResponse[] = [];
        const first = await stream.next();
        seen.push(first.value as StreamResponse);
        const payload = seen[0].payload;
        const taskId =
          payload?.$case === 'task' ? payload.value.id : payload?.$case === 'statusUpdate' ? payload.value.taskId : '';
        expect(taskId).not.toBe('');
        await waitFor(() => cluster().model.requests.length > modelCalls, 20_000, 'the model call to be running on A');

        const modelCall = cluster().model.requests.at(-1)!;

        const onB = await a2aClient(b.url, 'HTTP+JSON');
        const drained = (async () => {
          for await (const event of stream) seen.push(event);
        })();
        const canceled = await onB.cancelTask({ tenant: '', id: taskId, metadata: undefined });
        expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
        // A stopped its model call (closed the connection) while the model still held its answer, and its stream
        // ended canceled. How fast is the bench's cancelPropagation figure.
        await modelCall.abandoned;
        await drained;
        const last = seen.at(-1)?.payload;
        expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
        const onA = await (
          await a2aClient(a.url, 'JSONRPC')
        ).getTask({ tenant: '', id: taskId, historyLength: undefined });
        expect(onA.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      } finally {
        release();
      }
    });
  });
}
