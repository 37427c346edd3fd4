import { z } from 'zod';
import type { LlmAgent } from '../../src/agent/agent';
import { defineTool } from '../../src/agent/tool';
import type { Model } from '../../src/llm/model';
import { OWNER } from '../../src/principal';
import { ScriptedModel, callTool, say, transferTo } from '../support/scriptedModel';
import { collect, makeAgent, openStore, runnerFor } from './helpers';

const echo = defineTool({
  name: 'exec_echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ echoed: text }),
});

/** A model client that can ask its endpoint for another model: each model name its own scripted queue. */
function switchable(models: Record<string, ScriptedModel>, name = 'main'): Model {
  const model = models[name];
  return {
    name: `client:${name}`,
    stream: (request) => model.stream(request),
    withModel: (other) => switchable(models, other),
  };
}

/** orchestrator → operator (exec_echo), both on `model`, each with its own instruction. */
function tree(model: Model): LlmAgent {
  const operator = makeAgent({ name: 'operator', model, tools: [echo], instruction: 'You run commands.' });
  return makeAgent({ name: 'lango-orchestrator', model, subAgents: [operator], instruction: 'You route.' });
}

describe('runner: a replayed turn', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  it("sends one agent's edited system prompt instead of its own, asks the model named of the same client, and tells no turn-end hook", async () => {
    const main = new ScriptedModel();
    const other = new ScriptedModel([transferTo('operator'), callTool('exec_echo', { text: 'x' }), say('Done again.')]);
    const hooked: string[] = [];
    let chatHooked!: () => void;
    const chatEnded = new Promise<void>((resolve) => (chatHooked = resolve));
    const run = runnerFor(store, () => tree(switchable({ main, other })), {
      contextProvider: async ({ agentName }) => `memory for ${agentName}`,
      onTurnEnd: ({ sessionId }) => {
        hooked.push(sessionId);
        if (sessionId === 'chat:1') chatHooked();
      },
    });
    const replayed = await collect(run, {
      principal: OWNER,
      sessionId: 'replay:1',
      text: 'echo x',
      replay: { instructions: { operator: 'You are terse.' }, model: 'other' },
    });
    expect(replayed.result).toEqual({ status: 'completed', text: 'Done again.', author: 'operator' });
    expect(main.requests).toHaveLength(0);
    // The edited agent gets the text as its whole system prompt; the other keeps its own and its context.
    expect(other.requests.map((r) => [r.agentName, r.instruction])).toEqual([
      ['lango-orchestrator', 'You route.\n\nmemory for lango-orchestrator'],
      ['operator', 'You are terse.'],
      ['operator', 'You are terse.'],
    ]);
    // A turn that is not a replay tells the hook as always; the replay, committed first, told it nothing.
    main.push(say('Hello.'));
    await collect(run, { principal: OWNER, sessionId: 'chat:1', text: 'hi' });
    await chatEnded;
    expect(hooked).toEqual(['chat:1']);
  });

  it('fails the turn with the reason when the model cannot switch to another', async () => {
    const model = new ScriptedModel();
    const run = runnerFor(store, () => tree(model));
    const { result } = await collect(run, {
      principal: OWNER,
      sessionId: 'replay:2',
      text: 'hi',
      replay: { model: 'gpt-x' },
    });
    expect(result).toEqual({
      status: 'failed',
      text: 'the model scripted cannot switch to gpt-x',
      author: 'lango-orchestrator',
    });
    expect(model.requests).toHaveLength(0);
  });
});
