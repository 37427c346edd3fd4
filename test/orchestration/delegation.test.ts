import { z } from 'zod';
import type { RunEvent } from '../../src/agent/events';
import { createRunner } from '../../src/agent/runner';
import { defineTool, type ToolContext } from '../../src/agent/tool';
import type { TurnRunner } from '../../src/agent/turn';
import type { ModelRequest } from '../../src/llm/model';
import { createMemoryLogger } from '../../src/log/logger';
import { buildAgentTree } from '../../src/orchestration/tree';
import { buildOrchestratorSystemPrompt, createSubAgentPrompt, loadPromptSections } from '../../src/prompt';
import { openTestStorage } from '../support/storage';
import { ScriptedModel, callTool, say, transferTo, type ScriptedTurn } from '../support/scriptedModel';
import { orchestrationTools } from '../support/orchestrationTools';
import { OWNER } from '../../src/principal';

/**
 * The orchestrator's model in these tests does what the instruction asks of a
 * model, and nothing else: it answers greetings itself, and otherwise reads the
 * routing table out of its own instruction (`### name` + Keywords) and
 * transfers to the agent whose keywords best match the request, by the exact
 * heading name. So the tests fail if the instruction's table is unusable.
 */
function followRoutingTable(request: ModelRequest): ScriptedTurn {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  const text = last?.content ?? '';
  if (/^\s*(hello|hi|hey)\b/i.test(text)) return say('Hello! How can I help you today?');
  const blocks = request.instruction.split('\n### ').slice(1);
  const scored = blocks.map((block) => {
    const name = block.split('\n')[0];
    const keywords = /\*\*Keywords\*\*: \[([^\]]*)\]/.exec(block)?.[1].split(', ') ?? [];
    const hits = keywords.filter((k) => new RegExp(`\\b${k}\\b`, 'i').test(text)).length;
    return { name, hits };
  });
  const best = scored.reduce((a, b) => (b.hits > a.hits ? b : a), { name: '', hits: 0 });
  return best.hits > 0 ? transferTo(best.name) : say('I can answer that myself.');
}

describe('delegation through the built tree and the runtime', () => {
  let test: ReturnType<typeof openTestStorage>;
  const logger = createMemoryLogger();
  const shellCalls: Array<{ command: string; agent: string }> = [];
  const execShell = defineTool({
    name: 'exec_shell',
    description: 'Runs a shell command (test double that records calls).',
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }, ctx: ToolContext) => {
      shellCalls.push({ command, agent: ctx.agentName });
      return { exitCode: 0, stdout: 'a.txt\nb.txt\n' };
    },
  });
  const tools = [execShell, ...orchestrationTools('fs_read', 'browser_navigate', 'memory_store', 'odd_tool')];

  function runnerFor(model: ScriptedModel): TurnRunner {
    const sections = loadPromptSections({ logger });
    const root = buildAgentTree({
      tools,
      model,
      systemPrompt: buildOrchestratorSystemPrompt(sections),
      subAgentPrompt: createSubAgentPrompt({ sections }),
    });
    return createRunner({
      tree: { current: () => root },
      sessions: test.stores.sessions,
      logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 5,
    });
  }

  async function run(runner: TurnRunner, text: string) {
    const events: RunEvent[] = [];
    const turn = runner.run({ principal: OWNER, sessionId: `test:${text}`, text });
    for (;;) {
      const step = await turn.next();
      if (step.done) return { events, result: step.value };
      events.push(step.value);
    }
  }

  beforeAll(() => {
    test = openTestStorage();
  });
  afterAll(() => test.close());

  it('answers a greeting from the orchestrator without delegating', async () => {
    const model = new ScriptedModel([followRoutingTable]);
    const { events, result } = await run(runnerFor(model), 'hello');
    expect(result).toMatchObject({ status: 'completed', author: 'lango-orchestrator' });
    expect(events.some((e) => e.type === 'transfer')).toBe(false);
    expect(model.agents).toEqual(['lango-orchestrator']);
  });

  it('delegates a tool-requiring task to the operator by its exact name, which runs the tool and answers', async () => {
    const model = new ScriptedModel([
      followRoutingTable,
      callTool('exec_shell', { command: 'ls' }),
      say('The directory holds a.txt and b.txt (exit code 0).'),
    ]);
    shellCalls.length = 0;
    const { events, result } = await run(runnerFor(model), 'run the shell command ls');
    expect(events).toContainEqual({ type: 'transfer', from: 'lango-orchestrator', to: 'operator' });
    expect(shellCalls).toEqual([{ command: 'ls', agent: 'operator' }]);
    expect(result).toMatchObject({ status: 'completed', author: 'operator' });
    expect(result.text).toContain('a.txt');
  });

  it('offers the orchestrator no tool but transfer_to_agent, and routes to exactly the created sub-agents', async () => {
    const model = new ScriptedModel([followRoutingTable]);
    await run(runnerFor(model), 'hi there');
    const request = model.requests[0];
    expect(request.tools.map((t) => t.name)).toEqual(['transfer_to_agent']);
    const transfer = request.tools[0].parameters as { properties: { agent_name: { enum: string[] } } };
    expect(transfer.properties.agent_name.enum).toEqual(['operator', 'navigator', 'planner', 'chronicler']);
  });

  it('offers each specialist only its own tools and its assembled prompt', async () => {
    const model = new ScriptedModel([followRoutingTable, say('Opened the page.')]);
    await run(runnerFor(model), 'browse the web page example.org');
    const navigatorCall = model.requests[1];
    expect(navigatorCall.agentName).toBe('navigator');
    expect(navigatorCall.tools.map((t) => t.name)).toContain('browser_navigate');
    expect(navigatorCall.tools.map((t) => t.name)).not.toContain('exec_shell');
    expect(navigatorCall.tools.map((t) => t.name)).not.toContain('odd_tool');
    expect(navigatorCall.instruction).toContain('You are the navigator');
    expect(navigatorCall.instruction).toContain('# Safety');
  });
});
