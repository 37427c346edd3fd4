import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { a2aClient, answerText, asTask, partsText, textRequest, type Binding } from '../support/a2aClient';
import type { OpenAIServer } from '../support/openaiServer';
import { startScriptedNode, type ScriptedNode } from '../support/scriptedNode';

/**
 * The node end to end, as issue 2 asks: the real `openai` client talking to a
 * scripted OpenAI-compatible server on loopback, and a real `@a2a-js/sdk`
 * client sending a message that the orchestrator delegates to the operator,
 * which runs `exec_shell`; the answer comes back as a completed task.
 */
describe.each<Binding>(['JSONRPC', 'HTTP+JSON'])('a lango node over %s', (binding) => {
  let node: ScriptedNode;
  let model: OpenAIServer;
  let url: string;

  beforeEach(async () => {
    node = await startScriptedNode({ apiKey: 'sk-e2e-secret-key' });
    ({ model, url } = node);
  });

  afterEach(() => node.close());

  it('delegates a shell request to the operator, runs exec_shell and completes the task', async () => {
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
      { toolCalls: [{ name: 'exec_shell', arguments: { command: 'echo lango-e2e-$((6*7))' } }] },
      (body) => {
        const toolResult = body.messages.filter((m) => m.role === 'tool').pop();
        return { text: `The command printed: ${JSON.parse(toolResult?.content ?? '{}').stdout?.trim()}` };
      },
    );
    const client = await a2aClient(url, binding);
    const task = asTask(await client.sendMessage(textRequest('run a shell command that prints lango-e2e-42')));

    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('The command printed: lango-e2e-42');
    // Once: the closing status carries no copy of the answer.
    expect(task.status?.message).toBeUndefined();

    // What the real openai client sent: the orchestrator sees only transfer_to_agent, the operator its tools.
    expect(model.unexpected).toEqual([]);
    const [orchestratorCall, operatorCall] = model.requests;
    expect(orchestratorCall.headers.authorization).toBe('Bearer sk-e2e-secret-key');
    expect(orchestratorCall.body.stream).toBe(true);
    expect(orchestratorCall.body.tools?.map((t) => t.function.name)).toEqual(['transfer_to_agent']);
    expect(orchestratorCall.body.tools?.[0].function.parameters).toMatchObject({
      properties: { agent_name: { type: 'string' } },
      required: ['agent_name'],
    });
    expect(orchestratorCall.body.messages[0]).toMatchObject({ role: 'system' });
    expect(orchestratorCall.body.messages[0].content).toContain('NEVER invent or abbreviate agent names');
    expect(orchestratorCall.body.messages[0].content).not.toContain('sk-e2e-secret-key');
    const operatorTools = operatorCall.body.tools?.map((t) => t.function.name) ?? [];
    expect(operatorTools).toEqual(expect.arrayContaining(['exec_shell', 'fs_read', 'fs_write', 'fs_list']));

    // The task is durable and names the answering agent.
    const stored = await client.getTask({ id: task.id, historyLength: 10, tenant: '' });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // A blocking call reads only the final task: no progress sentences were stored in its history
    // (streams get them; test/a2a/realRunner.test.ts), and the answer is the artifact's alone.
    expect(stored.history.map((m) => partsText(m.parts))).toEqual(['run a shell command that prints lango-e2e-42']);
    expect(answerText(stored)).toBe('The command printed: lango-e2e-42');
    expect(stored.metadata).toMatchObject({ agent: 'operator' });
  });

  it('answers a follow-up in the same context from the session history', async () => {
    model.push({ text: 'Nice to meet you, Ada.' }, (body) => {
      const users = body.messages.filter((m) => m.role === 'user').map((m) => m.content);
      return { text: `You said: ${users.join(' | ')}` };
    });
    const client = await a2aClient(url, binding);
    const first = asTask(await client.sendMessage(textRequest('my name is Ada')));
    const second = asTask(await client.sendMessage(textRequest('what did I say?', { contextId: first.contextId })));
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(second)).toBe('You said: my name is Ada | what did I say?');
  });
});

describe('a lango node on embedded defaults', () => {
  it('serves its card and answers "hello" over A2A without any API key', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-offline-'));
    const app = await createApp(
      resolveConfig({ server: { port: 0 }, dataDir, tools: { browser: { enabled: false } } }),
      {
        logger: createMemoryLogger(),
      },
    );
    try {
      const url = await app.listen();
      const card = (await (
        await fetch(`${url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
      ).json()) as {
        name: string;
        skills: { id: string }[];
      };
      expect(card.name).toBe('lango-orchestrator');
      expect(card.skills.map((s) => s.id)).toEqual(
        expect.arrayContaining(['lango-orchestrator', 'operator', 'planner']),
      );

      const client = await a2aClient(url, 'JSONRPC');
      const task = asTask(await client.sendMessage(textRequest('hello')));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerText(task)).toMatch(/^Hello!/);
    } finally {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a lango node with a2a.enabled: false', () => {
  it('publishes no card and serves no protocol, only health', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-noa2a-'));
    const app = await createApp(
      resolveConfig({ server: { port: 0 }, dataDir, a2a: { enabled: false }, tools: { browser: { enabled: false } } }),
      { logger: createMemoryLogger() },
    );
    try {
      const url = await app.listen();
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/.well-known/agent-card.json`)).status).toBe(404);
      const rpc = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
      });
      expect(rpc.status).toBe(404);
    } finally {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
