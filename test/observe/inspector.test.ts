import { SecretRegistry } from '../../src/log/redact';
import type { ObservedExchange } from '../../src/observation/observer';
import { EXCHANGE_CHARS, EXCHANGE_FIELD_CHARS, ExchangeKeeper, TURN_EXCHANGE_CHARS } from '../../src/observe/exchanges';
import { buildWaterfall, type WaterfallSpan } from '../../src/observe/waterfall';
import type { TaskTimeline } from '../../src/store/timelines';

const SECRET = 'sk-live-inspector-0123';
const secrets = new SecretRegistry();
secrets.add(SECRET);
const redact = (text: string) => secrets.redactText(text);
/** A keeper of one turn's exchanges; `redactions` counts the texts it redacted. */
function keeper(redactions = { count: 0 }) {
  return new ExchangeKeeper({
    redact: (text) => {
      redactions.count += 1;
      return redact(text);
    },
    toolsSeen: new WeakMap(),
  });
}

/** What a model step of the librarian was sent and answered. */
function exchange(more: Partial<ObservedExchange> = {}): ObservedExchange {
  return {
    instruction: `You are the librarian. The API key is ${SECRET}.`,
    messages: [
      { role: 'user', content: 'remember my cat' },
      {
        role: 'assistant',
        content: '',
        author: 'librarian',
        toolCalls: [{ id: 'c1', name: 'secrets_store', arguments: `{"name":"gh","value":"ghp_x","note":"${SECRET}"}` }],
      },
      { role: 'tool', name: 'secrets_store', toolCallId: 'c1', content: `{"stored":"gh","echo":"${SECRET}"}` },
    ],
    tools: [{ name: 'save_knowledge', description: 'Saves knowledge.', parameters: { type: 'object' } }],
    answer: {
      text: 'Saved.',
      toolCalls: [{ id: 'c2', name: 'save_knowledge', arguments: '{"password":"p4ss","content":"x"}' }],
    },
    ...more,
  };
}

describe('the model inspector keeps an exchange', () => {
  it('redacted through the node’s redactor, with credential-named arguments masked, whole when it fits', () => {
    const kept = keeper().keep(4, exchange());
    expect(JSON.stringify(kept)).not.toContain(SECRET);
    expect(kept.step).toBe(4);
    expect(kept.instruction).toBe('You are the librarian. The API key is [REDACTED].');
    expect(kept.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(JSON.parse(kept.messages[1].toolCalls![0].arguments)).toEqual({
      name: 'gh',
      value: '•••',
      note: '[REDACTED]',
    });
    expect(kept.messages[2]).toMatchObject({ name: 'secrets_store', toolCallId: 'c1' });
    expect(JSON.parse(kept.answer.toolCalls[0].arguments)).toEqual({ password: '•••', content: 'x' });
    expect(kept.tools).toEqual([
      { name: 'save_knowledge', description: 'Saves knowledge.', parameters: '{"type":"object"}' },
    ]);
    expect(kept).not.toHaveProperty('cut');
    expect(kept).not.toHaveProperty('omittedMessages');
  });

  it('cuts a long field, keeps the newest messages that fit and says how many older ones it left out', () => {
    const long = 'x'.repeat(EXCHANGE_FIELD_CHARS + 500);
    const many = Array.from({ length: 40 }, (_, i) => ({
      role: 'user' as const,
      content: `${i} ${'y'.repeat(3_000)}`,
    }));
    const kept = keeper().keep(1, exchange({ instruction: long, messages: many }));
    expect(kept.instruction).toHaveLength(EXCHANGE_FIELD_CHARS + 1);
    expect(kept.instruction.endsWith('…')).toBe(true);
    expect(kept.cut).toBe(true);
    expect(JSON.stringify(kept.messages).length).toBeLessThanOrEqual(EXCHANGE_CHARS + 2_000);
    expect(kept.omittedMessages).toBe(40 - kept.messages.length);
    expect(kept.messages.at(-1)!.content.startsWith('39 ')).toBe(true);
    expect(kept.messages.length).toBeGreaterThan(5);
  });

  it('works each message, prompt and tool list out once per turn, however often a call resends it', () => {
    const redactions = { count: 0 };
    const turnKeeper = keeper(redactions);
    const first = exchange();
    turnKeeper.keep(1, first);
    const once = redactions.count;
    // The next call resends the same history, prompt and tools, and adds its own messages.
    const next = exchange({ messages: [...first.messages, { role: 'user', content: 'and then?' }] });
    expect(turnKeeper.keep(2, { ...next, tools: first.tools }).messages).toHaveLength(4);
    // Only the new message and the new answer (its text, its tool call's value and arguments): 4 texts.
    expect(redactions.count - once).toBe(4);
  });

  it('keeps only the answer once the turn’s budget is spent', () => {
    const turnKeeper = keeper();
    const big = { role: 'user' as const, content: 'z'.repeat(EXCHANGE_FIELD_CHARS) };
    // Each of these keeps about 40,000 characters (five of its six messages fit in one exchange).
    for (let step = 0; step < TURN_EXCHANGE_CHARS / 40_000 + 1; step++)
      turnKeeper.keep(step, exchange({ messages: Array.from({ length: 6 }, () => ({ ...big })) }));
    // What is left is less than this exchange's system prompt alone: it keeps its answer only.
    const kept = turnKeeper.keep(99, exchange({ instruction: 'p'.repeat(EXCHANGE_FIELD_CHARS) }));
    expect(kept).toMatchObject({ step: 99, instruction: '', messages: [], tools: [], omittedMessages: 3, cut: true });
    expect(kept.answer.text).toBe('Saved.');
  });
});

/** A turn: the orchestrator transfers to the librarian, which calls a tool and answers; then a remote call. */
function turn(withParents: boolean): TaskTimeline {
  const parent = (index: number) => (withParents ? { parent: index } : {});
  return {
    id: 't1',
    sessionId: 's',
    caller: 'owner',
    asked: 'remember my cat',
    startedAt: '2026-05-01T10:00:00.000Z',
    ms: 100,
    status: 'completed',
    agent: 'librarian',
    steps: [
      { kind: 'agent', name: 'lango-orchestrator', agent: 'lango-orchestrator', atMs: 0, ms: 10 },
      { kind: 'model', name: 'm', agent: 'lango-orchestrator', atMs: 1, ms: 5, inputTokens: 3, ...parent(0) },
      { kind: 'transfer', name: 'librarian', agent: 'lango-orchestrator', atMs: 7, ms: 0, ...parent(0) },
      { kind: 'agent', name: 'librarian', agent: 'librarian', atMs: 10, ms: 60 },
      { kind: 'model', name: 'm', agent: 'librarian', atMs: 11, ms: 5, ...parent(3) },
      { kind: 'tool', name: 'save_knowledge', agent: 'librarian', atMs: 17, ms: 3, args: '{}', ...parent(3) },
      { kind: 'agent', name: 'peer', agent: 'peer', atMs: 70, ms: 30 },
      { kind: 'remote', name: 'peer', agent: 'peer', atMs: 71, ms: 28, hops: 1, ...parent(6) },
    ],
    exchanges: [],
  };
}

const shape = (span: WaterfallSpan): unknown => [
  `${span.kind} ${span.name}`,
  ...(span.children.length ? [span.children.map(shape)] : []),
];

describe('the waterfall of a turn', () => {
  it('nests each call under the agent that made it, by the parent each step records', () => {
    const inspected = { ...turn(true), exchanges: [{ step: 4 } as never] };
    const waterfall = buildWaterfall(inspected);
    expect(shape(waterfall)).toEqual([
      'turn remember my cat',
      [
        ['agent lango-orchestrator', [['model m'], ['transfer librarian']]],
        ['agent librarian', [['model m'], ['tool save_knowledge']]],
        ['agent peer', [['remote peer']]],
      ],
    ]);
    expect(waterfall).toMatchObject({ atMs: 0, ms: 100, agent: 'librarian' });
    const librarian = waterfall.children[1];
    expect(librarian.children[0]).toMatchObject({ step: 4, inspectable: true, atMs: 11, ms: 5 });
    expect(librarian.children[1]).not.toHaveProperty('inspectable');
  });

  it('nests the calls of a timeline stored before steps named their parent under the agent step before them', () => {
    expect(shape(buildWaterfall(turn(false)))).toEqual(shape(buildWaterfall(turn(true))));
  });

  it("nests a remote node's own steps under the call that reached it, on this turn's clock, named by that node", () => {
    const waterfall = buildWaterfall(turn(true), {
      remoteSteps: ({ step, peer }) =>
        step === 7 && peer === 'peer'
          ? [
              {
                kind: 'agent',
                name: 'peer-orchestrator',
                atMs: 2,
                ms: 20,
                step: 0,
                children: [{ kind: 'model', name: 'm', atMs: 3, ms: 4, step: 1, inspectable: true, children: [] }],
              },
            ]
          : undefined,
    });
    const remote = waterfall.children[2].children[0];
    expect(remote.children).toEqual([
      {
        kind: 'agent',
        name: 'peer-orchestrator',
        node: 'peer',
        atMs: 73,
        ms: 20,
        children: [{ kind: 'model', name: 'm', node: 'peer', atMs: 74, ms: 4, children: [] }],
      },
    ]);
  });
});
