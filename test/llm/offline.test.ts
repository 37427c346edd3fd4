import { z } from 'zod';
import { createOfflineModel } from '../../src/llm/offline';
import { parseToolCall, routeScore, isGreeting } from '../../src/llm/offlineSyntax';
import { defineTool, toolJsonSchema, type AnyTool } from '../../src/agent/tool';
import { createRunner } from '../../src/agent/runner';
import { routesOf } from '../../src/agent/transfer';
import type { RemoteAgent } from '../../src/agent/agent';
import { collect, makeAgent, openStore } from '../agent/helpers';
import { OWNER } from '../../src/principal';

const model = createOfflineModel();
const shellRuns: string[] = [];
const shell = defineTool({
  name: 'exec_shell',
  description: 'Runs a shell command.',
  parameters: z.object({ command: z.string(), timeoutMs: z.number().optional() }),
  execute: async ({ command }) => {
    shellRuns.push(command);
    return { exitCode: 0, stdout: command.startsWith('echo ') ? `${command.slice(5)}\n` : '' };
  },
});
const fsRead = defineTool({
  name: 'fs_read',
  description: 'Reads a file in the workspace.',
  parameters: z.object({ path: z.string(), maxBytes: z.number().optional() }),
  execute: async ({ path, maxBytes }) => `contents of ${path}${maxBytes ? ` (max ${maxBytes})` : ''}`,
});
const spec = (tool: AnyTool) => ({ name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) });

function tree(extra: RemoteAgent[] = []) {
  const operator = makeAgent({
    name: 'operator',
    tools: [shell, fsRead],
    keywords: ['run', 'execute', 'command', 'shell', 'file', 'read'],
    description: 'command execution, file operations',
  });
  const navigator = makeAgent({
    name: 'navigator',
    keywords: ['browse', 'web', 'url', 'page', 'website'],
    description: 'web browsing',
  });
  const planner = makeAgent({
    name: 'planner',
    keywords: ['plan', 'steps', 'how to', 'break down'],
    description: 'planning',
  });
  return makeAgent({ name: 'lango-orchestrator', subAgents: [operator, navigator, planner, ...extra] });
}

describe('offline model tool syntax', () => {
  const tools = [spec(shell), spec(fsRead)];

  it('reads a tool name followed by a JSON object', () => {
    expect(parseToolCall('please exec_shell {"command": "echo {hi}"} now', tools)).toEqual({
      name: 'exec_shell',
      arguments: '{"command": "echo {hi}"}',
    });
  });

  it('reads key=value pairs with quotes and numbers', () => {
    expect(parseToolCall('fs_read path="my notes.txt" maxBytes=20', tools)).toEqual({
      name: 'fs_read',
      arguments: '{"path":"my notes.txt","maxBytes":20}',
    });
  });

  it('takes the rest of the line as the single required text argument', () => {
    expect(parseToolCall('exec_shell ls -la /tmp', tools)).toEqual({
      name: 'exec_shell',
      arguments: '{"command":"ls -la /tmp"}',
    });
  });

  it('finds no call when no tool is named as a whole word', () => {
    expect(parseToolCall('run my_exec_shell_thing', tools)).toBeUndefined();
    expect(parseToolCall('read a file', tools)).toBeUndefined();
  });

  it('scores routes by keywords, the route name and most by one of its tool names', () => {
    const route = { name: 'operator', description: '', keywords: ['run', 'file'], toolNames: ['exec_shell'] };
    expect(routeScore('read the files', route)).toBe(1);
    expect(routeScore('operator, run it', route)).toBe(3);
    expect(routeScore('exec_shell {"command":"ls"}', route)).toBe(10);
    expect(routeScore('what is the weather', route)).toBe(0);
  });

  it('recognises short greetings only', () => {
    expect(['hello', 'Hi there!', 'good morning', 'hey lango'].every(isGreeting)).toBe(true);
    expect(isGreeting('hi, please run the backup script on the server tonight')).toBe(false);
    expect(isGreeting('run the tests')).toBe(false);
  });
});

describe('offline model in the runtime', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => {
    store = openStore();
    shellRuns.length = 0;
  });
  afterEach(() => store.close());
  /** A runner over the test tree with the offline model, which routes by that tree (as the node wires it). */
  const runner = (extra: RemoteAgent[] = []) => {
    const root = tree(extra);
    return createRunner({
      tree: { current: () => root },
      model: createOfflineModel({ routes: (agentName) => routesOf(root, agentName) }),
      sessions: store.sessions,
      logger: store.logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 10,
    });
  };

  it('answers a greeting at the orchestrator without delegating, naming what it routes', async () => {
    const { events, result } = await collect(runner(), { principal: OWNER, sessionId: 's', text: 'hello' });
    expect(result.author).toBe('lango-orchestrator');
    expect(result.text).toMatch(/^Hello! I'm lango-orchestrator\. .*operator \(command execution, file operations\)/);
    expect(events.some((e) => e.type === 'transfer')).toBe(false);
  });

  it('routes a named tool to its owner, which runs it and answers with the result', async () => {
    const { events, result } = await collect(runner(), {
      principal: OWNER,
      sessionId: 's',
      text: 'exec_shell {"command": "echo hi"}',
    });
    expect(events).toContainEqual({ type: 'transfer', from: 'lango-orchestrator', to: 'operator' });
    expect(shellRuns).toEqual(['echo hi']);
    expect(result).toEqual({
      status: 'completed',
      author: 'operator',
      text: 'Result of exec_shell:\n{"exitCode":0,"stdout":"hi\\n"}',
    });
  });

  it("routes by the first tool the message names, even when it quotes another agent's tool", async () => {
    const scheduled: string[] = [];
    const schedule = defineTool({
      name: 'cron_add',
      description: 'Schedules a prompt.',
      parameters: z.object({ prompt: z.string() }),
      execute: async ({ prompt }) => void scheduled.push(prompt),
    });
    const automator = makeAgent({ name: 'automator', tools: [schedule], keywords: ['schedule'] });
    const root = makeAgent({ name: 'lango-orchestrator', subAgents: [tree().subAgents[0]!, automator] });
    const run = createRunner({
      tree: { current: () => root },
      model: createOfflineModel({ routes: (agentName) => routesOf(root, agentName) }),
      sessions: store.sessions,
      logger: store.logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 10,
    });
    const { result } = await collect(run, {
      principal: OWNER,
      sessionId: 's',
      text: 'cron_add {"prompt": "exec_shell {\\"command\\": \\"df -h\\"}"}',
    });
    expect(result.author).toBe('automator');
    expect(scheduled).toEqual(['exec_shell {"command": "df -h"}']);
    expect(shellRuns).toEqual([]);
  });

  it('routes by keywords and has the specialist explain its tools and syntax when none is named', async () => {
    const { result } = await collect(runner(), { principal: OWNER, sessionId: 's', text: 'please read a file for me' });
    expect(result.author).toBe('operator');
    expect(result.text).toContain(
      'My tools: exec_shell (Runs a shell command.); fs_read (Reads a file in the workspace.)',
    );
    expect(result.text).toContain('exec_shell {"command":"…"}');
  });

  it('passes unreadable JSON on so the user sees what was wrong', async () => {
    const { result } = await collect(runner(), {
      principal: OWNER,
      sessionId: 's',
      text: 'exec_shell {"command": "echo hi"',
    });
    expect(result.text).toBe('tool exec_shell failed: arguments are not valid JSON');
  });

  it('answers itself and lists its routes when nothing matches', async () => {
    const { events, result } = await collect(runner(), {
      principal: OWNER,
      sessionId: 's',
      text: 'what is the capital of France',
    });
    expect(result.author).toBe('lango-orchestrator');
    expect(result.text).toMatch(/^Nothing in your message matched an agent I route to\./);
    expect(result.text).toContain('navigator (web browsing)');
    expect(events.some((e) => e.type === 'transfer')).toBe(false);
  });

  it('does not route twice to a remote that failed, and tells the person what happened, not the advice meant for a model', async () => {
    const remote: RemoteAgent = {
      kind: 'remote',
      name: 'weather',
      description: 'weather forecasts',
      keywords: ['weather', 'forecast'],
      cardUrl: 'http://127.0.0.1:1/card',
      // eslint-disable-next-line require-yield
      async *invoke() {
        return { status: 'failed', reason: 'peer unreachable' };
      },
    };
    const { events, result } = await collect(runner([remote]), {
      principal: OWNER,
      sessionId: 's',
      text: 'weather forecast for Paris',
    });
    expect(events.filter((e) => e.type === 'transfer')).toHaveLength(1);
    expect(result.author).toBe('lango-orchestrator');
    expect(result.text).toContain('The remote agent weather failed: peer unreachable.');
    expect(result.text).not.toMatch(/route the request|answer it yourself/i);
  });

  /** A peer named `bob` that answers with what it was asked, recording each request. */
  const peerBob = (asked: string[]): RemoteAgent => ({
    kind: 'remote',
    name: 'bob',
    description: 'a peer node that also runs shell commands',
    keywords: [],
    cardUrl: 'http://127.0.0.1:1/card',
    // eslint-disable-next-line require-yield
    async *invoke({ text }) {
      asked.push(text);
      return { status: 'completed', text: `bob ran: ${text}` };
    },
  });

  it('routes a message that names a remote agent to it, though a local specialist owns the tool it names', async () => {
    const asked: string[] = [];
    const text = 'ask bob to exec_shell {"command": "echo hi"}';
    const { events, result } = await collect(runner([peerBob(asked)]), { principal: OWNER, sessionId: 's', text });
    expect(events).toContainEqual({ type: 'transfer', from: 'lango-orchestrator', to: 'bob' });
    expect(asked).toEqual([text]);
    expect(shellRuns).toEqual([]);
    expect(result).toMatchObject({ status: 'completed', author: 'bob', text: `bob ran: ${text}` });
  });

  it('a single flat agent hands a message naming a remote to it instead of running its own tool', async () => {
    const asked: string[] = [];
    const bob = peerBob(asked);
    const single = makeAgent({ name: 'lango-agent', tools: [shell], subAgents: [bob] });
    const r = createRunner({
      tree: { current: () => single },
      model: createOfflineModel({ routes: (agentName) => routesOf(single, agentName) }),
      sessions: store.sessions,
      logger: store.logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 10,
    });
    const { result } = await collect(r, { principal: OWNER, sessionId: 's', text: 'Bob: exec_shell echo hi' });
    expect(result.author).toBe('bob');
    expect(shellRuns).toEqual([]);
    // A path that merely contains the name is no mention of the agent.
    const own = await collect(r, { principal: OWNER, sessionId: 's2', text: 'exec_shell cat notes/bob.txt' });
    expect(own.result.author).toBe('lango-agent');
    expect(shellRuns).toEqual(['cat notes/bob.txt']);
  });

  it('works as a single flat agent: greeting and a key=value tool call', async () => {
    const single = makeAgent({ name: 'lango-agent', model, tools: [shell, fsRead] });
    const r = createRunner({
      tree: { current: () => single },
      sessions: store.sessions,
      logger: store.logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 10,
    });
    expect((await collect(r, { principal: OWNER, sessionId: 's', text: 'hi' })).result.text).toMatch(
      /^Hello! I'm lango-agent\. .*My tools: exec_shell/,
    );
    const { result } = await collect(r, { principal: OWNER, sessionId: 's', text: 'fs_read path=notes.txt' });
    expect(result).toEqual({
      status: 'completed',
      author: 'lango-agent',
      text: 'Result of fs_read:\ncontents of notes.txt',
    });
  });
});
