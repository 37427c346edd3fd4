import { Agent } from 'undici';
import { createMemoryLogger } from '../../src/log/logger';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { FEDERATION_HOPS_KEY, FEDERATION_PATH_KEY } from '../../src/federation/hops';
import fs from 'node:fs';
import path from 'node:path';
import { startPeer, startRawServer, type TestPeer } from '../support/federationPeers';
import { baseOptions, drain, entries, logged } from '../support/federationRun';

describe('remote agent calls over real A2A peers', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  let dispatcher: Agent;
  beforeEach(() => {
    dispatcher = new Agent();
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    await dispatcher.destroy();
  });
  const peer = async (...args: Parameters<typeof startPeer>): Promise<TestPeer> => {
    const p = await startPeer(...args);
    open.push(p);
    return p;
  };
  const load = (logger = createMemoryLogger(), ...list: Array<Record<string, unknown>>) =>
    loadRemoteAgents({
      ...baseOptions(logger),
      dispatcher,
      entries: entries(...list),
      limits: { maxDurationMs: 20_000 },
    });

  it('loads a reachable v1.0 peer and streams a delegated request to completion', async () => {
    const p = await peer({ name: 'Weather', behaviour: 'echo' });
    const logger = createMemoryLogger();
    const { agents, skipped } = await load(logger, { name: 'weather', baseUrl: p.url });
    expect(skipped).toEqual([]);
    expect(agents.map((a) => a.name)).toEqual(['weather']);
    expect(agents[0].keywords).toEqual(expect.arrayContaining(['weather', 'forecast', 'paris']));
    expect(agents[0].description).toContain('Test peer Weather');
    expect(logged(logger, 'info', 'remote agent loaded')[0].meta).toMatchObject({
      name: 'weather',
      protocol: '1.0',
      streaming: true,
    });

    const { events, outcome } = await drain(agents[0], { text: 'hello there' });
    expect(outcome).toEqual({ status: 'completed', text: 'echo: hello there' });
    expect(events.map((e) => e.type === 'remote_call' && e.status)).toEqual(
      expect.arrayContaining(['sending', 'working', 'artifact', 'completed']),
    );
    expect(p.requests.map((r) => r.method)).toEqual(['SendStreamingMessage']);
    expect(p.requests[0].headers['a2a-version']).toBe('1.0');
  });

  it('sends the conversation so far with a new remote task, as a text part before the request', async () => {
    const p = await peer({ name: 'Weather', behaviour: 'echo' });
    const { agents } = await load(createMemoryLogger(), { name: 'weather', baseUrl: p.url });
    await drain(agents[0], {
      text: 'and tomorrow there?',
      context: ['user: I live in Lyon', 'lango-orchestrator: Noted.'],
    });
    const message = p.requests[0].params.message as { parts: { text?: string }[] };
    expect(message.parts.map((part) => part.text)).toEqual([
      'Conversation so far (context, oldest first):\nuser: I live in Lyon\nlango-orchestrator: Noted.\n\nRequest:',
      'and tomorrow there?',
    ]);
  });

  it('polls a peer that does not stream and still returns its answer', async () => {
    const p = await peer({ behaviour: 'echo', streaming: false });
    const { agents } = await load(undefined, { name: 'plain', agentCardUrl: `${p.url}.well-known/agent-card.json` });
    const { outcome } = await drain(agents[0], { text: 'ping' });
    expect(outcome).toEqual({ status: 'completed', text: 'echo: ping' });
    expect(p.requests[0].method).toBe('SendMessage');
    expect(p.requests[0].params).toMatchObject({ configuration: { returnImmediately: true } });
  });

  it('speaks v0.3 to a peer served by @a2a-js/sdk 0.3.14', async () => {
    const p = await peer({ version: '0.3', behaviour: 'echo' });
    const logger = createMemoryLogger();
    const { agents, skipped } = await load(logger, { name: 'legacy', baseUrl: p.url });
    expect(skipped).toEqual([]);
    expect(logged(logger, 'info', 'remote agent loaded')[0].meta).toMatchObject({ protocol: '0.3' });
    const { outcome } = await drain(agents[0], { text: 'old school' });
    expect(outcome).toEqual({ status: 'completed', text: 'echo: old school' });
    expect(p.requests[0].method).toBe('message/send');
    const sent = p.requests[0].params as { message: { parts: Array<{ kind: string; text: string }> } };
    expect(sent.message.parts[0]).toMatchObject({ kind: 'text', text: 'old school' });
  });

  it('continues an input-required task on a streaming v0.3 peer', async () => {
    const p = await peer({ version: '0.3', behaviour: 'ask', streaming: true });
    const { agents } = await load(undefined, { name: 'oldweather', baseUrl: p.url });
    const state: Record<string, unknown> = {};
    expect((await drain(agents[0], { text: 'weather?', state })).outcome).toEqual({
      status: 'input-required',
      text: 'Which city?',
    });
    expect((await drain(agents[0], { text: 'Porto', state })).outcome).toEqual({
      status: 'completed',
      text: 'weather in Porto: sunny',
    });
    expect(p.requests.map((r) => r.method)).toEqual(['message/stream', 'message/stream']);
  });

  it('keeps an input-required remote task in the session state and continues it', async () => {
    const p = await peer({ behaviour: 'ask' });
    const { agents } = await load(undefined, { name: 'weather', baseUrl: p.url });
    const state: Record<string, unknown> = {};
    const first = await drain(agents[0], { text: 'what is the weather?', state });
    expect(first.outcome).toEqual({ status: 'input-required', text: 'Which city?' });
    const kept = { ...(state['a2a:weather'] as { taskId: string; contextId: string }) };
    expect(kept.taskId).toEqual(expect.any(String));

    const second = await drain(agents[0], { text: 'Lisbon', state });
    expect(second.outcome).toEqual({ status: 'completed', text: 'weather in Lisbon: sunny' });
    const continued = p.requests[1].params as { message: { taskId: string; contextId: string } };
    expect(continued.message).toMatchObject({ taskId: kept.taskId, contextId: kept.contextId });
    expect((state['a2a:weather'] as { taskId?: string }).taskId).toBeUndefined();
  });

  it('sends CancelTask to the remote when the delegated call is aborted', async () => {
    const p = await peer({ behaviour: 'slow' });
    const logger = createMemoryLogger();
    const { agents } = await load(logger, { name: 'slowpoke', baseUrl: p.url });
    const controller = new AbortController();
    void p.working.then(() => controller.abort());
    // The slow peer works until cancelled: an AbortError, not its answer, says the abort ended the call.
    const { error } = await drain(agents[0], { text: 'take your time', signal: controller.signal });
    expect(error?.name).toBe('AbortError');
    expect(p.requests.map((r) => r.method)).toContain('CancelTask');
    expect(p.cancelled).toHaveLength(1);
    expect(logged(logger, 'info', 'remote task cancelled')[0].meta).toMatchObject({
      remote: 'slowpoke',
      taskId: p.cancelled[0],
    });
  });

  it('hands back a failure note when the peer dies in the middle of a task', async () => {
    const p = await peer({ behaviour: 'slow' });
    const logger = createMemoryLogger();
    const { agents } = await load(logger, { name: 'fragile', baseUrl: p.url });
    void p.working.then(() => p.close());
    const { outcome, error } = await drain(agents[0], { text: 'long job' });
    expect(error).toBeUndefined();
    expect(outcome).toEqual({ status: 'failed', reason: expect.stringMatching(/^remote agent fragile unreachable: /) });
    expect(logged(logger, 'warn', 'remote call failed')[0].meta).toMatchObject({
      remote: 'fragile',
      traceId: expect.any(String),
    });
  });

  it('fails with a timeout note when the remote task outlives timeoutMs, and cancels it', async () => {
    const p = await peer({ behaviour: 'slow' });
    const { agents } = await load(undefined, { name: 'sluggish', baseUrl: p.url, timeoutMs: 500 });
    const { outcome } = await drain(agents[0], { text: 'hurry' });
    expect(outcome).toEqual({ status: 'failed', reason: 'remote agent sluggish timed out after 500 ms' });
    expect(p.cancelled).toHaveLength(1);
  });

  it('sends only the configured credentials, hop metadata and a traceparent continuing the inbound trace', async () => {
    const p = await peer({ behaviour: 'echo' });
    const { agents } = await load(undefined, {
      name: 'secure',
      baseUrl: p.url,
      auth: { type: 'bearer', token: 'peer-token-123' },
      headers: { 'x-tenant': 'blue' },
    });
    const inboundTrace = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await drain(agents[0], {
      text: 'hi',
      metadata: {
        authorization: 'Bearer inbound-user-token',
        traceparent: inboundTrace,
        [FEDERATION_PATH_KEY]: ['http://10.0.0.9:4000'],
        [FEDERATION_HOPS_KEY]: 1,
      },
    });
    const seen = p.requests[0];
    expect(seen.headers.authorization).toBe('Bearer peer-token-123');
    expect(seen.headers['x-tenant']).toBe('blue');
    expect(seen.headers.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    const metadata = (seen.params as { message: { metadata: Record<string, unknown> } }).message.metadata;
    expect(metadata).toEqual({
      [FEDERATION_PATH_KEY]: ['http://10.0.0.9:4000', 'http://127.0.0.1:1'],
      [FEDERATION_HOPS_KEY]: 2,
      traceparent: seen.headers.traceparent,
    });
    expect(JSON.stringify(seen)).not.toContain('inbound-user-token');
  });
});

describe('remote agent calls refused by the peer', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  let dispatcher: Agent;
  beforeEach(() => {
    dispatcher = new Agent();
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    await dispatcher.destroy();
  });

  it('reports an A2A error (continuing a task the peer does not know) as a rejection, not as the peer being down', async () => {
    const p = await startPeer({ behaviour: 'echo' });
    open.push(p);
    const reports: Array<{ ok: boolean }> = [];
    const { agents } = await loadRemoteAgents({
      ...baseOptions(),
      dispatcher,
      entries: entries({ name: 'strict', baseUrl: p.url }),
      onReport: (_name, report) => reports.push(report),
    });
    const state: Record<string, unknown> = { 'a2a:strict': { taskId: 'no-such-task', contextId: 'ctx-1' } };
    const { outcome } = await drain(agents[0], { text: 'continue please', state });
    expect(outcome).toEqual({
      status: 'failed',
      reason: expect.stringMatching(/^remote agent strict rejected the request: .*no-such-task/i),
    });
    expect(reports).toEqual([expect.objectContaining({ ok: true })]);
    expect(state['a2a:strict']).toBeUndefined();
  });

  it('names the HTTP status as an invalid answer when a proxy in front of the peer refuses the call, and counts it against the peer', async () => {
    const proxy = await startRawServer((_req, res) => {
      res.statusCode = 401;
      res.end('authentication required');
    });
    open.push(proxy);
    // The card (kept as a file) sends calls to the proxy, which refuses every one.
    const options = baseOptions();
    fs.writeFileSync(
      path.join(options.cardsDir, 'proxy.json'),
      JSON.stringify({
        name: 'p',
        description: 'behind a proxy',
        version: '1',
        supportedInterfaces: [{ url: `${proxy.origin}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      }),
    );
    const reports: Array<{ ok: boolean; error?: string }> = [];
    const behind = await loadRemoteAgents({
      ...options,
      dispatcher,
      entries: entries({ name: 'behind', cardFile: 'proxy.json' }),
      onReport: (_n, r) => reports.push(r),
    });
    const { outcome } = await drain(behind.agents[0], { text: 'hello?' });
    expect(outcome).toEqual({
      status: 'failed',
      reason: 'remote agent behind invalid answer: HTTP 401 (starts "authentication required")',
    });
    expect(reports).toEqual([expect.objectContaining({ ok: false })]);
  });
});
