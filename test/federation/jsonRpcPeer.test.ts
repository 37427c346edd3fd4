import { randomUUID } from 'node:crypto';
import { AgentCard, Role, TaskState, type SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import { Agent } from 'undici';
import { createJsonRpcPeerClient, leanJsonRpcEndpoint, type PeerClient } from '../../src/federation/jsonRpcPeer';
import {
  createPeerExchange,
  createPeerFetch,
  DEFAULT_PEER_LIMITS,
  PeerCallMeters,
  type PeerFetchOptions,
} from '../../src/federation/peerFetch';
import { createPeerClient, isProtocolError, partsText } from '../../src/federation/remoteClient';
import { startPeer, startRawServer, type TestPeer } from '../support/federationPeers';
import { holdsFor, waitFor } from '../support/waitFor';

/**
 * The lean v1.0 JSON-RPC client (issue 15, the hop) must be a drop-in for
 * the SDK client on the peers it serves: against a real @a2a-js/sdk 1.3
 * server both send the same request and read the same events, answers and
 * A2A errors, through the same per-call meter. Every other card keeps the
 * SDK client.
 */

const card = (interfaces: Array<Record<string, string>>) =>
  AgentCard.fromJSON({ name: 'p', description: 'p', version: '1', supportedInterfaces: interfaces });

describe('which peers get the lean client', () => {
  it('takes the interface the SDK factory would take, only when that is v1.0 JSON-RPC without a tenant', () => {
    const rpc10 = { url: 'http://a/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' };
    const rpc03 = { url: 'http://a/v03', protocolBinding: 'JSONRPC', protocolVersion: '0.3' };
    const rest10 = { url: 'http://a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' };
    expect(leanJsonRpcEndpoint(card([rpc10]))).toBe('http://a/rpc');
    expect(leanJsonRpcEndpoint(card([rpc03, rpc10]))).toBe('http://a/rpc');
    expect(leanJsonRpcEndpoint(card([rpc03]))).toBeUndefined();
    expect(leanJsonRpcEndpoint(card([rest10, rpc10]))).toBeUndefined();
    expect(leanJsonRpcEndpoint(card([{ ...rpc10, tenant: 't1' }]))).toBeUndefined();
    expect(
      leanJsonRpcEndpoint(card([{ url: 'http://a/g', protocolBinding: 'GRPC', protocolVersion: '1.0' }, rpc10])),
    ).toBe('http://a/rpc');
  });
});

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
    const response = await fetch(`${peer.url}.well-known/agent-card.json`, { signal: AbortSignal.timeout(5_000) });
    const sdkCard = AgentCard.fromJSON(await response.json());
    const meters = new PeerCallMeters();
    const options: PeerFetchOptions = {
      dispatcher,
      limits: { ...DEFAULT_PEER_LIMITS, maxDurationMs: 5_000 },
      meters,
      legacy: false,
      onDeviation: () => undefined,
    };
    const endpoint = leanJsonRpcEndpoint(sdkCard);
    expect(endpoint).toBe(peer.url);
    const lean = createJsonRpcPeerClient({
      endpoint: endpoint!,
      exchange: createPeerExchange(options),
      polling: !streaming,
    });
    const sdk: PeerClient = await createPeerClient(sdkCard, {
      fetchImpl: createPeerFetch(options),
      polling: !streaming,
    });
    /** A fresh call: its signal and meter. */
    const call = () => {
      const signal = AbortSignal.timeout(5_000);
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

  it('sends without blocking and reads the task back, as the SDK client does for a peer that does not stream', async () => {
    const { peer, lean, call } = await clients(false);
    const first = await lean.sendMessage(params('ping'), call().options);
    expect(peer.requests[0]).toMatchObject({
      method: 'SendMessage',
      params: { configuration: { returnImmediately: true } },
    });
    expect('id' in first && first.id).toEqual(expect.any(String));
    const id = (first as { id: string }).id;
    const task = await waitFor(
      async () => {
        const t = await lean.getTask({ tenant: '', id, historyLength: 0 }, call().options);
        return t.status?.state === TaskState.TASK_STATE_COMPLETED && t;
      },
      5_000,
      'the polled task completed',
    );
    expect(partsText(task.artifacts[0]?.parts)).toBe('echo: ping');
  });

  it("throws the peer's A2A error as the SDK client does, and the call's meter names it a rejection", async () => {
    const { lean, sdk, call } = await clients(true);
    for (const client of [sdk, lean]) {
      for (const ask of [
        (o: ReturnType<typeof call>['options']) =>
          client.getTask({ tenant: '', id: 'no-such-task', historyLength: 0 }, o),
        (o: ReturnType<typeof call>['options']) =>
          client.cancelTask({ tenant: '', id: 'no-such-task', metadata: undefined }, o),
      ]) {
        const { meter, options } = call();
        const error = await ask(options).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isProtocolError(error)).toBe(true);
        expect(meter).toMatchObject({ responded: true, invalid: undefined, rejected: expect.stringMatching(/task/i) });
      }
    }
  });

  it('refuses a request outside every call before it leaves', async () => {
    const { peer, lean } = await clients(true);
    await expect(
      lean.getTask({ tenant: '', id: 'x', historyLength: 0 }, { signal: AbortSignal.timeout(1_000) }),
    ).rejects.toThrow(/outside a delegated call/);
    expect(peer.requests).toEqual([]);
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
    try {
      const meters = new PeerCallMeters();
      const exchange = createPeerExchange({
        dispatcher,
        limits: { ...DEFAULT_PEER_LIMITS, maxDurationMs: 5_000 },
        meters,
        legacy: false,
        onDeviation: () => undefined,
      });
      const lean = createJsonRpcPeerClient({ endpoint: `${raw.origin}/`, exchange, polling: false });
      const answers: string[] = [];
      for (let i = 0; i < 20; i++) {
        const signal = AbortSignal.timeout(5_000);
        meters.start(signal);
        for await (const event of lean.sendMessageStream(params('hi'), { signal })) {
          if (event.payload?.$case !== 'message') continue;
          answers.push(partsText(event.payload.value.parts));
          break;
        }
      }
      expect(answers).toEqual(Array(20).fill('answer'));
      await holdsFor(() => uncaught.length === 0, 200, 'no uncaught error from an abandoned body');
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await raw.close();
    }
  });
});
