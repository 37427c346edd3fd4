import { z } from 'zod';
import { defineTool } from '../../src/agent/tool';
import { combineObservers, NOOP_OBSERVER, type Observation, type Observer } from '../../src/observation/observer';
import { OWNER } from '../../src/principal';
import { ScriptedModel, callTool, transferTo } from '../support/scriptedModel';
import { collect, makeAgent, openStore, runnerFor } from '../agent/helpers';

/** What a recording observer saw: one line per observation, indented by depth, with its attributes and error. */
function recordingObserver(): Observer & { lines: string[]; open: number } {
  const lines: string[] = [];
  const record = {
    lines,
    open: 0,
    active: true,
    turn: () => observation('turn', 'turn', 0, {}),
    storeWrite: () => {},
    storeNotification: () => {},
  };
  function observation(kind: string, name: string, depth: number, attributes: Record<string, unknown>): Observation {
    record.open++;
    const seen = { ...attributes };
    let ended = false;
    return {
      child: (childKind, childName, childAttributes) =>
        observation(childKind, childName, depth + 1, childAttributes ?? {}),
      set: (more) => Object.assign(seen, more),
      end: (error) => {
        if (ended) return;
        ended = true;
        record.open--;
        const keys = ['inputTokens', 'outputTokens', 'args', 'result', 'status', 'from', 'to'].filter(
          (k) => seen[k] !== undefined,
        );
        const detail = keys.map((k) => `${k}=${String(seen[k])}`).join(' ');
        lines.push(
          `${'  '.repeat(depth)}${kind} ${name}${detail ? ` ${detail}` : ''}${error ? ` error=${error}` : ''}`,
        );
      },
      traceparent: () => undefined,
    };
  }
  return record;
}

const echo = defineTool({
  name: 'exec_echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ echoed: text }),
});

describe('observer seam', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  it('reports the turn, each agent step, the model calls with tokens, the tool call and the transfer, each ended once', async () => {
    const model = new ScriptedModel([
      transferTo('operator'),
      callTool('exec_echo', { text: 'hi' }),
      { text: 'Echoed.', usage: { inputTokens: 12, outputTokens: 3 } },
    ]);
    const operator = makeAgent({ name: 'operator', model, tools: [echo] });
    const root = makeAgent({ name: 'lango-orchestrator', model, subAgents: [operator] });
    const observer = recordingObserver();
    const runner = runnerFor(store, () => root, { observer });
    const { result } = await collect(runner, { principal: OWNER, sessionId: 's1', text: 'echo hi' });
    expect(result.text).toBe('Echoed.');
    // Ends are recorded innermost first; the order of lines is the order the work finished in.
    expect(observer.lines).toEqual([
      '    model scripted inputTokens=0 outputTokens=0',
      '    transfer operator from=lango-orchestrator to=operator',
      '  agent lango-orchestrator',
      '    model scripted inputTokens=0 outputTokens=0',
      '    tool exec_echo args={"text":"hi"} result={"echoed":"hi"}',
      '    model scripted inputTokens=12 outputTokens=3',
      '  agent operator',
      'turn turn status=completed',
    ]);
    expect(observer.open).toBe(0);
  });

  it('ends a failed turn with its reason', async () => {
    const model = new ScriptedModel([{ error: 'provider down' }]);
    const observer = recordingObserver();
    const runner = runnerFor(store, () => makeAgent({ name: 'solo', model }), { observer });
    const { result } = await collect(runner, { principal: OWNER, sessionId: 's2', text: 'hi' });
    expect(result.status).toBe('failed');
    expect(observer.lines.at(-1)).toBe('turn turn status=failed error=the model failed: provider down');
    expect(observer.open).toBe(0);
  });

  it('combines no listening sinks into the no-op observer and fans out to several', () => {
    expect(combineObservers([])).toBe(NOOP_OBSERVER);
    expect(combineObservers([NOOP_OBSERVER])).toBe(NOOP_OBSERVER);
    const a = recordingObserver();
    const b = recordingObserver();
    const both = combineObservers([a, b, NOOP_OBSERVER]);
    both.turn({ caller: 'owner', sessionId: 's' }).child('tool', 't').end('boom');
    expect(a.lines).toEqual(['  tool t error=boom']);
    expect(b.lines).toEqual(a.lines);
  });
});
