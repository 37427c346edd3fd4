import { Agent } from 'undici';
import { createMemoryLogger } from '../../src/log/logger';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { startPeer, type TestPeer } from '../support/federationPeers';
import { startMisbehavingPeer } from '../support/misbehavingPeer';
import { scriptedAgent } from '../support/openaiServer';
import { startRelayModel } from '../support/reliabilityPeer';
import { rpc, sendMessageBody, startReliabilityNode } from '../support/reliabilityNode';
import { baseOptions, drain, entries } from '../support/federationRun';

/**
 * Issue 12: a follow-up to a remote agent whose context continues sends
 * only what the peer has not seen; the whole transcript goes only with a
 * new remote conversation.
 */
describe('follow-ups to a remote agent', () => {
  let peer: TestPeer;
  let dispatcher: Agent;

  beforeAll(async () => {
    peer = await startPeer({ name: 'Weather', behaviour: 'echo' });
    dispatcher = new Agent();
  });
  afterAll(async () => {
    await peer.close();
    await dispatcher.destroy();
  });

  /** The text parts of the n-th message the peer received. */
  const sent = (n: number): string[] => {
    const message = peer.requests.filter((r) => /SendMessage|SendStreamingMessage/.test(r.method))[n].params
      .message as { parts: Array<{ text?: string }> };
    return message.parts.map((p) => p.text ?? '');
  };

  it('sends the transcript once, then only what happened since the peer last answered', async () => {
    const { agents } = await loadRemoteAgents({
      ...baseOptions(createMemoryLogger()),
      dispatcher,
      entries: entries({ name: 'weather', baseUrl: peer.url }),
    });
    const weather = agents[0];
    const state: Record<string, unknown> = {};
    const before = ['user: I am in Lisbon', 'operator: noted'];

    const first = await drain(weather, { text: 'weather there?', context: before, state });
    expect(first.outcome).toEqual({ status: 'completed', text: expect.stringContaining('weather there?') });
    expect(sent(0)).toEqual([
      'Conversation so far (context, oldest first):\nuser: I am in Lisbon\noperator: noted\n\nRequest:',
      'weather there?',
    ]);

    // The runner's next window: the old lines, the exchange with the peer, and a side conversation.
    const afterFirst = [
      ...before,
      'user: weather there?',
      `weather: ${first.outcome && 'text' in first.outcome ? first.outcome.text : ''}`,
    ];
    const side = ['user: also, what time is it?', 'operator: 10:00'];
    await drain(weather, { text: 'and tomorrow?', context: [...afterFirst, ...side], state });
    expect(sent(1)).toEqual([
      'Conversation since your last reply (context, oldest first):\nuser: also, what time is it?\noperator: 10:00\n\nRequest:',
      'and tomorrow?',
    ]);

    // Nothing new since: the request alone, never the previous turn again.
    const afterSecond = [...afterFirst, ...side, 'user: and tomorrow?', 'weather: echo: and tomorrow?'];
    await drain(weather, { text: 'and the day after?', context: afterSecond, state });
    expect(sent(2)).toEqual(['and the day after?']);
    const contexts = peer.requests.map((r) => (r.params.message as { contextId?: string }).contextId);
    expect(contexts[1]).toBe(contexts[2]);
    expect(contexts[1]).toBeTruthy();
  });

  it('sends the whole transcript again when the remote conversation starts over', async () => {
    const { agents } = await loadRemoteAgents({
      ...baseOptions(createMemoryLogger()),
      dispatcher,
      entries: entries({ name: 'weather', baseUrl: peer.url }),
    });
    const count = peer.requests.length;
    await drain(agents[0], { text: 'fresh start', context: ['user: hi', 'operator: hello'], state: {} });
    const message = peer.requests[count].params.message as { parts: Array<{ text?: string }> };
    expect(message.parts[0].text).toMatch(/^Conversation so far/);
  });

  it('through a running node: the second turn of a conversation sends the peer only the new request', async () => {
    const weird = await startMisbehavingPeer({ name: 'weird' });
    const model = await startRelayModel('weird');
    const node = await startReliabilityNode({
      config: { agent: scriptedAgent(model), a2a: { remoteAgents: [{ name: 'weird', agentCardUrl: weird.cardUrl }] } },
    });
    try {
      const first = await rpc(node.url, sendMessageBody('first question', 1));
      const contextId = (first.json.result as { task: { contextId: string } }).task.contextId;
      await rpc(node.url, sendMessageBody('second question', 2, { contextId }));
      const parts = weird.bodies.map((b) =>
        ((b.params as { message: { parts: Array<{ text?: string }> } }).message.parts ?? []).map((p) => p.text),
      );
      expect(parts).toEqual([['first question'], ['second question']]);
    } finally {
      await node.close();
      await weird.close();
      await model.close();
    }
  });
});
