import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { grpcCall } from '../support/grpcCall';
import { decodeOtlpTraces } from '../support/otlpProtobuf';
import { freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';
import { otlpReceiver, spanAttribute as attribute, type OtlpSpan } from '../support/otlpReceiver';

/**
 * Real `lango serve` processes (the OTLP exporter loads its HTTP transport by
 * dynamic import, which jest's module system cannot run), configured by the
 * standard OTEL_* environment variables, exporting to a receiver on loopback.
 */
describe('OpenTelemetry traces over OTLP/HTTP', () => {
  const nodes: ServeProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    while (nodes.length) await nodes.pop()!.stop();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  async function serve(name: string, env: NodeJS.ProcessEnv, a2a: Record<string, unknown> = {}): Promise<ServeProcess> {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), `lango-otel-${name}-`));
    dirs.push(cwd);
    const configFile = path.join(cwd, 'lango.config.json');
    const config = { tools: { browser: { enabled: false } }, a2a: { agentName: name, ...a2a } };
    fs.writeFileSync(configFile, JSON.stringify(config));
    const node = await spawnServe({ cwd, configFile, port: await freePort(), env });
    nodes.push(node);
    return node;
  }

  /** Stops every node (SIGTERM: each flushes its spans on the way out). */
  const stopAll = async () => {
    while (nodes.length) await nodes.pop()!.stop();
  };

  it("exports one trace across two federated nodes: the peer's spans nest under the hub's remote-call span", async () => {
    const receiver = await otlpReceiver();
    try {
      const otel = (service: string) => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: service,
      });
      const peer = await serve('peer-one', otel('peer'));
      const hub = await serve('hub', otel('hub'), { remoteAgents: [{ name: 'peer-one', baseUrl: peer.url }] });
      const reply = await fetch(hub.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'otel-1', role: 'ROLE_USER', parts: [{ text: 'peer-one: plan my week' }] } },
        }),
      });
      const body = (await reply.json()) as { result: { task: { status: { state: string } } } };
      expect(body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      await stopAll();

      const spans = receiver.spans();
      const request = spans.find((s) => s.service === 'hub' && s.name === 'A2A SendMessage');
      expect(request).toBeDefined();
      expect(request!.parentSpanId ?? '').toBe('');
      const traced = spans.filter((s) => s.traceId === request!.traceId);
      const byId = new Map(traced.map((s) => [s.spanId, s]));
      const parentOf = (span: OtlpSpan) => byId.get(span.parentSpanId ?? '');
      const named = (service: string, name: string) => traced.filter((s) => s.service === service && s.name === name);

      const [hubTurn] = named('hub', 'lango.turn');
      expect(parentOf(hubTurn)).toBe(request);
      const [remoteCall] = named('hub', 'remote_call peer-one');
      expect(remoteCall.kind).toBe(3); // SPAN_KIND_CLIENT
      expect(attribute(remoteCall, 'lango.federation.hops')).toBe(1);
      expect(parentOf(parentOf(remoteCall)!)).toBe(hubTurn);
      expect(named('hub', 'transfer_to_agent peer-one')).toHaveLength(1);

      // The hub streams its delegated calls to a peer whose card says it can.
      const [peerRequest] = named('peer', 'A2A SendStreamingMessage');
      expect(peerRequest.kind).toBe(2); // SPAN_KIND_SERVER
      expect(parentOf(peerRequest)).toBe(remoteCall);
      const [peerTurn] = named('peer', 'lango.turn');
      expect(parentOf(peerTurn)).toBe(peerRequest);
      const peerModel = traced.find((s) => s.service === 'peer' && s.name.startsWith('chat '));
      expect(peerModel).toBeDefined();
      expect(attribute(peerModel!, 'gen_ai.operation.name')).toBe('chat');
      expect(attribute(peerModel!, 'gen_ai.usage.input_tokens')).toEqual(expect.any(Number));
      expect(new Set(traced.map((s) => s.service))).toEqual(new Set(['hub', 'peer']));
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it("opens a server span per gRPC call, parented by the caller's traceparent, with the turn under it", async () => {
    const receiver = await otlpReceiver();
    try {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-otel-grpc-'));
      dirs.push(cwd);
      const grpcPort = await freePort();
      const configFile = path.join(cwd, 'lango.config.json');
      fs.writeFileSync(configFile, JSON.stringify({ server: { grpcPort }, tools: { browser: { enabled: false } } }));
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
      nodes.push(await spawnServe({ cwd, configFile, port: await freePort(), env }));
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const answer = await grpcCall(
        `127.0.0.1:${grpcPort}`,
        'SendMessage',
        { message: { messageId: 'otel-grpc', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      );
      expect(answer.error).toBeUndefined();
      await stopAll();

      const spans = receiver.spans();
      const request = spans.find((s) => s.name === 'A2A SendMessage');
      expect(request).toMatchObject({ traceId, parentSpanId: '00f067aa0ba902b7', kind: 2 });
      expect(attribute(request!, 'rpc.method')).toBe('SendMessage');
      expect(attribute(request!, 'http.response.status_code')).toBe(200);
      const turn = spans.find((s) => s.name === 'lango.turn' && s.traceId === traceId);
      expect(turn?.parentSpanId).toBe(request!.spanId);
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it('exports over http/protobuf too (the default protocol), and nothing when no endpoint is set', async () => {
    const receiver = await otlpReceiver();
    try {
      const quiet = await serve('quiet', {});
      await fetch(`${quiet.url}/healthz`);
      const proto = await serve('proto', {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_SERVICE_NAME: 'proto-node',
      });
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      const reply = await fetch(proto.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'A2A-Version': '1.0',
          traceparent: `00-${traceId}-b7ad6b7169203331-01`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'otel-proto', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        }),
      });
      expect(((await reply.json()) as { result?: unknown }).result).toBeDefined();
      await stopAll();

      expect(receiver.requests.length).toBeGreaterThan(0);
      for (const request of receiver.requests) {
        expect(request.path).toBe('/v1/traces');
        expect(request.contentType).toBe('application/x-protobuf');
      }
      // Decoded as OTLP's ExportTraceServiceRequest: every span is the proto node's (the quiet one exported none).
      const spans = receiver.requests.flatMap((r) => decodeOtlpTraces(r.body));
      expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['proto-node']));
      const request = spans.find((s) => s.name === 'A2A SendMessage');
      expect(request).toMatchObject({ traceId, parentSpanId: 'b7ad6b7169203331', kind: 2, scope: 'lango' });
      expect(request!.attributes).toMatchObject({
        'http.request.method': 'POST',
        'rpc.method': 'SendMessage',
        'http.response.status_code': 200,
      });
      const turn = spans.find((s) => s.name === 'lango.turn');
      expect(turn).toMatchObject({ traceId, parentSpanId: request!.spanId });
      expect(turn!.spanId).toMatch(/^[0-9a-f]{16}$/);
      // The turn's agent step under it, the model call under that, all in the caller's trace.
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const agent = spans.find((s) => s.name === 'invoke_agent lango-orchestrator');
      expect(agent).toMatchObject({ traceId, parentSpanId: turn!.spanId });
      const model = spans.find((s) => s.name.startsWith('chat '));
      expect(model).toMatchObject({ traceId, parentSpanId: agent!.spanId });
      expect(model!.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.usage.input_tokens': expect.any(Number),
      });
      for (const span of spans.filter((s) => s.traceId === traceId && s !== request))
        expect(byId.has(span.parentSpanId)).toBe(true);
      // The readiness polls before it are requests of their own: each the root of a trace of its own.
      for (const poll of spans.filter((s) => s.name === 'A2A healthz')) {
        expect(poll.parentSpanId).toBe('');
        expect(poll.traceId).not.toBe(traceId);
      }
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
