import { TurnAccount } from '../../src/observation/accounting';
import { readHopAccount, type HopAccount } from '../../src/protocol/accounting';

/**
 * The account of a turn (issue 33): kept from what the runner reports
 * through the observer seam, its tokens and totals summed; and a peer's
 * account read with bounds — texts cut and redacted, steps past the bound
 * dropped and the hop marked truncated, totals recomputed whatever the peer
 * claimed, anything that is not a hop refused.
 */

function peerHop(more: Partial<HopAccount> = {}): HopAccount {
  return {
    node: 'http://b.example',
    name: 'node-b',
    principal: 'caller-x',
    actors: ['node-a'],
    startedAt: '2025-01-01T00:00:00.000Z',
    wallMs: 40,
    tokens: { input: 20, output: 3 },
    total: { input: 20, output: 3 },
    steps: [
      {
        kind: 'agent',
        name: 'lango-orchestrator',
        startMs: 0,
        wallMs: 39,
        tokens: { input: 20, output: 3 },
        modelCalls: 1,
        modelMs: 5,
        steps: [{ kind: 'tool', name: 'search_knowledge', startMs: 6, wallMs: 2, ok: true }],
      },
    ],
    ...more,
  };
}

describe('the account of a turn', () => {
  it('keeps agents, their model tokens, tools and remote calls with the remote own hop nested, totals summed', () => {
    const account = new TurnAccount({
      node: 'http://a.example',
      name: 'node-a',
      principal: { id: 'caller-x', actors: ['node-z'] },
      taskId: 'task-1',
    });
    const turn = account.observation;
    const orchestrator = turn.child('agent', 'lango-orchestrator');
    const model = orchestrator.child('model', 'gpt');
    model.set({ inputTokens: 10, outputTokens: 2 });
    model.end();
    const tool = orchestrator.child('tool', 'fs_read');
    tool.end('tool fs_read refused');
    orchestrator.child('transfer', 'node-b').end();
    orchestrator.end();
    const step = turn.child('agent', 'node-b');
    const remote = step.child('remote', 'node-b');
    remote.set({ status: 'completed' });
    remote.nest?.(peerHop());
    remote.end();
    step.end();
    turn.end();

    const hop = account.finish();
    expect(hop).toMatchObject({
      node: 'http://a.example',
      name: 'node-a',
      principal: 'caller-x',
      actors: ['node-z'],
      taskId: 'task-1',
      tokens: { input: 10, output: 2 },
      total: { input: 30, output: 5 },
      steps: [
        {
          kind: 'agent',
          name: 'lango-orchestrator',
          tokens: { input: 10, output: 2 },
          modelCalls: 1,
          steps: [{ kind: 'tool', name: 'fs_read', ok: false }],
        },
        {
          kind: 'agent',
          name: 'node-b',
          steps: [{ kind: 'remote', name: 'node-b', status: 'completed', hop: { name: 'node-b' } }],
        },
      ],
    });
    expect(hop.startedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(JSON.parse(JSON.stringify(hop))).toEqual(hop);
  });
});

describe("reading a peer's account", () => {
  const bounds = { maxDepth: 3, maxSteps: 50 };

  it('recomputes every total from the tokens it holds, whatever the peer claimed', () => {
    const claimed = peerHop({ total: { input: 1_000_000, output: 9 } });
    expect(readHopAccount(claimed, bounds)?.total).toEqual({ input: 20, output: 3 });
  });

  it('refuses what is not a hop, and drops steps that are not steps (marking the hop truncated)', () => {
    expect(readHopAccount('a tree', bounds)).toBeUndefined();
    expect(readHopAccount({ name: 'no node or principal' }, bounds)).toBeUndefined();
    const read = readHopAccount(
      { ...peerHop(), steps: [...peerHop().steps, { kind: 'mystery', name: 'x' }, 42] },
      bounds,
    );
    expect(read?.steps).toHaveLength(1);
    expect(read?.truncated).toBe(true);
  });

  it('reads hops no deeper than maxDepth and no more steps than maxSteps', () => {
    const nested = (depth: number): HopAccount =>
      peerHop({
        steps: [
          {
            kind: 'remote',
            name: `level-${depth}`,
            startMs: 0,
            wallMs: 1,
            status: 'completed',
            ...(depth > 0 ? { hop: nested(depth - 1) } : {}),
          },
        ],
        tokens: { input: 1, output: 1 },
      });
    const read = readHopAccount(nested(10), bounds)!;
    let depth = 1;
    for (let hop = read; ; depth++) {
      const next = hop.steps[0]?.kind === 'remote' ? hop.steps[0].hop : undefined;
      if (!next) {
        expect(hop.truncated).toBe(true);
        break;
      }
      hop = next;
    }
    expect(depth).toBe(3);
    expect(read.total).toEqual({ input: 3, output: 3 });
    const wide = peerHop({
      steps: Array.from({ length: 200 }, (_, i) => ({
        kind: 'tool' as const,
        name: `t${i}`,
        startMs: i,
        wallMs: 1,
        ok: true,
      })),
    });
    const cut = readHopAccount(wide, bounds)!;
    expect(cut.steps).toHaveLength(50);
    expect(cut.truncated).toBe(true);
  });

  it('cuts long texts and masks registered secrets in them', () => {
    const secret = 'sk-exchanged-token-0123456789';
    const read = readHopAccount(peerHop({ name: `leak ${secret}`, principal: 'p'.repeat(10_000) }), {
      ...bounds,
      redact: (text) => text.split(secret).join('[REDACTED]'),
    })!;
    expect(read.name).toBe('leak [REDACTED]');
    expect(read.principal).toHaveLength(256);
  });
});
