import { createMemoryLogger } from '../../src/log/logger';
import { createFederation, type Federation } from '../../src/federation/federation';
import { FEDERATION_HOPS_KEY } from '../../src/federation/hops';
import { deadPort, startPeer, type PeerOptions, type TestPeer } from '../support/federationPeers';
import { baseOptions, drain, entries } from '../support/federationRun';
import { waitFor } from '../support/waitFor';

/** The node federating SDK peers over A2A's gRPC binding, end to end on loopback. */
describe('remote agents over gRPC', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  const peer = async (options: PeerOptions): Promise<TestPeer> => {
    const p = await startPeer(options);
    open.push(p);
    return p;
  };
  const federate = async (limits: Record<string, number> = {}, ...list: Array<Record<string, unknown>>) => {
    const federation: Federation = createFederation({
      ...baseOptions(createMemoryLogger()),
      entries: entries(...list),
      limits: { maxDurationMs: 20_000, ...limits },
    });
    open.push(federation);
    await federation.start();
    return federation;
  };

  it('calls a peer whose card offers only gRPC, streaming, with the hop metadata', async () => {
    const p = await peer({ binding: 'grpc', behaviour: 'echo' });
    const federation = await federate({}, { name: 'grpcpeer', baseUrl: p.url });
    expect(federation.status()).toEqual([expect.objectContaining({ name: 'grpcpeer', state: 'healthy' })]);
    const [agent] = federation.agents();
    const { events, outcome } = await drain(agent, { text: 'hello over grpc' });
    expect(outcome).toEqual({ status: 'completed', text: 'echo: hello over grpc' });
    expect(events.map((e) => e.type === 'remote_call' && e.status)).toEqual(
      expect.arrayContaining(['sending', 'working', 'artifact', 'completed']),
    );
    expect(p.requests.map((r) => r.method)).toEqual(['sendStreamingMessage']);
    expect(p.requests[0].headers['a2a-version']).toBe('1.0');
    const metadata = (p.requests[0].params as { message: { metadata: Record<string, unknown> } }).message.metadata;
    expect(metadata[FEDERATION_HOPS_KEY]).toBe(1);
  });

  it('polls a gRPC peer that does not stream, and continues a task it asked about', async () => {
    const p = await peer({ binding: 'grpc', behaviour: 'ask', streaming: false });
    const federation = await federate({}, { name: 'weather', baseUrl: p.url });
    const [agent] = federation.agents();
    const state = {};
    const first = await drain(agent, { text: 'weather please', state });
    expect(first.outcome).toEqual({ status: 'input-required', text: 'Which city?' });
    const second = await drain(agent, { text: 'Lyon', state });
    expect(second.outcome).toEqual({ status: 'completed', text: 'weather in Lyon: sunny' });
    expect(p.requests.map((r) => r.method)).toEqual(expect.arrayContaining(['sendMessage', 'getTask']));
    // The follow-up named the remote task.
    const followUp = p.requests.filter((r) => r.method === 'sendMessage')[1];
    expect((followUp.params as { message: { taskId: string } }).message.taskId).not.toBe('');
  });

  it('cancels the remote task over gRPC when the caller gives up', async () => {
    const p = await peer({ binding: 'grpc', behaviour: 'slow' });
    const federation = await federate({}, { name: 'slowpoke', baseUrl: p.url });
    const [agent] = federation.agents();
    const abort = new AbortController();
    const running = drain(agent, { text: 'take your time', signal: abort.signal });
    await p.working;
    abort.abort();
    expect((await running).error).toMatchObject({ name: 'AbortError' });
    await waitFor(() => p.cancelled.length === 1, 20_000, 'the peer to hear the cancel');
    expect(p.requests.map((r) => r.method)).toContain('cancelTask');
  });

  it('holds a gRPC peer to a2a.peerLimits: an event past maxEvents fails the call as an invalid answer', async () => {
    const p = await peer({ binding: 'grpc', behaviour: 'echo' });
    const federation = await federate({ maxEvents: 2 }, { name: 'chatty', baseUrl: p.url });
    const { outcome } = await drain(federation.agents()[0], { text: 'talk' });
    expect(outcome).toEqual({
      status: 'failed',
      reason: 'remote agent chatty invalid answer: more than a2a.peerLimits.maxEvents (2) stream events',
    });
  });

  it('names a gRPC peer that does not answer unreachable', async () => {
    const port = await deadPort();
    const p = await peer({
      binding: 'grpc',
      behaviour: 'echo',
      card: (card) => ({
        ...card,
        supportedInterfaces: [{ url: `127.0.0.1:${port}`, protocolBinding: 'GRPC', protocolVersion: '1.0' }],
      }),
    });
    const federation = await federate({}, { name: 'gone', baseUrl: p.url });
    const { outcome } = await drain(federation.agents()[0], { text: 'anyone?' });
    expect(outcome).toEqual({ status: 'failed', reason: expect.stringMatching(/^remote agent gone unreachable: /) });
  });

  it('skips an entry that asks for gRPC when the card offers none', async () => {
    const p = await peer({ behaviour: 'echo' });
    const federation = await federate({}, { name: 'jsononly', baseUrl: p.url, transport: 'grpc' });
    expect(federation.agents()).toEqual([]);
    expect(federation.status()[0]).toMatchObject({
      state: 'skipped',
      reason: expect.stringContaining('transport: grpc, but the card offers no plaintext gRPC interface'),
    });
  });

  it('keeps no gRPC interface on another host than the card’s', async () => {
    const p = await peer({
      binding: 'grpc',
      behaviour: 'echo',
      card: (card) => ({
        ...card,
        supportedInterfaces: [{ url: '198.51.100.7:50051', protocolBinding: 'GRPC', protocolVersion: '1.0' }],
      }),
    });
    const federation = await federate({}, { name: 'elsewhere', baseUrl: p.url });
    expect(federation.agents()).toEqual([]);
    expect(federation.status()[0].reason).toMatch(/card offers no interface on its own origin/);
  });
});
