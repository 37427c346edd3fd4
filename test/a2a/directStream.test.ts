import { TaskState } from '@a2a-js/sdk';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { waitFor } from '../support/waitFor';

describe('a streamed new task (DirectStream)', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(async () => {
    await node.close();
  });

  it('runs to its end and is written when the caller stops reading after the first event', async () => {
    const client = await a2aClient(node.url, 'JSONRPC');
    const stream = client.sendMessageStream(textRequest('slow job please'));
    const first = await stream.next();
    const task = asTask(first.value?.payload?.value);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await stream.return(undefined);
    const settled = await waitFor(
      async () => {
        const seen = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
        return seen.status?.state === TaskState.TASK_STATE_COMPLETED ? seen : undefined;
      },
      20_000,
      'the abandoned stream’s task to complete',
    );
    expect(settled.artifacts.length).toBeGreaterThan(0);
    const rowState = () =>
      (node.db.prepare('SELECT status_state FROM a2a_tasks WHERE id = ?').get(task.id) as { status_state: string })
        .status_state;
    await waitFor(() => rowState() === 'TASK_STATE_COMPLETED', 20_000, 'the completed row to commit');
  });
});
