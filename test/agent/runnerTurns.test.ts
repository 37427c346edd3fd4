import { z } from 'zod';
import { ApprovalRequired, defineTool } from '../../src/agent/tool';
import { RunEvents } from '../../src/agent/events';
import type { LlmAgent, RemoteAgent, RemoteInvocation, RemoteOutcome } from '../../src/agent/agent';
import { ScriptedModel, say, callTool, transferTo } from '../support/scriptedModel';
import { collect, makeAgent, openStore, runnerFor } from './helpers';
import { OWNER } from '../../src/principal';

/** A remote agent that plays scripted outcomes and records each invocation (with a copy of its state). */
function scriptedRemote(outcomes: Array<RemoteOutcome | Error>, onInvoke?: (inv: RemoteInvocation) => void) {
  const calls: Array<Omit<RemoteInvocation, 'signal'>> = [];
  const remote: RemoteAgent = {
    kind: 'remote',
    name: 'peer',
    description: 'a remote peer',
    keywords: ['peer'],
    cardUrl: 'http://127.0.0.1:1/.well-known/agent-card.json',
    async *invoke(inv) {
      calls.push({
        text: inv.text,
        context: inv.context,
        principal: inv.principal,
        sessionId: inv.sessionId,
        state: { ...inv.state },
        metadata: inv.metadata,
      });
      onInvoke?.(inv);
      yield RunEvents.remoteCall('peer', 'working');
      const next = outcomes.shift();
      if (!next) throw new Error('scriptedRemote: no outcome left');
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { remote, calls };
}

describe('runner: approval across turns', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  const runs: Array<{ command: string; approved: boolean }> = [];
  const danger = defineTool({
    name: 'exec_danger',
    description: 'Runs a command that needs approval.',
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }, ctx) => {
      if (!ctx.approved) throw new ApprovalRequired(`Run "${command}"? Reply yes to approve.`);
      runs.push({ command, approved: ctx.approved });
      return `ran ${command}`;
    },
  });
  const build = (model: ScriptedModel): LlmAgent =>
    makeAgent({
      name: 'lango-orchestrator',
      model,
      subAgents: [makeAgent({ name: 'operator', model, tools: [danger] })],
    });
  const approvalRunner = (model: ScriptedModel) => runnerFor(store, () => build(model));

  beforeEach(() => (runs.length = 0));

  it('asks, persists the pending call, and runs it approved in the next turn after the database is reopened', async () => {
    const first = new ScriptedModel([transferTo('operator'), callTool('exec_danger', { command: 'rm junk' })]);
    const asked = await collect(approvalRunner(first), { principal: OWNER, sessionId: 's1', text: 'delete the junk' });
    expect(asked.result).toEqual({
      status: 'input-required',
      text: 'Run "rm junk"? Reply yes to approve.',
      author: 'operator',
    });
    expect(asked.events).toContainEqual({
      type: 'input_required',
      agent: 'operator',
      question: 'Run "rm junk"? Reply yes to approve.',
    });
    expect(runs).toEqual([]);

    await store.reopen();
    expect(await (await store.sessions.state(OWNER, 's1')).pendingApproval).toMatchObject({
      agentName: 'operator',
      call: { name: 'exec_danger' },
    });
    const second = new ScriptedModel([say('Deleted the junk.')]);
    const done = await collect(approvalRunner(second), { principal: OWNER, sessionId: 's1', text: 'Yes' });

    expect(done.result).toEqual({ status: 'completed', text: 'Deleted the junk.', author: 'operator' });
    expect(runs).toEqual([{ command: 'rm junk', approved: true }]);
    // The loop continued as the operator, seeing its own call and the result after the user's yes.
    expect(second.agents).toEqual(['operator']);
    expect(second.requests[0]!.messages.slice(-3)).toEqual([
      { role: 'user', content: 'Yes' },
      {
        role: 'assistant',
        content: '',
        author: 'operator',
        toolCalls: [expect.objectContaining({ name: 'exec_danger' })],
      },
      expect.objectContaining({ role: 'tool', name: 'exec_danger', content: 'ran rm junk' }),
    ]);
    expect(await (await store.sessions.state(OWNER, 's1')).pendingApproval).toBeUndefined();
  });

  it('tells the model the user declined when the reply is not an approval', async () => {
    const first = new ScriptedModel([transferTo('operator'), callTool('exec_danger', { command: 'rm junk' })]);
    await collect(approvalRunner(first), { principal: OWNER, sessionId: 's1', text: 'delete the junk' });
    const second = new ScriptedModel([say('Okay, I left it alone.')]);
    const done = await collect(approvalRunner(second), { principal: OWNER, sessionId: 's1', text: 'no, keep it' });
    expect(done.result.text).toBe('Okay, I left it alone.');
    expect(runs).toEqual([]);
    expect(second.requests[0]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/^the user declined/),
    });
  });
});

describe('runner: remote sub-agents', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  const runnerWith = (model: ScriptedModel, remote: RemoteAgent) =>
    runnerFor(store, () =>
      makeAgent({ name: 'lango-orchestrator', model, subAgents: [makeAgent({ name: 'operator', model }), remote] }),
    );

  it('takes a completed remote answer as the turn answer authored by the remote, relaying its events and metadata', async () => {
    const { remote, calls } = scriptedRemote([{ status: 'completed', text: 'remote says hi' }]);
    const model = new ScriptedModel([transferTo('peer')]);
    const { events, result } = await collect(runnerWith(model, remote), {
      principal: OWNER,
      sessionId: 's1',
      text: 'ask the peer',
      metadata: { hops: ['a'] },
    });
    expect(result).toEqual({ status: 'completed', text: 'remote says hi', author: 'peer' });
    expect(calls).toEqual([
      { text: 'ask the peer', context: [], principal: OWNER, sessionId: 's1', state: {}, metadata: { hops: ['a'] } },
    ]);
    expect(events).toContainEqual({ type: 'remote_call', agent: 'peer', status: 'working' });
    expect(events.at(-1)).toEqual({ type: 'final', agent: 'peer', text: 'remote says hi' });
  });

  it('gives the remote the earlier conversation as context, speakers named', async () => {
    const { remote, calls } = scriptedRemote([{ status: 'completed', text: 'Sunny in Lyon.' }]);
    const model = new ScriptedModel([say('Noted: you live in Lyon.'), transferTo('peer')]);
    await collect(runnerWith(model, remote), { principal: OWNER, sessionId: 'ctx', text: 'I live in Lyon' });
    await collect(runnerWith(model, remote), { principal: OWNER, sessionId: 'ctx', text: 'weather there tomorrow?' });
    expect(calls[0]).toMatchObject({
      text: 'weather there tomorrow?',
      context: ['user: I live in Lyon', 'lango-orchestrator: Noted: you live in Lyon.'],
    });
  });

  it('sends the next user message straight to a remote that asked for input, with its persisted state', async () => {
    const { remote, calls } = scriptedRemote(
      [
        { status: 'input-required', text: 'Which city?' },
        { status: 'completed', text: 'Sunny in Paris.' },
      ],
      (inv) => (inv.state.taskId = 'task-1'),
    );
    const model = new ScriptedModel([transferTo('peer')]);
    const asked = await collect(runnerWith(model, remote), { principal: OWNER, sessionId: 's1', text: 'weather?' });
    expect(asked.result).toEqual({ status: 'input-required', text: 'Which city?', author: 'peer' });

    await store.reopen();
    const done = await collect(runnerWith(model, remote), { principal: OWNER, sessionId: 's1', text: 'Paris' });
    expect(done.result).toEqual({ status: 'completed', text: 'Sunny in Paris.', author: 'peer' });
    expect(model.requests).toHaveLength(1); // the second turn never asked the orchestrator
    expect(calls[1]).toMatchObject({ text: 'Paris', state: { taskId: 'task-1' } });
  });

  it('hands a failed remote call back to the orchestrator with a note so it can answer itself', async () => {
    const { remote } = scriptedRemote([{ status: 'failed', reason: 'peer returned HTTP 502' }]);
    const model = new ScriptedModel([transferTo('peer'), say('The peer is down; here is my own answer.')]);
    const { events, result } = await collect(runnerWith(model, remote), {
      principal: OWNER,
      sessionId: 's1',
      text: 'ask the peer',
    });
    expect(result).toEqual({
      status: 'completed',
      text: 'The peer is down; here is my own answer.',
      author: 'lango-orchestrator',
    });
    expect(events).toContainEqual({
      type: 'remote_call',
      agent: 'peer',
      status: 'failed',
      detail: 'peer returned HTTP 502',
    });
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringContaining('peer failed: peer returned HTTP 502'),
    });
  });

  it('treats a remote that throws as failed', async () => {
    const { remote } = scriptedRemote([new Error('connection refused')]);
    const model = new ScriptedModel([transferTo('peer'), transferTo('operator'), say('operator handled it')]);
    const { result } = await collect(runnerWith(model, remote), { principal: OWNER, sessionId: 's1', text: 'x' });
    expect(result).toEqual({ status: 'completed', text: 'operator handled it', author: 'operator' });
  });
});

describe('runner: cancellation', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  it('aborts mid-tool even when the tool ignores its signal, and persists nothing', async () => {
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    let toolSignal: AbortSignal | undefined;
    const stuck = defineTool({
      name: 'exec_stuck',
      description: 'never ends',
      parameters: z.object({}),
      execute: (_args, ctx) => {
        toolSignal = ctx.signal;
        started();
        return new Promise(() => {});
      },
    });
    const model = new ScriptedModel([callTool('exec_stuck')]);
    const runner = runnerFor(store, () => makeAgent({ name: 'lango-agent', model, tools: [stuck] }));
    const controller = new AbortController();
    const running = collect(runner, { principal: OWNER, sessionId: 's1', text: 'x', signal: controller.signal });
    await toolStarted;
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(toolSignal?.aborted).toBe(true);
    expect(await await store.sessions.messages(OWNER, 's1')).toEqual([]);
  });

  it('aborts mid-model-stream and persists nothing', async () => {
    const model = new ScriptedModel([{ hang: true, chunks: ['Partial ans'] }]);
    const runner = runnerFor(store, () => makeAgent({ name: 'lango-agent', model }));
    const controller = new AbortController();
    const turn = runner.run({ principal: OWNER, sessionId: 's1', text: 'x', signal: controller.signal });
    expect((await turn.next()).value).toEqual({ type: 'agent_start', agent: 'lango-agent' });
    expect((await turn.next()).value).toEqual({ type: 'text_delta', agent: 'lango-agent', delta: 'Partial ans' });
    controller.abort();
    await expect(turn.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(await await store.sessions.messages(OWNER, 's1')).toEqual([]);
  });

  it('aborts a remote call that ignores its signal', async () => {
    let invoked!: () => void;
    const calling = new Promise<void>((resolve) => (invoked = resolve));
    const remote: RemoteAgent = {
      kind: 'remote',
      name: 'peer',
      description: 'slow',
      keywords: [],
      cardUrl: 'http://127.0.0.1:1/card',
      // eslint-disable-next-line require-yield
      async *invoke() {
        invoked();
        return await new Promise<RemoteOutcome>(() => {});
      },
    };
    const model = new ScriptedModel([transferTo('peer')]);
    const runner = runnerFor(store, () => makeAgent({ name: 'lango-orchestrator', model, subAgents: [remote] }));
    const controller = new AbortController();
    const events: string[] = [];
    const running = (async () => {
      for await (const e of runner.run({ principal: OWNER, sessionId: 's1', text: 'x', signal: controller.signal })) {
        events.push(e.type);
      }
    })();
    // Aborted while the call is under way (and never answering).
    await calling;
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(events).toContain('remote_call');
    expect(await await store.sessions.messages(OWNER, 's1')).toEqual([]);
  });

  it('throws AbortError before doing anything when the signal is already aborted', async () => {
    const model = new ScriptedModel([]);
    const runner = runnerFor(store, () => makeAgent({ name: 'lango-agent', model }));
    await expect(
      collect(runner, { principal: OWNER, sessionId: 's1', text: 'x', signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(model.requests).toEqual([]);
  });
});
