import { scriptedAgent, type OpenAIServer } from '../support/openaiServer';
import { startFaultyPeer, startRelayModel, type FaultyPeer } from '../support/reliabilityPeer';
import { askNode, startReliabilityNode, type NodeAnswer, type ReliabilityNode } from '../support/reliabilityNode';
import { waitFor } from '../support/waitFor';

const CALL_TIMEOUT_MS = 1_500;

async function peerState(node: ReliabilityNode): Promise<string> {
  const res = await fetch(`${node.url}/agents`);
  const doc = (await res.json()) as { agents: { name: string; kind: string; health?: { state: string } }[] };
  const peer = doc.agents.find((a) => a.name === 'faulty');
  return peer ? (peer.health?.state ?? 'unknown') : 'absent';
}

/** A failure the caller can read: says the peer failed, and how. */
const CLEAR_FAILURE =
  /faulty|remote|peer|timed out|timeout|unavailable|refused|failed|invalid|not available|unknown agent|circuit|ECONNREFUSED/i;

describe('faults in a remote peer during delegated tasks', () => {
  let peer: FaultyPeer;
  let model: OpenAIServer;
  let node: ReliabilityNode;

  beforeAll(async () => {
    // A slow answer comes long after the call's deadline, however late a busy machine fires that deadline's timer:
    // only the timeout can end the call.
    peer = await startFaultyPeer({ slowMs: 120_000 });
    model = await startRelayModel('faulty');
    node = await startReliabilityNode({
      config: {
        agent: scriptedAgent(model),
        a2a: { remoteAgents: [{ name: 'faulty', agentCardUrl: peer.cardUrl, timeoutMs: CALL_TIMEOUT_MS }] },
      },
    });
  });

  afterAll(async () => {
    await node?.close();
    await peer?.close();
    await model?.close();
  });

  it('relays a healthy peer answer', async () => {
    const outcome = await askNode(node, 'ping 1');
    expect(outcome.state).toBe('TASK_STATE_COMPLETED');
    expect(outcome.text).toContain('pong: ping 1');
    expect(await peerState(node)).toBe('healthy');
  });

  it('answers with a clear failure by the deadline when the peer is slower than its timeout, then recovers', async () => {
    peer.mode = 'slow';
    const slow = await askNode(node, 'ping slow');
    expect(slow.text).toMatch(CLEAR_FAILURE);
    expect(slow.text).toContain(`timed out after ${CALL_TIMEOUT_MS} ms`);
    expect(slow.text).not.toContain('pong');
    peer.mode = 'ok';
    const after = await askNode(node, 'ping 2');
    expect(after.text).toContain('pong: ping 2');
  });

  it('answers with a clear failure when the peer answers garbage, then recovers', async () => {
    peer.mode = 'garbage';
    const garbage = await askNode(node, 'ping garbage');
    expect(garbage.text).toMatch(CLEAR_FAILURE);
    expect(garbage.text).not.toContain('<<<garbage>>>');
    peer.mode = 'ok';
    expect((await askNode(node, 'ping 3')).text).toContain('pong: ping 3');
  });

  it('opens the circuit when the peer is killed, answers every caller meanwhile, and closes it once the peer is back', async () => {
    await peer.kill();
    const outcomes: NodeAnswer[] = [];
    for (let i = 0; i < 4; i++) outcomes.push(await askNode(node, `ping dead ${i}`));
    for (const outcome of outcomes) expect(outcome.text).toMatch(CLEAR_FAILURE);
    expect(outcomes[0].text).toMatch(/faulty.*unreachable/);
    // Three failures open the circuit: the tree holds a stand-in, so the fourth call is told at once that it is down.
    expect(outcomes[3].text).toMatch(
      /faulty is unavailable: its calls have failed since \d\d:\d\d \(unreachable: .*\); retrying/,
    );
    expect(['open', 'absent']).toContain(await peerState(node));
    // Told at once: the stand-in answers, without trying the peer.
    const whileOpen = await askNode(node, 'ping while open');
    expect(whileOpen.text).toMatch(/faulty is unavailable: its calls have failed since \d\d:\d\d/);
    expect(whileOpen.text).not.toContain('pong');

    await peer.restart();
    // The circuit re-probes after its backoff (5 s by default) and closes on success.
    await waitFor(async () => (await peerState(node)) === 'healthy', 20_000, 'the peer to be healthy again');
    const back = await askNode(node, 'ping back');
    expect(back.state).toBe('TASK_STATE_COMPLETED');
    expect(back.text).toContain('pong: ping back');
  }, 60_000);
});
