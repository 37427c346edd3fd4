import { Agent } from 'undici';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { createMemoryLogger } from '../../src/log/logger';
import { FEDERATION_HOPS_KEY, FEDERATION_PATH_KEY, checkInboundHops, nextHop } from '../../src/federation/hops';
import { childTraceparent, parseTraceparent } from '../../src/log/traceContext';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { startPeer } from '../support/federationPeers';
import { baseOptions, drain, entries, logged } from '../support/federationRun';

describe('hop checks', () => {
  const A = 'http://127.0.0.1:4001';
  const B = 'http://127.0.0.1:4002';

  it('accepts a fresh request and one whose path does not contain this node', () => {
    expect(checkInboundHops(undefined, A, 4)).toEqual({ ok: true, path: [], hops: 0 });
    expect(checkInboundHops({ [FEDERATION_PATH_KEY]: [B], [FEDERATION_HOPS_KEY]: 1 }, A, 4)).toEqual({
      ok: true,
      path: [B],
      hops: 1,
    });
  });

  it('refuses a request that has already crossed this node, whatever the URL spelling', () => {
    const check = checkInboundHops({ [FEDERATION_PATH_KEY]: [`${A}/`, B], [FEDERATION_HOPS_KEY]: 2 }, A, 4);
    expect(check).toMatchObject({
      ok: false,
      reason: `delegation loop: node ${A} is already on the path ${A}/ -> ${B}`,
    });
  });

  it('refuses more hops than maxHops and does not trust a hop count smaller than the path', () => {
    expect(checkInboundHops({ [FEDERATION_HOPS_KEY]: 5 }, A, 4)).toMatchObject({
      ok: false,
      reason: 'too many hops: 5 exceeds a2a.maxHops 4',
    });
    const lying = checkInboundHops(
      { [FEDERATION_PATH_KEY]: ['n1', 'n2', 'n3', 'n4', 'n5'], [FEDERATION_HOPS_KEY]: 0 },
      A,
      4,
    );
    expect(lying).toMatchObject({ ok: false, hops: 5 });
  });

  it('builds the next hop from the inbound path and refuses a target already on it', () => {
    expect(nextHop({ [FEDERATION_PATH_KEY]: [B], [FEDERATION_HOPS_KEY]: 1 }, A, 4, 'http://127.0.0.1:4003')).toEqual({
      ok: true,
      metadata: { [FEDERATION_PATH_KEY]: [B, A], [FEDERATION_HOPS_KEY]: 2 },
    });
    expect(nextHop({ [FEDERATION_PATH_KEY]: [B] }, A, 4, `${B}/`)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^delegation loop/),
    });
    expect(nextHop({ [FEDERATION_HOPS_KEY]: 4 }, A, 4)).toEqual({
      ok: false,
      reason: 'too many hops: 5 would exceed a2a.maxHops 4',
    });
  });

  it('continues an inbound trace with a new span and starts one when there is none', () => {
    const inbound = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const child = childTraceparent(inbound);
    expect(child.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(parseTraceparent(child.traceparent)?.spanId).not.toBe('00f067aa0ba902b7');
    expect(parseTraceparent(childTraceparent('garbage').traceparent)).toEqual(expect.objectContaining({ flags: '01' }));
    expect(parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
  });
});

describe('a two-node loop over real peers', () => {
  it('is refused with a clear error instead of recursing, and the hub gets a failure note', async () => {
    const a = await startPeer({ name: 'A', behaviour: 'forward' });
    const b = await startPeer({ name: 'B', behaviour: 'forward' });
    const dispatcher = new Agent();
    try {
      const logger = createMemoryLogger();
      const common = { ...baseOptions(logger), dispatcher };
      // A delegates to B and B back to A, as two lango nodes configured as each other's remote agents.
      const toB = await loadRemoteAgents({
        ...common,
        selfId: a.origin,
        entries: entries({ name: 'node-b', baseUrl: b.url }),
      });
      const toA = await loadRemoteAgents({
        ...common,
        selfId: b.origin,
        entries: entries({ name: 'node-a', baseUrl: a.url }),
      });
      a.setForward(toB.agents[0]);
      b.setForward(toA.agents[0]);
      const hub = await loadRemoteAgents({
        ...common,
        selfId: 'http://127.0.0.1:1',
        entries: entries({ name: 'node-a', baseUrl: a.url }),
      });

      const { outcome } = await drain(hub.agents[0], { text: 'ping around' });
      expect(outcome).toEqual({
        status: 'failed',
        reason: expect.stringContaining(
          `delegation loop: ${a.origin} is already on the path http://127.0.0.1:1 -> ${a.origin} -> ${b.origin}`,
        ),
      });
      // A was called once by the hub; B refused to call A again, so A saw no second request.
      expect(a.requests.filter((r) => r.method.startsWith('SendStreaming'))).toHaveLength(1);
      expect(b.requests.filter((r) => r.method.startsWith('SendStreaming'))).toHaveLength(1);
      expect(logged(logger, 'warn', 'remote call refused')[0].meta).toMatchObject({
        remote: 'node-a',
        reason: expect.stringMatching(/^delegation loop/),
      });

      // A client that runs no pre-check (plain SDK client) is refused by the receiver's inbound check.
      const client = await new ClientFactory().createFromUrl(a.url);
      const reply = await client.sendMessage({
        tenant: '',
        configuration: undefined,
        metadata: undefined,
        message: {
          messageId: 'm-1',
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          extensions: [],
          referenceTaskIds: [],
          parts: [
            { content: { $case: 'text', value: 'sneaky' }, metadata: undefined, filename: '', mediaType: 'text/plain' },
          ],
          metadata: { [FEDERATION_PATH_KEY]: ['http://127.0.0.1:9', a.origin], [FEDERATION_HOPS_KEY]: 2 },
        },
      });
      const status = (reply as Task).status;
      expect(status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(status?.message?.parts[0].content).toEqual({
        $case: 'text',
        value: `refused: delegation loop: node ${a.origin} is already on the path http://127.0.0.1:9 -> ${a.origin}`,
      });
    } finally {
      await a.close();
      await b.close();
      await dispatcher.destroy();
    }
  });
});
