import { z } from 'zod';
import type { RunnerOptions } from '../../src/agent/runner';
import { combineContextProviders } from '../../src/agent/turnState';
import { createMemoryLogger } from '../../src/log/logger';
import { defineTool } from '../../src/agent/tool';
import type { LlmAgent } from '../../src/agent/agent';
import type { ModelRequest } from '../../src/llm/model';
import { ScriptedModel, say, callTool, transferTo } from '../support/scriptedModel';
import { waitFor } from '../support/waitFor';
import { collect, makeAgent, openStore, runnerFor } from './helpers';
import { OWNER } from '../../src/principal';

/** The names `transfer_to_agent` offers in a model request. */
function transferNames(request: ModelRequest): string[] {
  const spec = request.tools.find((t) => t.name === 'transfer_to_agent');
  return (spec?.parameters as { properties: { agent_name: { enum: string[] } } }).properties.agent_name.enum;
}

const echo = defineTool({
  name: 'exec_echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ echoed: text }),
});

/** orchestrator → operator (exec_echo) and navigator (no tools), all on one scripted model. */
function tree(model: ScriptedModel): LlmAgent {
  const operator = makeAgent({ name: 'operator', model, tools: [echo], keywords: ['run'] });
  const navigator = makeAgent({ name: 'navigator', model, keywords: ['browse'] });
  return makeAgent({ name: 'lango-orchestrator', model, subAgents: [operator, navigator] });
}

describe('runner: tools and delegation', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  const runner = (model: ScriptedModel, more: Partial<RunnerOptions> = {}) => runnerFor(store, () => tree(model), more);

  it('starts the turn at the agent the input names (a workflow step) and at the root for an unknown name', async () => {
    const model = new ScriptedModel([callTool('exec_echo', { text: 'step' }), say('Step done.'), say('Root here.')]);
    const run = runner(model);
    const step = await collect(run, { principal: OWNER, sessionId: 'wf:1', text: 'echo step', startAgent: 'operator' });
    expect(step.result).toEqual({ status: 'completed', text: 'Step done.', author: 'operator' });
    const unknown = await collect(run, { principal: OWNER, sessionId: 'wf:2', text: 'hi', startAgent: 'nobody' });
    expect(unknown.result.author).toBe('lango-orchestrator');
    expect(model.agents).toEqual(['operator', 'operator', 'lango-orchestrator']);
  });

  it('reads no history or state for a turn its caller marks as the first of a new session', async () => {
    const model = new ScriptedModel([say('first'), say('fresh start')]);
    const reads: string[] = [];
    const sessions = store.sessions;
    const counted: typeof sessions = {
      ...sessions,
      commitTurn: (...args) => sessions.commitTurn(...args),
      messages: (...args) => (reads.push(`messages ${args[1]}`), sessions.messages(...args)),
      state: (...args) => (reads.push(`state ${args[1]}`), sessions.state(...args)),
    };
    const run = runner(model, { sessions: counted });
    await collect(run, { principal: OWNER, sessionId: 'n1', text: 'remember me' });
    await collect(run, { principal: OWNER, sessionId: 'n2', text: 'who am I?', newSession: true });
    expect(reads).toEqual(['state n1', 'messages n1']);
    expect(model.requests[1]!.messages).toEqual([{ role: 'user', content: 'who am I?' }]);
    expect((await sessions.messages(OWNER, 'n2')).map((m) => `${m.seq}:${m.content}`)).toEqual([
      '1:who am I?',
      '2:fresh start',
    ]);
  });

  it('runs a tool call, feeds the JSON result back and ends with the answering agent as author', async () => {
    const model = new ScriptedModel([
      transferTo('operator'),
      callTool('exec_echo', { text: 'hi' }),
      say('It said hi.'),
    ]);
    const { events, result } = await collect(runner(model), { principal: OWNER, sessionId: 's1', text: 'run echo hi' });

    expect(result).toEqual({ status: 'completed', text: 'It said hi.', author: 'operator' });
    expect(model.agents).toEqual(['lango-orchestrator', 'operator', 'operator']);
    const toolResult = model.requests[2]!.messages.at(-1);
    expect(toolResult).toMatchObject({ role: 'tool', name: 'exec_echo', content: '{"echoed":"hi"}' });
    expect(events.map((e) => e.type)).toEqual([
      'agent_start',
      'transfer',
      'agent_start',
      'tool_start',
      'tool_end',
      'text_delta',
      'final',
    ]);
    expect(model.remaining).toBe(0);
  });

  it('offers transfer_to_agent with the one argument agent_name to agents with sub-agents or a parent', async () => {
    const model = new ScriptedModel([transferTo('operator'), say('done')]);
    await collect(runner(model), { principal: OWNER, sessionId: 's1', text: 'run' });
    const [orchestrator, operator] = model.requests;
    const transfer = orchestrator!.tools.find((t) => t.name === 'transfer_to_agent');
    expect(transfer?.parameters).toMatchObject({
      required: ['agent_name'],
      properties: { agent_name: { type: 'string' } },
    });
    expect(transferNames(orchestrator!)).toEqual(['operator', 'navigator']);
    expect(operator!.tools.map((t) => t.name)).toEqual(['exec_echo', 'transfer_to_agent']);
    // A sub-agent may hand back to its parent.
    expect(transferNames(operator!)).toEqual(['lango-orchestrator']);
  });

  it('offers no transfer function to a single agent without sub-agents', async () => {
    const model = new ScriptedModel([say('hello')]);
    const single = makeAgent({ name: 'lango-agent', model, tools: [echo] });
    const r = runnerFor(store, () => single);
    const { result } = await collect(r, { principal: OWNER, sessionId: 's1', text: 'hi' });
    expect(result.author).toBe('lango-agent');
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['exec_echo']);
  });

  it('lets a sub-agent transfer back to its parent, which then authors the answer', async () => {
    const model = new ScriptedModel([
      transferTo('operator'),
      transferTo('lango-orchestrator'),
      say('I will answer myself.'),
    ]);
    const { events, result } = await collect(runner(model), {
      principal: OWNER,
      sessionId: 's1',
      text: 'tell me a joke',
    });
    expect(result).toEqual({ status: 'completed', text: 'I will answer myself.', author: 'lango-orchestrator' });
    expect(events.filter((e) => e.type === 'transfer')).toEqual([
      { type: 'transfer', from: 'lango-orchestrator', to: 'operator' },
      { type: 'transfer', from: 'operator', to: 'lango-orchestrator' },
    ]);
  });

  it('refuses transfers beyond maxDelegationRounds and tells the model to answer now', async () => {
    const model = new ScriptedModel([
      transferTo('operator'),
      transferTo('lango-orchestrator'),
      say('Here is what I have.'),
    ]);
    const { events, result } = await collect(runner(model, { maxDelegationRounds: 1 }), {
      principal: OWNER,
      sessionId: 's1',
      text: 'x',
    });
    expect(result).toEqual({ status: 'completed', text: 'Here is what I have.', author: 'operator' });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'transfer_refused', from: 'operator', to: 'lango-orchestrator' }),
    );
    expect(model.requests[2]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('answer the user now'),
    });
  });

  it('ends the turn with a readable answer when the agent keeps transferring after a refusal', async () => {
    const model = new ScriptedModel([
      transferTo('operator'),
      transferTo('lango-orchestrator'),
      transferTo('lango-orchestrator'),
    ]);
    const { result } = await collect(runner(model, { maxDelegationRounds: 1 }), {
      principal: OWNER,
      sessionId: 's1',
      text: 'x',
    });
    expect(result.status).toBe('completed');
    expect(result.author).toBe('operator');
    expect(result.text).toMatch(/within the limit of 1 delegation rounds/);
    expect(model.remaining).toBe(0);
  });

  it('answers a transfer to an unknown agent with the valid names and lets the model try again', async () => {
    const model = new ScriptedModel([transferTo('executor'), transferTo('operator'), say('ok')]);
    const { result } = await collect(runner(model), { principal: OWNER, sessionId: 's1', text: 'run' });
    expect(result.author).toBe('operator');
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'tool transfer_to_agent failed: no agent named "executor". Valid agent names: operator, navigator.',
    });
  });

  it('hands a [REJECT] reply back to the orchestrator with a note so it routes again', async () => {
    const model = new ScriptedModel([
      transferTo('operator'),
      say('[REJECT] This task requires navigator. I handle: command execution.'),
      transferTo('navigator'),
      say('The page title is Example.'),
    ]);
    const { events, result } = await collect(runner(model), {
      principal: OWNER,
      sessionId: 's1',
      text: 'open example.com',
    });
    expect(result).toEqual({ status: 'completed', text: 'The page title is Example.', author: 'navigator' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'rejected', agent: 'operator' }));
    expect(model.agents).toEqual(['lango-orchestrator', 'operator', 'lango-orchestrator', 'navigator']);
    expect(model.requests[2]!.messages.at(-1)).toMatchObject({
      role: 'user',
      runtimeNote: true,
      content: expect.stringContaining('operator rejected the task'),
    });
  });

  it('turns bad tool arguments and thrown errors into tool results and goes on', async () => {
    const boom = defineTool({
      name: 'exec_boom',
      description: 'Always fails.',
      parameters: z.object({}),
      execute: async () => {
        throw new Error('disk on fire');
      },
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'exec_echo', arguments: { text: 42 } },
          { name: 'exec_boom' },
          { name: 'exec_echo', arguments: '{not json' },
          { name: 'nope' },
        ],
      },
      say('Sorry, the tools failed.'),
    ]);
    const solo = makeAgent({ name: 'lango-agent', model, tools: [echo, boom] });
    const r = runnerFor(store, () => solo);
    const { events, result } = await collect(r, { principal: OWNER, sessionId: 's1', text: 'x' });
    expect(result.status).toBe('completed');
    const results = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toMatch(/^tool exec_echo failed: invalid arguments: text: /);
    expect(results[1]).toBe('tool exec_boom failed: disk on fire');
    expect(results[2]).toBe('tool exec_echo failed: arguments are not valid JSON');
    expect(results[3]).toMatch(/^tool nope failed: no such tool; available: exec_echo, exec_boom/);
    expect(events.filter((e) => e.type === 'tool_end').every((e) => e.type === 'tool_end' && !e.ok)).toBe(true);
  });

  it('caps long tool results', async () => {
    const big = defineTool({
      name: 'fs_big',
      description: 'big',
      parameters: z.object({}),
      execute: async () => 'x'.repeat(500),
    });
    const model = new ScriptedModel([callTool('fs_big'), say('ok')]);
    const solo = makeAgent({ name: 'lango-agent', model, tools: [big] });
    const r = runnerFor(store, () => solo, { maxToolResultChars: 100 });
    await collect(r, { principal: OWNER, sessionId: 's1', text: 'x' });
    expect(model.requests[1]!.messages.at(-1)!.content).toMatch(/^x{100}\n…\[truncated 400 characters\]$/);
  });

  it('stops an agent after maxTurnsPerAgent model calls with a readable failure', async () => {
    const model = new ScriptedModel([callTool('exec_echo', { text: 'a' }), callTool('exec_echo', { text: 'b' })]);
    const solo = makeAgent({ name: 'lango-agent', model, tools: [echo] });
    const r = runnerFor(store, () => solo, { maxTurnsPerAgent: 2 });
    const { result } = await collect(r, { principal: OWNER, sessionId: 's1', text: 'x' });
    expect(result).toEqual({
      status: 'failed',
      text: 'lango-agent made 2 model calls in this turn without answering; stopped.',
      author: 'lango-agent',
    });
  });

  it('never hands the user an empty answer', async () => {
    const model = new ScriptedModel([transferTo('navigator'), say('  ')]);
    const { result } = await collect(runner(model), { principal: OWNER, sessionId: 's1', text: 'browse' });
    expect(result).toEqual({ status: 'completed', text: '(navigator returned an empty answer)', author: 'navigator' });
  });

  it('ends the turn as failed with a readable reason when the model errors', async () => {
    const model = new ScriptedModel([{ error: 'model request failed: 503 overloaded' }]);
    const { result } = await collect(runner(model), { principal: OWNER, sessionId: 's1', text: 'x' });
    expect(result).toEqual({
      status: 'failed',
      text: 'the model failed: model request failed: 503 overloaded',
      author: 'lango-orchestrator',
    });
    expect(result.text).not.toMatch(/\n\s+at /);
  });
});

describe('runner: sessions and memory hooks', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  it('shows every agent the earlier conversation (user messages and authored answers) plus this turn', async () => {
    const model = new ScriptedModel([transferTo('operator'), say('first answer'), say('second answer')]);
    const r = runnerFor(store, () => tree(model));
    await collect(r, { principal: OWNER, sessionId: 's1', text: 'first' });
    await collect(r, { principal: OWNER, sessionId: 's1', text: 'second' });
    expect(model.requests[2]!.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'first answer', author: 'operator' },
      { role: 'user', content: 'second' },
    ]);
  });

  it('has the turn persisted when the final event arrives, so a reader may stop there', async () => {
    const model = new ScriptedModel([say('done')]);
    const r = runnerFor(store, () => makeAgent({ name: 'lango-agent', model }));
    for await (const event of r.run({ principal: OWNER, sessionId: 's1', text: 'go' }))
      if (event.type === 'final') break;
    expect(await (await store.sessions.messages(OWNER, 's1')).map((m) => [m.role, m.content, m.author])).toEqual([
      ['user', 'go', undefined],
      ['assistant', 'done', 'lango-agent'],
    ]);
  });

  it('appends the context provider text to the system prompt and calls onTurnEnd after persisting', async () => {
    const model = new ScriptedModel([callTool('exec_echo', { text: 'a' }), say('hi'), say('again')]);
    const solo = makeAgent({ name: 'lango-agent', model, tools: [echo], instruction: 'Base prompt.' });
    const seen: string[] = [];
    const hooks: Array<{ visible: string[]; turn: string[] }> = [];
    const r = runnerFor(store, () => solo, {
      contextProvider: async ({ agentName, text }) => {
        seen.push(`${agentName}:${text}`);
        return 'User prefers short answers.';
      },
      onTurnEnd: ({ messages, turnMessages }) => {
        hooks.push({ visible: messages.map((m) => m.content), turn: turnMessages.map((m) => m.role) });
      },
    });
    await collect(r, { principal: OWNER, sessionId: 's1', text: 'hello' });
    // The hook runs after the turn's group commit.
    await waitFor(() => hooks.length === 1, 20_000, "the first turn's hook");
    await collect(r, { principal: OWNER, sessionId: 's1', text: 'more' });
    await waitFor(() => hooks.length === 2, 20_000, "the second turn's hook");

    // Fetched once per agent per turn, though the agent was called twice in the first turn.
    expect(seen).toEqual(['lango-agent:hello', 'lango-agent:more']);
    expect(model.requests[1]!.instruction).toBe('Base prompt.\n\nUser prefers short answers.');
    expect(hooks).toEqual([
      { visible: ['hello', 'hi'], turn: ['user', 'assistant', 'tool', 'assistant'] },
      { visible: ['hello', 'hi', 'more', 'again'], turn: ['user', 'assistant'] },
    ]);
  });

  it('logs a failing context provider or turn-end hook without failing the turn', async () => {
    const model = new ScriptedModel([say('hi')]);
    const solo = makeAgent({ name: 'lango-agent', model, instruction: 'Base.' });
    const r = runnerFor(store, () => solo, {
      contextProvider: async () => {
        throw new Error('memory offline');
      },
      onTurnEnd: async () => {
        throw new Error('observer broke');
      },
    });
    const { result } = await collect(r, { principal: OWNER, sessionId: 's1', text: 'hello' });
    expect(result.status).toBe('completed');
    expect(model.requests[0]!.instruction).toBe('Base.');
    const warnings = () => store.logger.records.filter((x) => x.level === 'warn').map((x) => x.message);
    // The turn-end hook runs after the turn's group commit: its warning comes then.
    await waitFor(() => warnings().includes('turn-end hook failed'), 20_000, 'the hook’s warning');
    expect(warnings()).toEqual(expect.arrayContaining(['context provider failed', 'turn-end hook failed']));
  });
});

describe('combineContextProviders', () => {
  it('joins the texts of several providers in order and skips one that throws, logging it', async () => {
    const logger = createMemoryLogger();
    const combined = combineContextProviders(
      [
        async () => 'Memory: likes tea.',
        async () => {
          throw new Error('index missing');
        },
        async () => undefined,
        async ({ agentName }) => `Knowledge for ${agentName}.`,
      ],
      logger,
    );
    expect(await combined({ principal: OWNER, sessionId: 's', text: 'x', agentName: 'operator' })).toBe(
      'Memory: likes tea.\n\nKnowledge for operator.',
    );
    expect(logger.records.map((r) => r.message)).toEqual(['context provider failed']);
    expect(
      await combineContextProviders(
        [async () => '  '],
        logger,
      )({ principal: OWNER, sessionId: 's', text: 'x', agentName: 'a' }),
    ).toBeUndefined();
  });
});
