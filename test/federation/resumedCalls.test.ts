import { Agent } from 'undici';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { createMemoryLogger } from '../../src/log/logger';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { startCuttingProxy, type CuttingProxy } from '../support/cuttingProxy';
import { startPeer, type TestPeer } from '../support/federationPeers';
import { baseOptions, drain, entries, logged } from '../support/federationRun';
import { PacedRunner } from '../support/pacedRunner';
import { waitFor } from '../support/waitFor';

/**
 * The node's own delegated calls over a connection that drops (issue 27):
 * a peer that offers the generation extension (a lango node) is reached
 * through a proxy that cuts its streams; the call resumes the stream from
 * its last event, or sends the same message again when it was cut before
 * the peer named its task. A peer without the extension fails the call as
 * before.
 */
describe('delegated calls resumed after a cut', () => {
  let dispatcher: Agent;
  let proxy: CuttingProxy;
  const open: Array<{ close(): Promise<void> }> = [];
  beforeEach(async () => {
    dispatcher = new Agent();
    proxy = await startCuttingProxy();
    open.push(proxy);
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    await dispatcher.destroy();
  });

  /** A lango node answering in `chunks` words, whose card sends callers through the proxy. */
  const lango = async (chunks: number, paced = false) => {
    const runner = new PacedRunner(chunks);
    const node: A2ATestNode = await startA2ANode({ runner, config: { a2a: { baseUrl: proxy.url } } });
    open.push(node);
    proxy.target(Number(new URL(node.url).port));
    if (!paced) runner.release();
    return { node, runner };
  };
  const load = async (logger = createMemoryLogger()) => {
    const { agents, skipped } = await loadRemoteAgents({
      ...baseOptions(logger),
      dispatcher,
      entries: entries({ name: 'peer', baseUrl: `${proxy.url}/` }),
      // A generous bound: a call ends by its answer or its cut, never by a busy machine being slow.
      limits: { maxDurationMs: 25_000 },
    });
    expect(skipped).toEqual([]);
    return agents[0];
  };
  const streamedText = (events: Awaited<ReturnType<typeof drain>>['events']) =>
    events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('');

  it('resumes a stream cut after four events from its last one: the answer whole, each piece once, one turn', async () => {
    const { runner } = await lango(12);
    const logger = createMemoryLogger();
    const agent = await load(logger);
    proxy.cutNextStream(4);
    const { outcome, events } = await drain(agent, { text: 'tell me a story' });
    expect(proxy.cuts).toBe(1);
    expect(outcome).toMatchObject({ status: 'completed', text: runner.answer });
    expect(streamedText(events)).toBe(runner.answer);
    expect(runner.turns).toHaveLength(1);
    expect(logged(logger, 'info', 'remote call resumed after a cut')[0].meta).toMatchObject({ attempt: 1 });
    expect(logged(logger, 'info', 'remote call resumed after a cut')[0].meta?.after).toMatch(/:\d+$/);
  });

  it('sends the same message again when the stream is cut before any event: the peer runs one turn', async () => {
    const { runner } = await lango(3, true);
    const agent = await load();
    proxy.cutNextStream(0);
    const call = drain(agent, { text: 'once only' });
    // The turn holds its answer until the send again is answered with a stream: it finds the turn running and
    // follows it. (Released at the cut instead, the turn could end before the send again arrived, which is then
    // answered with the finished task alone, and the caller sees the answer but none of it streamed.)
    await waitFor(() => proxy.cuts === 1 && proxy.streams === 2, 20_000, 'the send again answered with a stream');
    runner.release();
    const { outcome, events } = await call;
    expect(outcome).toMatchObject({ status: 'completed', text: runner.answer });
    expect(streamedText(events)).toBe(runner.answer);
    expect(runner.turns).toEqual(['once only']);
  });

  it('fails the call as before when the peer does not offer the extension', async () => {
    const peer: TestPeer = await startPeer({
      behaviour: 'echo',
      card: (card) => ({
        ...card,
        supportedInterfaces: (card.supportedInterfaces as Array<Record<string, unknown>>).map((i) => ({
          ...i,
          url: `${proxy.url}/`,
        })),
      }),
    });
    open.push(peer);
    proxy.target(peer.port);
    const agent = await load();
    proxy.cutNextStream(1);
    const { outcome } = await drain(agent, { text: 'hello' });
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(peer.requests.map((r) => r.method)).toEqual(['SendStreamingMessage']);
  });
});
