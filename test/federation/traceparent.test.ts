import fs from 'node:fs';
import path from 'node:path';
import { createFederation, type Federation } from '../../src/federation/federation';
import type { InboundCall } from '../../src/a2a/bindings/inbound';
import { createMemoryLogger } from '../../src/log/logger';
import { parseTraceparent, TRACEPARENT_KEY } from '../../src/log/traceContext';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { baseOptions, drain, entries } from '../support/federationRun';

/**
 * Trace context on every outbound A2A call (issue 33): whichever binding a
 * remote is called over — JSON-RPC (the lean client), HTTP+JSON (the SDK's
 * REST client) or gRPC — the call carries a W3C `traceparent` in the
 * request's headers (gRPC: its metadata) and in the message's metadata,
 * in the caller's trace with a span of its own, so the peer's spans join
 * the caller's trace.
 */
describe('traceparent on outbound calls, on all three bindings', () => {
  let peer: A2ATestNode;
  let federation: Federation;
  const seen: Array<{ binding: string; traceparent: unknown }> = [];

  beforeAll(async () => {
    peer = await startA2ANode({
      grpc: true,
      extra: {
        intercept: [
          // Every A2A request that carries trace context (a JSON-RPC call's method is read after this step).
          (call: InboundCall, next) => {
            if (call.method === 'POST' && call.headers[TRACEPARENT_KEY] !== undefined)
              seen.push({ binding: call.binding, traceparent: call.headers[TRACEPARENT_KEY] });
            return next();
          },
        ],
      },
    });
    const options = baseOptions(createMemoryLogger());
    // A card of the peer offering HTTP+JSON only: the SDK's REST client calls it.
    const card = (await (await fetch(`${peer.url}/.well-known/agent-card.json`)).json()) as {
      supportedInterfaces: Array<{ protocolBinding: string; protocolVersion: string }>;
    };
    card.supportedInterfaces = card.supportedInterfaces.filter(
      (i) => i.protocolBinding === 'HTTP+JSON' && i.protocolVersion === '1.0',
    );
    fs.writeFileSync(path.join(options.cardsDir, 'rest.json'), JSON.stringify(card));
    federation = createFederation({
      ...options,
      entries: entries(
        { name: 'viarpc', baseUrl: peer.url },
        { name: 'viarest', cardFile: 'rest.json' },
        { name: 'viagrpc', baseUrl: peer.url, transport: 'grpc' },
      ),
    });
    await federation.start();
  }, 30_000);
  afterAll(async () => {
    await federation?.close();
    await peer?.close();
  });

  it.each([
    ['viarpc', 'jsonrpc'],
    ['viarest', 'rest'],
    ['viagrpc', 'grpc'],
  ])("sends the caller's trace over %s (%s)", async (name, binding) => {
    const agent = federation.agents().find((a) => a.name === name)!;
    const parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const { outcome } = await drain(agent, { text: `traced over ${binding}`, metadata: { [TRACEPARENT_KEY]: parent } });
    expect(outcome).toMatchObject({ status: 'completed' });
    const header = seen.at(-1)!;
    expect(header.binding).toBe(binding);
    const sent = parseTraceparent(header.traceparent);
    expect(sent?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(sent?.spanId).not.toBe('00f067aa0ba902b7');
    // The message carries the same context: the turn on the peer runs in the caller's trace.
    const turn = (peer.runner as ScriptedA2ARunner).calls.at(-1)!;
    expect(turn.metadata?.[TRACEPARENT_KEY]).toBe(header.traceparent);
  });
});
