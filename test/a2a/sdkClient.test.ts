import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import {
  a2aClient,
  answerText,
  asTask,
  collect,
  describeStream,
  partsText,
  textRequest,
  type Binding,
} from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { waitFor } from '../support/waitFor';

const {
  TASK_STATE_COMPLETED: COMPLETED,
  TASK_STATE_WORKING: WORKING,
  TASK_STATE_INPUT_REQUIRED: INPUT_REQUIRED,
} = TaskState;

describe.each<Binding>(['JSONRPC', 'HTTP+JSON'])('the node through the @a2a-js/sdk 1.x client over %s', (binding) => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('picks the requested transport from the card', async () => {
    const client = await a2aClient(node.url, binding);
    const card = await client.getAgentCard();
    expect(card.supportedInterfaces.map((i) => `${i.protocolBinding}@${i.protocolVersion}`)).toEqual(
      expect.arrayContaining(['JSONRPC@1.0', 'HTTP+JSON@1.0', 'JSONRPC@0.3', 'HTTP+JSON@0.3']),
    );
    expect(client.protocolVersion).toBe('1.0');
  });

  it('answers a blocking SendMessage with a completed task: the answer once, in the artifact, and the answering agent', async () => {
    const client = await a2aClient(node.url, binding);
    const task = asTask(await client.sendMessage(textRequest('hello there')));
    expect(task.status?.state).toBe(COMPLETED);
    expect(partsText(task.artifacts[0]?.parts)).toBe('echo: hello there');
    expect(task.status?.message).toBeUndefined();
    expect(JSON.stringify(task).split('echo: hello there')).toHaveLength(2);
    expect(task.metadata).toMatchObject({ agent: 'operator' });
    expect(task.artifacts[0]?.metadata).toEqual({ agent: 'operator' });
    const runner = node.runner as ScriptedA2ARunner;
    expect(runner.calls.at(-1)).toMatchObject({ sessionId: task.contextId, text: 'hello there' });
  });

  it('returns at once with returnImmediately and the task completes in the background', async () => {
    const client = await a2aClient(node.url, binding);
    const first = asTask(await client.sendMessage(textRequest('slow job', {}, { returnImmediately: true })));
    expect(first.status?.state).not.toBe(COMPLETED);
    // The subscription ends when the task settles: no polling.
    const rest = await collect(client.resubscribeTask({ tenant: '', id: first.id }));
    expect(describeStream(rest).at(-1)).toBe(`status:${COMPLETED}`);
    const task = await client.getTask({ tenant: '', id: first.id });
    expect(task.status?.state).toBe(COMPLETED);
    expect(partsText(task.artifacts[0]?.parts)).toBe('echo: slow job');
  });

  it('streams submitted, working with progress sentences, the answer, then completed, in that order', async () => {
    const client = await a2aClient(node.url, binding);
    const events = await collect(client.sendMessageStream(textRequest('stream please')));
    expect(describeStream(events)).toEqual([
      `task:${TaskState.TASK_STATE_SUBMITTED}`,
      `status:${WORKING}`,
      `status:${WORKING}`,
      `status:${WORKING}`,
      `status:${WORKING}`,
      'artifact',
      `status:${COMPLETED}`,
    ]);
    const progress = events.flatMap((e) =>
      e.payload?.$case === 'statusUpdate' && e.payload.value.status?.message
        ? [partsText(e.payload.value.status.message.parts)]
        : [],
    );
    expect(progress).toEqual([
      'lango-orchestrator delegated to operator',
      'operator started exec_shell',
      'operator finished exec_shell',
    ]);
    const chunks = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
    // The text the runner reported while the tool ran is not the answer: only the answer is sent.
    expect(chunks.map((c) => [partsText(c.artifact?.parts), c.append, c.lastChunk])).toEqual([
      ['echo: stream please', false, true],
    ]);
    expect(new Set(chunks.map((c) => c.artifact?.artifactId)).size).toBe(1);
  });

  it('reports a remote call while working', async () => {
    const client = await a2aClient(node.url, binding);
    const events = await collect(client.sendMessageStream(textRequest('ask the remote peer')));
    const sentences = events.flatMap((e) =>
      e.payload?.$case === 'statusUpdate' ? [partsText(e.payload.value.status?.message?.parts)] : [],
    );
    expect(sentences).toContain('remote agent peer: working (calling http://peer.example/)');
    expect(sentences).not.toContain('peer says hi');
    const answers = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' ? [partsText(e.payload.value.artifact?.parts)] : [],
    );
    expect(answers).toEqual(['peer says hi']);
  });

  it('fails a task with a readable reason, both when the turn fails and when the runner throws', async () => {
    const client = await a2aClient(node.url, binding);
    const failed = asTask(await client.sendMessage(textRequest('please fail')));
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(partsText(failed.status?.message?.parts)).toBe('the operator could not reach the workspace');
    const thrown = asTask(await client.sendMessage(textRequest('throw now')));
    expect(thrown.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(partsText(thrown.status?.message?.parts)).toBe('the agent failed: model endpoint unreachable');
  });

  it('ends in input-required and resumes the same task when the caller answers', async () => {
    const client = await a2aClient(node.url, binding);
    const asked = asTask(await client.sendMessage(textRequest('approve a payment')));
    expect(asked.status?.state).toBe(INPUT_REQUIRED);
    expect(partsText(asked.status?.message?.parts)).toBe('Approve the payment of 5 USDC? (yes/no)');
    const answered = asTask(
      await client.sendMessage(textRequest('yes', { contextId: asked.contextId, taskId: asked.id })),
    );
    expect(answered.id).toBe(asked.id);
    expect(answered.status?.state).toBe(COMPLETED);
    expect(partsText(answered.artifacts.at(-1)?.parts)).toBe('approved: yes');
  });

  it('continues the session when a follow-up carries the contextId', async () => {
    const client = await a2aClient(node.url, binding);
    const first = asTask(await client.sendMessage(textRequest('first')));
    const second = asTask(await client.sendMessage(textRequest('second', { contextId: first.contextId })));
    expect(second.id).not.toBe(first.id);
    expect(second.contextId).toBe(first.contextId);
    const runner = node.runner as ScriptedA2ARunner;
    expect(runner.calls.at(-1)?.sessionId).toBe(first.contextId);
  });

  it('gets a task with historyLength and lists tasks by context', async () => {
    const client = await a2aClient(node.url, binding);
    const task = asTask(await client.sendMessage(textRequest('history check')));
    const full = await client.getTask({ tenant: '', id: task.id });
    expect(full.history.length).toBeGreaterThanOrEqual(1);
    const trimmed = await client.getTask({ tenant: '', id: task.id, historyLength: 1 });
    expect(trimmed.history).toHaveLength(1);
    const listed = await client.listTasks({
      tenant: '',
      contextId: task.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
      pageSize: 10,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
  });

  it('cancels a task during its stream: canceled is final, the turn is aborted and nothing completes after', async () => {
    const client = await a2aClient(node.url, binding);
    const stream = client.sendMessageStream(textRequest('[hold] cancel me'));
    const seen: string[] = [];
    let taskId = '';
    for await (const event of stream) {
      seen.push(describeStream([event])[0]);
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (seen.length === 3) {
        const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
        expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(seen.at(-1)).toBe(`status:${TaskState.TASK_STATE_CANCELED}`);
    expect(seen).not.toContain(`status:${COMPLETED}`);
    await waitFor(() => node.a2a.running() === 0, 20_000, 'the canceled turn to end');
    const after = await client.getTask({ tenant: '', id: taskId });
    expect(after.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // Text streamed before the cancel may stay; the answer never comes.
    expect(answerText(after)).not.toContain('echo:');
    expect((node.runner as ScriptedA2ARunner).aborted.length).toBeGreaterThan(0);
    await expect(client.cancelTask({ tenant: '', id: taskId, metadata: undefined })).resolves.toMatchObject({
      status: { state: TaskState.TASK_STATE_CANCELED },
    });
  });

  it('keeps working when the client drops its stream, and SubscribeToTask picks the task up again', async () => {
    const client = await a2aClient(node.url, binding);
    const abort = new AbortController();
    const stream = client.sendMessageStream(textRequest(`[hold] dropped stream (${binding})`), {
      signal: abort.signal,
    });
    let taskId = '';
    try {
      for await (const event of stream) {
        if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        if (taskId) abort.abort();
      }
    } catch {
      // the client's own abort surfaces here
    }
    expect(taskId).not.toBe('');
    // The turn holds until the new subscription has the task; then it runs on to its answer.
    const events: StreamResponse[] = [];
    for await (const event of client.resubscribeTask({ tenant: '', id: taskId })) {
      if (events.push(event) === 1) (node.runner as ScriptedA2ARunner).release(`[hold] dropped stream (${binding})`);
    }
    const resumed = describeStream(events);
    expect(resumed[0]).toMatch(/^task:/);
    expect(resumed.at(-1)).toBe(`status:${COMPLETED}`);
    const task = await client.getTask({ tenant: '', id: taskId });
    expect(task.status?.state).toBe(COMPLETED);
  });

  it('manages push-notification configs: create, get, list, delete', async () => {
    const client = await a2aClient(node.url, binding);
    const task = asTask(await client.sendMessage(textRequest('push crud')));
    const created = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'hook-1',
      taskId: task.id,
      url: 'http://127.0.0.1:9/hook',
      token: 'secret-token',
      authentication: undefined,
    });
    expect(created).toMatchObject({ id: 'hook-1', taskId: task.id, url: 'http://127.0.0.1:9/hook' });
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' });
    expect(got.url).toBe('http://127.0.0.1:9/hook');
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual(['hook-1']);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' });
    const empty = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(empty.configs).toEqual([]);
  });
});
