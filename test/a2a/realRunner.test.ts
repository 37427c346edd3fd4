import { TaskState } from '@a2a-js/sdk';
import { ACCOUNT_METADATA_KEY } from '../../src/protocol/accounting';
import { z } from 'zod';
import { createRunner } from '../../src/agent/runner';
import { defineTool } from '../../src/agent/tool';
import { createMemoryLogger } from '../../src/log/logger';
import { buildAgentTree } from '../../src/orchestration/tree';
import { a2aClient, asTask, collect, partsText, textRequest } from '../support/a2aClient';
import { a2aTestPeer, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { ScriptedModel } from '../support/scriptedModel';
import { waitFor } from '../support/waitFor';

/**
 * End to end: the real runner (createRunner) over the real tree
 * (buildAgentTree) with a scripted model, served by the A2A server and
 * called through the real SDK client.
 */
describe('the A2A server with the real runner, tree and session store', () => {
  let node: A2ATestNode;
  const model = new ScriptedModel();
  const commands: string[] = [];
  const tools = [
    defineTool({
      name: 'exec_shell',
      description: 'Runs a shell command.',
      parameters: z.object({ command: z.string() }),
      execute: async ({ command }) => {
        commands.push(command);
        return 'notes.txt\nplan.md';
      },
    }),
  ];
  const tree = buildAgentTree({ tools, model, remoteAgents: [a2aTestPeer()] });

  beforeAll(async () => {
    // The runner keeps its sessions in the node's database, as in the composition root.
    node = await startA2ANode({
      root: () => tree,
      runner: (storage) => {
        const logger = createMemoryLogger();
        return createRunner({
          tree: { current: () => tree },
          sessions: storage.stores.sessions,
          logger,
          maxDelegationRounds: 5,
          maxTurnsPerAgent: 10,
        });
      },
    });
  });
  afterAll(() => node.close());

  it('delegates to the operator, runs exec_shell and returns the answer as a completed task, streaming each step', async () => {
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
      { toolCalls: [{ name: 'exec_shell', arguments: { command: 'ls' } }] },
      { text: 'The workspace holds notes.txt and plan.md.' },
    );
    const client = await a2aClient(node.url, 'JSONRPC');
    const events = await collect(client.sendMessageStream(textRequest('what files do I have?')));
    const sentences = events.flatMap((e) =>
      e.payload?.$case === 'statusUpdate' ? [partsText(e.payload.value.status?.message?.parts)] : [],
    );
    expect(sentences).toEqual(
      expect.arrayContaining([
        'lango-orchestrator delegated to operator',
        'operator started exec_shell {"command":"ls"}',
        'operator finished exec_shell',
      ]),
    );
    const last = events.at(-1)?.payload;
    expect(last?.$case).toBe('statusUpdate');
    if (last?.$case !== 'statusUpdate') return;
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(last.value.status?.message).toBeUndefined();
    // The closing event carries who answered, and the turn's account (accounting.test.ts, onBehalfOf.test.ts).
    expect(last.value.metadata).toEqual({
      agent: 'operator',
      [ACCOUNT_METADATA_KEY]: expect.objectContaining({ principal: 'owner' }),
    });
    const task = await client.getTask({ tenant: '', id: last.value.taskId });
    expect(partsText(task.artifacts[0]?.parts)).toBe('The workspace holds notes.txt and plan.md.');
    expect(commands).toEqual(['ls']);
    expect(model.remaining).toBe(0);
  });

  it('continues the conversation by contextId: the model sees the earlier turn', async () => {
    model.push({ text: 'Hello! How can I help?' }, { text: 'You said hello a moment ago.' });
    const client = await a2aClient(node.url, 'HTTP+JSON');
    const first = asTask(await client.sendMessage(textRequest('hello')));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = asTask(await client.sendMessage(textRequest('what did I say?', { contextId: first.contextId })));
    expect(partsText(second.artifacts[0]?.parts)).toBe('You said hello a moment ago.');
    const seen = JSON.stringify(model.requests.at(-1)?.messages);
    expect(seen).toContain('hello');
    expect(seen).toContain('Hello! How can I help?');
  });

  it('delegates to a remote peer and reports the remote call', async () => {
    model.push({ toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'peer' } }] });
    const client = await a2aClient(node.url, 'JSONRPC');
    const events = await collect(client.sendMessageStream(textRequest('translate "bonjour"')));
    const sentences = events.flatMap((e) =>
      e.payload?.$case === 'statusUpdate' ? [partsText(e.payload.value.status?.message?.parts)] : [],
    );
    expect(sentences).toContain('lango-orchestrator delegated to peer');
    expect(sentences.some((s) => s.startsWith('remote agent peer:'))).toBe(true);
    const last = events.at(-1)?.payload;
    if (last?.$case !== 'statusUpdate') throw new Error('the stream must end with a status update');
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The closing event carries who answered, and the turn's account (accounting.test.ts, onBehalfOf.test.ts).
    expect(last.value.metadata).toEqual({
      agent: 'peer',
      [ACCOUNT_METADATA_KEY]: expect.objectContaining({ principal: 'owner' }),
    });
    const answers = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' ? [partsText(e.payload.value.artifact?.parts)] : [],
    );
    expect(answers).toEqual([expect.stringContaining('translated:')]);
  });

  it('cancels a turn blocked in a model call through the AbortSignal; the task ends canceled, once', async () => {
    model.push({ hang: true, chunks: ['thinking'] });
    const requestsBefore = model.requests.length;
    const client = await a2aClient(node.url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('take your time', {}, { returnImmediately: true })));
    const hanging = await model.requested(requestsBefore + 1);
    expect(hanging.signal.aborted).toBe(false);

    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(hanging.signal.aborted).toBe(true);
    await waitFor(() => node.a2a.running() === 0, 20_000, 'the canceled turn to end');
    const after = await client.getTask({ tenant: '', id: task.id });
    expect(after.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // At most what streamed before the cancel; never an answer after it.
    expect(['', 'thinking']).toContain(after.artifacts.map((a) => partsText(a.parts)).join(''));
  });
});
