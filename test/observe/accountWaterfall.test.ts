import type { HopAccount, RemoteStep } from '../../src/protocol/accounting';
import { accountRemoteSteps } from '../../src/observe/accountWaterfall';
import { buildWaterfall, type WaterfallSpan } from '../../src/observe/waterfall';
import type { TaskTimeline } from '../../src/store/timelines';

/** A peer's hop that ran one agent calling one tool. */
function peerHop(name: string, tool: string, ok = true): HopAccount {
  return {
    node: `http://127.0.0.1/${name}`,
    name,
    principal: 'caller-x',
    startedAt: '2026-11-29T08:00:00.000Z',
    wallMs: 30,
    tokens: { input: 5, output: 1 },
    total: { input: 5, output: 1 },
    steps: [
      {
        kind: 'agent',
        name: 'librarian',
        startMs: 2,
        wallMs: 25,
        tokens: { input: 5, output: 1 },
        modelCalls: 1,
        modelMs: 10,
        steps: [{ kind: 'tool', name: tool, startMs: 12, wallMs: 3, ok }],
      },
    ],
  };
}

const remote = (name: string, startMs: number, hop?: HopAccount): RemoteStep => ({
  kind: 'remote',
  name,
  startMs,
  wallMs: 40,
  status: 'completed',
  ...(hop ? { hop } : {}),
});

describe("a turn's waterfall with its task's account", () => {
  // The turn called node-b twice (the second time B answered without a hop of its own), then node-c.
  const account: HopAccount = {
    ...peerHop('node-a', 'unused'),
    steps: [
      {
        kind: 'agent',
        name: 'lango-orchestrator',
        startMs: 0,
        wallMs: 200,
        tokens: { input: 1, output: 1 },
        modelCalls: 1,
        modelMs: 5,
        steps: [
          remote('node-b', 10, peerHop('node-b', 'save_knowledge')),
          remote('node-b', 60),
          remote('node-c', 110, peerHop('node-c', 'fs_read', false)),
        ],
      },
    ],
  };
  const turn: TaskTimeline = {
    id: 'turn-1',
    taskId: 'task-1',
    sessionId: 's',
    caller: 'caller-x',
    startedAt: '2026-11-29T08:00:00.000Z',
    ms: 200,
    steps: [
      { kind: 'agent', name: 'lango-orchestrator', atMs: 0, ms: 200 },
      { kind: 'remote', name: 'node-b', atMs: 10, ms: 40, parent: 0 },
      { kind: 'remote', name: 'node-b', atMs: 60, ms: 40, parent: 0 },
      { kind: 'remote', name: 'node-c', atMs: 110, ms: 40, parent: 0 },
    ],
  };

  it("nests each call's own hop under it, the n-th call to a peer by the n-th in the account, on the turn's clock (a step's start is from its hop's)", () => {
    const waterfall = buildWaterfall(turn, { remoteSteps: accountRemoteSteps(account) });
    const calls = waterfall.children[0]!.children;
    const row = (span: WaterfallSpan): unknown => [
      span.node,
      span.kind,
      span.name,
      span.atMs,
      span.error ?? null,
      span.children.map(row),
    ];
    expect(calls.map(row)).toEqual([
      [
        undefined,
        'remote',
        'node-b',
        10,
        null,
        [['node-b', 'agent', 'librarian', 12, null, [['node-b', 'tool', 'save_knowledge', 22, null, []]]]],
      ],
      [undefined, 'remote', 'node-b', 60, null, []],
      [
        undefined,
        'remote',
        'node-c',
        110,
        null,
        [['node-c', 'agent', 'librarian', 112, null, [['node-c', 'tool', 'fs_read', 122, 'failed', []]]]],
      ],
    ]);
    expect(calls[0]!.children[0]).toMatchObject({ inputTokens: 5, outputTokens: 1, ms: 25 });
    expect(calls[0]!.children[0]).not.toHaveProperty('step');
  });

  it('nests nothing for a peer the account never called', () => {
    const steps = accountRemoteSteps(account);
    expect(steps({ step: 1, peer: 'node-z', turn })).toBeUndefined();
  });
});
