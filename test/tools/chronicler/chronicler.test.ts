import { createOfflineModel } from '../../../src/llm/offline';
import type { Model } from '../../../src/llm/model';
import { createMemoryLogger } from '../../../src/log/logger';
import { namedCaller, OWNER } from '../../../src/principal';
import { chroniclerFamily, createChronicler, type ChroniclerInstance } from '../../../src/tools/chronicler/family';
import type { SessionMessage } from '../../../src/tools/chronicler/chronicler';
import { callTool, configOf, tempNode, toolContext } from '../../support/librarianHarness';
import { ScriptedModel } from '../../support/scriptedModel';

/** A real session's messages, as the runner persists them. */
const SESSION: SessionMessage[] = [
  {
    role: 'user',
    content: 'Hi! I am planning the Lisbon offsite for the data team in March. There will be twelve people.',
  },
  {
    role: 'assistant',
    author: 'lango-orchestrator',
    content: 'Happy to help with the Lisbon offsite. Do you have a budget and dates?',
  },
  {
    role: 'user',
    content: 'The budget is 9000 euros. Dates are March 12 to March 14. Maria is vegetarian, please remember that.',
  },
  {
    role: 'assistant',
    author: 'planner',
    content:
      'Noted: 9000 euros for twelve people, March 12 to 14, and Maria is vegetarian. I suggest booking the venue first, then flights, then the dinner.',
  },
  { role: 'user', content: 'Book the venue near Alfama if you can. I prefer places with a terrace.' },
  {
    role: 'assistant',
    author: 'planner',
    content: 'I will look for venues near Alfama with a terrace and report back with three options under the budget.',
  },
];

const settings = { enabled: true, observeAfterTokens: 60, reflectAfterObservations: 3, recallBudgetTokens: 120 };

describe('chronicler observational memory', () => {
  let node: ReturnType<typeof tempNode>;
  const opened: ChroniclerInstance[] = [];
  beforeEach(() => {
    node = tempNode('chronicler', { clock: () => new Date('2026-11-21T12:00:00Z') });
  });
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close?.();
    await node.cleanup();
  });

  const open = (model: Model, overrides: Partial<typeof settings> = {}) => {
    const memory = createChronicler({
      config: configOf({ observationalMemory: { ...settings, ...overrides } }),
      stores: node.stores,
      logger: createMemoryLogger(),
      model,
    });
    opened.push(memory);
    return memory;
  };

  it('observes a session through the model, reflects past the threshold, and lists both', async () => {
    const model = new ScriptedModel([
      (request) => {
        expect(request.agentName).toBe('chronicler');
        expect(request.tools).toEqual([]);
        expect(request.messages[0].content).toContain('assistant (planner): Noted: 9000 euros');
        return {
          text: '- The user is planning a Lisbon offsite for twelve people, March 12 to 14.\n- The budget is 9000 euros.\n- Maria is vegetarian.\n- The user prefers a venue near Alfama with a terrace.',
        };
      },
      (request) => {
        expect(request.instruction).toMatch(/reflector/);
        expect(request.messages[0].content).toContain('- Maria is vegetarian.');
        return {
          text: '- Lisbon offsite, March 12 to 14, twelve people, 9000 euros; Maria is vegetarian; venue near Alfama with a terrace.',
        };
      },
    ]);
    const memory = open(model);
    expect(memory.onTurnEnd({ principal: OWNER, sessionId: 'ctx-lisbon', messages: SESSION })).toBeUndefined();
    expect(model.requests).toHaveLength(0); // nothing ran on the caller's path
    await memory.chronicler.idle();

    const ctx = toolContext('ctx-lisbon', 'chronicler');
    const observations = await callTool(memory.tools, 'memory_list_observations', {}, ctx);
    expect(observations.observations.map((o: { content: string; origin: string }) => [o.origin, o.content])).toEqual([
      ['observer', 'The user is planning a Lisbon offsite for twelve people, March 12 to 14.'],
      ['observer', 'The budget is 9000 euros.'],
      ['observer', 'Maria is vegetarian.'],
      ['observer', 'The user prefers a venue near Alfama with a terrace.'],
    ]);
    const reflections = await callTool(memory.tools, 'memory_list_reflections', {}, ctx);
    expect(reflections.reflections).toEqual([
      expect.objectContaining({
        sessionId: 'ctx-lisbon',
        observationCount: 4,
        content:
          'Lisbon offsite, March 12 to 14, twelve people, 9000 euros; Maria is vegetarian; venue near Alfama with a terrace.',
      }),
    ]);
    const elsewhere = await callTool(
      memory.tools,
      'memory_list_observations',
      {},
      toolContext('ctx-other', 'chronicler'),
    );
    expect(elsewhere.observations).toEqual([]);
    expect(model.remaining).toBe(0);
  });

  it('condenses extractively with the offline model, whose answers are no summary', async () => {
    const memory = open(createOfflineModel(), { reflectAfterObservations: 2 });
    memory.onTurnEnd({ principal: OWNER, sessionId: 'ctx-offline', messages: SESSION });
    await memory.chronicler.idle();
    const observations = await memory.chronicler.store.observations(OWNER, { sessionId: 'ctx-offline', limit: 50 });
    expect(observations.length).toBeGreaterThanOrEqual(2);
    expect(observations.length).toBeLessThanOrEqual(8);
    const transcript = SESSION.map((m) => m.content).join(' ');
    for (const o of observations) {
      const [, sentence] = /^(?:user|assistant \([a-z-]+\)): (.+)$/.exec(o.content) ?? [];
      expect(sentence).toBeDefined();
      expect(transcript).toContain(sentence); // extracted, not invented
    }
    const reflections = await memory.chronicler.store.reflections(OWNER, { sessionId: 'ctx-offline', limit: 5 });
    expect(reflections).toHaveLength(1);
    expect(reflections[0].content.length).toBeGreaterThan(0);
  });

  it('waits for the token threshold and observes only messages it has not seen', async () => {
    const model = new ScriptedModel([
      { text: '- The user is planning a Lisbon offsite and set a budget of 9000 euros.' },
      { text: '- The user prefers a venue near Alfama with a terrace.' },
    ]);
    const memory = open(model, { observeAfterTokens: 40, reflectAfterObservations: 50 });
    memory.onTurnEnd({ principal: OWNER, sessionId: 's', messages: SESSION.slice(0, 1) });
    await memory.chronicler.idle();
    expect(model.requests).toHaveLength(0);
    memory.onTurnEnd({ principal: OWNER, sessionId: 's', messages: SESSION.slice(0, 4) });
    await memory.chronicler.idle();
    expect(model.requests).toHaveLength(1);
    memory.onTurnEnd({ principal: OWNER, sessionId: 's', messages: SESSION });
    await memory.chronicler.idle();
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1].messages[0].content).not.toContain('Lisbon offsite for the data team');
    expect(model.requests[1].messages[0].content).toContain('Alfama');
  });

  it('never holds up the turn: a hanging model is cancelled on close', async () => {
    const model = new ScriptedModel([{ hang: true }]);
    const memory = open(model);
    memory.onTurnEnd({ principal: OWNER, sessionId: 'slow', messages: SESSION });
    await model.requested(1);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0].signal.aborted).toBe(false);
    await memory.close?.();
    expect(model.requests[0].signal.aborted).toBe(true);
    expect(await memory.chronicler.store.observations(OWNER, { limit: 10 })).toEqual([]);
  });

  it('records events, reflects on demand, recalls by keyword and offers relevant memories within the budget', async () => {
    const memory = open(new ScriptedModel([{ error: 'model down' }]), { recallBudgetTokens: 40 });
    const ctx = toolContext('ctx-events', 'chronicler');
    await callTool(
      memory.tools,
      'observe_event',
      { content: 'The user switched the offsite venue to Porto because Lisbon was fully booked.' },
      ctx,
    );
    await callTool(memory.tools, 'observe_event', { content: 'The user wants weekly status emails on Mondays.' }, ctx);
    const reflected = await callTool(memory.tools, 'reflect_summary', {}, ctx);
    expect(reflected.reflection.content).toMatch(/Porto|Mondays/);
    expect(reflected.reflection.observationCount).toBe(2);
    const nothing = await callTool(memory.tools, 'reflect_summary', {}, ctx);
    expect(nothing).toEqual({ reflection: null, note: 'no observations to reflect on yet' });

    const recalled = await callTool(
      memory.tools,
      'memory_recall',
      { query: 'where is the offsite venue?' },
      toolContext('another'),
    );
    expect(recalled.memories.map((m: { type: string }) => m.type)).toEqual(expect.arrayContaining(['observation']));
    expect(recalled.memories[0].content).toMatch(/Porto/);
    expect(recalled.memories[0].score).toBeGreaterThan(0);

    const context = await memory.contextProvider({
      principal: OWNER,
      sessionId: 'another',
      text: 'Remind me about the offsite venue',
      agentName: 'planner',
    });
    expect(context).toMatch(/^Relevant memories/);
    expect(context).toContain('Porto');
    expect(Math.ceil(context!.length / 4)).toBeLessThanOrEqual(40);
    expect(
      await memory.contextProvider({
        principal: OWNER,
        sessionId: 'another',
        text: 'quantum chromodynamics',
        agentName: 'planner',
      }),
    ).toBeUndefined();
    // What the owner's conversations left in memory never reaches another caller's prompt.
    expect(
      await memory.contextProvider({
        principal: namedCaller('bearer:peer'),
        sessionId: 'another',
        text: 'Remind me about the offsite venue',
        agentName: 'planner',
      }),
    ).toBeUndefined();
  });

  it('keeps memories in the database across restarts', async () => {
    const first = open(new ScriptedModel());
    await first.chronicler.recordEvent(OWNER, 'persist', 'The deploy freeze starts on December 20.');
    await first.close?.();
    await node.reopen();
    const second = open(new ScriptedModel());
    const listed = await callTool(second.tools, 'memory_list_observations', { scope: 'all' });
    expect(listed.observations.map((o: { content: string }) => o.content)).toEqual([
      'The deploy freeze starts on December 20.',
    ]);
  });

  it('is a tool family only with observationalMemory.enabled', () => {
    expect(chroniclerFamily.enabled(configOf({}))).toBe(true);
    expect(chroniclerFamily.enabled(configOf({ observationalMemory: { enabled: false } }))).toBe(false);
    expect(open(new ScriptedModel()).tools.map((t) => t.name)).toEqual([
      'memory_list_observations',
      'memory_list_reflections',
      'memory_recall',
      'observe_event',
      'reflect_summary',
    ]);
  });
});
