import { randomUUID } from 'node:crypto';
import { AgentCard, Role, type SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import { Agent } from 'undici';
import { createJsonRpcPeerClient, type PeerClient } from '../../src/federation/jsonRpcPeer';
import { peerClientChoice } from '../../src/federation/peerClient';
import { DEFAULT_PEER_LIMITS, PeerCallMeters } from '../../src/federation/peerCallMeter';
import { createPeerExchange, createPeerFetch, type PeerFetchOptions } from '../../src/federation/peerFetch';
import { createPeerClient, partsText } from '../../src/federation/remoteClient';
import { startPeer, startRawServer, type TestPeer } from '../support/federationPeers';

/**
 * The lean v1.0 JSON-RPC client beside the SDK client, on the wire: the same
 * request bytes that matter and the same events from a real @a2a-js/sdk 1.3
 * server. What both must do is their one contract
 * (`contracts/peerClient.contract.ts`, run by `peerClients.test.ts`).
 */

describe('the lean client against a real SDK peer, next to the SDK client', () => {
  const dispatcher = new Agent();
  const open: TestPeer[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  afterAll(() => dispatcher.destroy());

  const clients = async (streaming: boolean) => {
    const peer = await startPeer({ behaviour: 'echo', streaming });
    open.push(peer);
    const response = await fetch(`${peer.url}.well-known/agent-card.json`, { signal: AbortSignal.timeout(20_000) });
    const sdkCard = AgentCard.fromJSON(await response.json());
    const meters = new PeerCallMeters();
    const options: PeerFetchOptions = {
      dispatcher,
      limits: { ...DEFAULT_PEER_LIMITS, maxDurationMs: 20_000 },
      meters,
      legacy: false,
      onDeviation: () => undefined,
    };
    expect(peerClientChoice(sdkCard)).toEqual({ kind: 'lean', endpoint: peer.url });
    const lean = createJsonRpcPeerClient({
      endpoint: peer.url,
      exchange: createPeerExchange(options),
      polling: !streaming,
    });
    const sdk: PeerClient = await createPeerClient(sdkCard, {
      fetchImpl: createPeerFetch(options),
      polling: !streaming,
    });
    /** A fresh call: its signal and meter. */
    const call = () => {
      const signal = AbortSignal.timeout(20_000);
      return { meter: meters.start(signal), options: { signal, serviceParameters: { 'x-peer': 'k' } } };
    };
    return { peer, lean, sdk, call };
  };

  const params = (text: string): SendMessageRequest => ({
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: { hop: 1 },
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  });

  /** What a stream said, without the ids and times the peer makes up. */
  const shape = (events: StreamResponse[]) =>
    events.map((e) => {
      const p = e.payload;
      switch (p?.$case) {
        case 'task':
          return ['task', p.value.status?.state];
        case 'statusUpdate':
          return ['status', p.value.status?.state, partsText(p.value.status?.message?.parts)];
        case 'artifactUpdate':
          return ['artifact', p.value.artifact?.name, partsText(p.value.artifact?.parts), p.value.append];
        default:
          return [p?.$case];
      }
    });

  it('streams the same events and sends the same request as the SDK client', async () => {
    const { peer, lean, sdk, call } = await clients(true);
    const read = async (client: PeerClient) => {
      const events: StreamResponse[] = [];
      for await (const e of client.sendMessageStream(params('hello'), call().options)) events.push(e);
      return events;
    };
    const viaSdk = await read(sdk);
    const viaLean = await read(lean);
    expect(shape(viaLean)).toEqual(shape(viaSdk));
    expect(shape(viaLean)).toContainEqual(['artifact', expect.anything(), 'echo: hello', false]);
    expect(peer.requests.map((r) => r.method)).toEqual(['SendStreamingMessage', 'SendStreamingMessage']);
    const [fromSdk, fromLean] = peer.requests;
    const strip = (r: (typeof peer.requests)[number]) => ({
      ...r.params,
      message: { ...(r.params.message as object), messageId: undefined },
    });
    expect(strip(fromLean)).toEqual(strip(fromSdk));
    for (const name of ['a2a-version', 'content-type', 'accept', 'x-peer'])
      expect(fromLean.headers[name]).toBe(fromSdk.headers[name]);
  });

  it('stops reading at the answer as the peer ends its stream, and the abandoned body throws nothing', async () => {
    // As an SDK server answers with a Message: one event, then the end, which the caller does not wait for.
    const raw = await startRawServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const { id } = JSON.parse(body) as { id: number };
        const message = { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text: 'answer' }] };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { message } })}\n\n`);
      });
    });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    // Its own connections, so that ending them all is the event after which an abandoned body had its chance.
    const own = new Agent();
    try {
      const meters = new PeerCallMeters();
      const exchange = createPeerExchange({
        dispatcher: own,
        limits: { ...DEFAULT_PEER_LIMITS, maxDurationMs: 20_000 },
        meters,
        legacy: false,
        onDeviation: () => undefined,
      });
      const lean = createJsonRpcPeerClient({ endpoint: `${raw.origin}/`, exchange, polling: false });
      const answers: string[] = [];
      for (let i = 0; i < 20; i++) {
        const signal = AbortSignal.timeout(20_000);
        meters.start(signal);
        for await (const event of lean.sendMessageStream(params('hi'), { signal })) {
          if (event.payload?.$case !== 'message') continue;
          answers.push(partsText(event.payload.value.parts));
          break;
        }
      }
      expect(answers).toEqual(Array(20).fill('answer'));
      // Every connection those bodies came on is ended (their server's too): a body left unhandled would throw now.
      await own.destroy();
      await raw.close();
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await own.destroy();
      await raw.close();
    }
  });
});
