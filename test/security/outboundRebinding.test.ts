import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { StreamResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { PushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { checkPushUrl, RetryingPushSender } from '../../src/a2a/tasks/pushNotifications';
import { createFederation, type Federation } from '../../src/federation/federation';
import { createOpenAIEmbeddings } from '../../src/llm/embeddings/openai';
import { createMemoryLogger } from '../../src/log/logger';
import { createOutboundPolicy, createPinnedAgent, OutboundRefusedError, type Lookup } from '../../src/net';
import { startMisbehavingPeer, type MisbehavingPeer } from '../support/misbehavingPeer';
import { baseOptions, drain, entries, logged } from '../support/federationRun';

/**
 * Issue 11 D: the DNS answer is checked and the connection pinned to it
 * (no rebinding between check and connect), redirects are never followed
 * onto a private address, and every user of the network — peers, push
 * webhooks, embeddings — goes through the same policy. Resolvers are
 * injected: no real DNS.
 */

interface Counter {
  server: http.Server;
  hits: number;
  port: number;
}

async function counter(host: string, port = 0): Promise<Counter> {
  const c: Counter = { server: http.createServer(), hits: 0, port: 0 };
  c.server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    c.hits++;
    res.end(host);
  });
  await new Promise<void>((resolve) => c.server.listen(port, host, resolve));
  c.port = (c.server.address() as AddressInfo).port;
  return c;
}
const stop = (c?: Counter) => new Promise<void>((resolve) => (c ? c.server.close(() => resolve()) : resolve()));

/** A resolver that answers from a script, one answer per call, the last one repeated. */
function scripted(answers: string[][]): Lookup & { calls: number } {
  const lookup = Object.assign(
    async (_name: string) => {
      const answer = answers[Math.min(lookup.calls, answers.length - 1)];
      lookup.calls++;
      return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
    { calls: 0 },
  );
  return lookup;
}

describe('DNS rebinding between check and connect', () => {
  let allowed: Counter;
  let inside: Counter;
  beforeAll(async () => {
    // Same port on two loopback addresses: one the policy allows, one it must never reach.
    allowed = await counter('127.0.0.2');
    inside = await counter('127.0.0.1', allowed.port);
  });
  afterAll(async () => {
    await stop(allowed);
    await stop(inside);
  });

  it('is what happens to a client that checks the name, then lets the connection resolve it again', async () => {
    const lookup = scripted([['127.0.0.2'], ['127.0.0.1']]);
    const policy = createOutboundPolicy({ setting: 's', allowAddresses: ['127.0.0.2'], lookup });
    expect((await policy.resolve('rebind.test')).ok).toBe(true);
    const naive = new Agent({
      connect: {
        // What a plain client does: the socket resolves the name itself when it connects.
        lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          void lookup('rebind.test').then((a) =>
            options.all ? callback(null, [{ address: a[0].address, family: 4 }]) : callback(null, a[0].address, 4),
          );
        }) as unknown as LookupFunction,
      },
    });
    const res = await request(`http://rebind.test:${allowed.port}/`, { dispatcher: naive });
    expect(await res.body.text()).toBe('127.0.0.1');
    await naive.close();
    expect(inside.hits).toBe(1);
    inside.hits = 0;
  });

  it('cannot happen through the pinned agent: each connection resolves once and uses the address it checked', async () => {
    const lookup = scripted([['127.0.0.2'], ['127.0.0.1']]);
    const policy = createOutboundPolicy({ setting: 's', allowAddresses: ['127.0.0.2'], lookup });
    const pinned = createPinnedAgent({ policy });
    try {
      const res = await request(`http://rebind.test:${allowed.port}/`, { dispatcher: pinned });
      expect(await res.body.text()).toBe('127.0.0.2');
      expect(lookup.calls).toBe(1);
    } finally {
      await pinned.close();
    }
    // A new connection resolves again, and the rebound answer is refused.
    const fresh = createPinnedAgent({ policy });
    try {
      const error = await request(`http://rebind.test:${allowed.port}/`, { dispatcher: fresh }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OutboundRefusedError);
      expect((error as Error).message).toMatch(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    } finally {
      await fresh.close();
    }
    expect(inside.hits).toBe(0);
  });

  it('refuses an answer that mixes an allowed and a refused address', async () => {
    const before = inside.hits + allowed.hits;
    const policy = createOutboundPolicy({
      setting: 's',
      allowAddresses: ['127.0.0.2'],
      lookup: scripted([['127.0.0.2', '127.0.0.1']]),
    });
    const pinned = createPinnedAgent({ policy });
    try {
      await expect(request(`http://mixed.test:${allowed.port}/`, { dispatcher: pinned })).rejects.toBeInstanceOf(
        OutboundRefusedError,
      );
    } finally {
      await pinned.close();
    }
    expect(inside.hits + allowed.hits).toBe(before);
  });
});

describe('peers named by host name', () => {
  let peer: MisbehavingPeer;
  let federation: Federation | undefined;
  afterEach(async () => {
    await federation?.close();
    federation = undefined;
    await peer?.close();
  });
  const start = async (entry: Record<string, unknown>, lookup: Lookup) => {
    const logger = createMemoryLogger();
    federation = createFederation({ ...baseOptions(logger), entries: entries(entry), lookup });
    await federation.start();
    return logger;
  };

  it('skips a peer whose name resolves to a private address, naming the policy and how to open it', async () => {
    peer = await startMisbehavingPeer({ name: 'lan', cardHost: 'lan-peer.test' });
    const port = new URL(peer.origin).port;
    await start({ name: 'lan', agentCardUrl: `http://lan-peer.test:${port}/card.json` }, scripted([['127.0.0.1']]));
    expect(federation!.status()[0]).toMatchObject({
      state: 'skipped',
      reason: expect.stringMatching(
        /^card refused by the outbound address policy: lan-peer\.test resolves to 127\.0\.0\.1, a loopback address .*allowPrivateNetwork/,
      ),
    });
    expect(peer.seen).toEqual([]);
  });

  it('loads and calls it when the entry opens its private network', async () => {
    peer = await startMisbehavingPeer({ name: 'lan', cardHost: 'lan-peer.test' });
    const port = new URL(peer.origin).port;
    await start(
      { name: 'lan', agentCardUrl: `http://lan-peer.test:${port}/card.json`, allowPrivateNetwork: true },
      scripted([['127.0.0.1']]),
    );
    const [agent] = federation!.agents();
    expect((await drain(agent, { text: 'hi' })).outcome).toEqual({ status: 'completed', text: 'pong: hi' });
  });

  it('never lets a card open a host: an interface on another private host is refused at the call', async () => {
    peer = await startMisbehavingPeer({ name: 'spread', cardHost: 'internal.test' });
    const logger = await start(
      { name: 'spread', agentCardUrl: peer.cardUrl, allowCrossOrigin: true },
      scripted([['127.0.0.1']]),
    );
    const [agent] = federation!.agents();
    const { outcome } = await drain(agent, { text: 'hi' });
    expect(outcome).toEqual({
      status: 'failed',
      reason: expect.stringMatching(
        /^remote agent spread unreachable: refused by the outbound address policy: internal\.test resolves to 127\.0\.0\.1/,
      ),
    });
    expect(peer.seen.filter((s) => s.startsWith('POST'))).toEqual([]);
    expect(logged(logger, 'warn', 'remote call failed')).toHaveLength(1);
  });
});

describe('redirects onto private addresses', () => {
  let canary: Counter;
  beforeAll(async () => {
    canary = await counter('127.0.0.2');
  });
  afterAll(() => stop(canary));

  it('are never followed by the embeddings client, even from a trusted endpoint', async () => {
    const endpoint = http.createServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.2:${canary.port}/latest/meta-data/` }).end();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    try {
      const embeddings = createOpenAIEmbeddings({
        model: 'm',
        baseUrl: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`,
      });
      await expect(embeddings.embed(['hello'])).rejects.toThrow();
      expect(canary.hits).toBe(0);
    } finally {
      endpoint.closeAllConnections();
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  });

  it('are not followed by push deliveries', async () => {
    const receiver = await counter('127.0.0.1');
    receiver.server.removeAllListeners('request');
    receiver.server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      receiver.hits++;
      res.writeHead(307, { location: `http://127.0.0.2:${canary.port}/` }).end();
    });
    const logger = createMemoryLogger();
    const sender = new RetryingPushSender({
      store: storeWith(`http://127.0.0.1:${receiver.port}/hook`),
      logger,
      allowPrivateNetworks: true,
      maxAttempts: 2,
      baseDelayMs: 10,
    });
    await sender.send(taskEvent(), context);
    await sender.close(false);
    await sender.close();
    expect(receiver.hits).toBe(1);
    expect(canary.hits).toBe(0);
    expect(logged(logger, 'warn', 'refused by receiver')).toHaveLength(1);
    await stop(receiver);
  });
});

describe('push webhooks', () => {
  it.each([
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:7f00:1]/hook',
    'http://[0:0:0:0:0:ffff:7f00:1]/hook',
    'http://[::ffff:169.254.169.254]/latest',
    'http://[::ffff:a9fe:a9fe]/latest',
    'http://[64:ff9b::a9fe:a9fe]/latest',
    'http://[::127.0.0.1]/hook',
    'http://0x7f.1/hook',
    'http://2130706433/hook',
    'http://0251.0376.0251.0376/latest',
    'http://localhost./hook',
    'http://[fd00::1]/hook',
  ])('refuses %s when registered', (url) => {
    expect(() => checkPushUrl(url, false)).toThrow(RequestMalformedError);
    expect(() => checkPushUrl(url, false)).toThrow(/private or loopback/);
  });

  it('refuses at delivery a name that resolves to a private address, and never connects', async () => {
    const receiver = await counter('127.0.0.1');
    const logger = createMemoryLogger();
    const sender = new RetryingPushSender({
      store: storeWith(`http://hooks.test:${receiver.port}/hook`),
      logger,
      allowPrivateNetworks: false,
      maxAttempts: 3,
      baseDelayMs: 10,
      lookup: scripted([['127.0.0.1']]),
    });
    await sender.send(taskEvent(), context);
    await sender.close(false);
    await sender.close();
    expect(receiver.hits).toBe(0);
    expect(logged(logger, 'warn', 'refused by the outbound address policy')[0].meta.reason).toMatch(
      /hooks\.test resolves to 127\.0\.0\.1, a loopback address .*a2a\.pushNotifications\.allowPrivateNetworks/,
    );
    await stop(receiver);
  });
});

const context = { requestedVersion: '1.0' } as unknown as ServerCallContext;

function taskEvent(): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: { taskId: 'task-1', contextId: 'ctx-1', status: undefined, metadata: undefined },
    },
  } as unknown as StreamResponse;
}

/** A push store holding one webhook for every task. */
function storeWith(url: string): PushNotificationStore {
  const config = { id: 'hook-1', url, token: 'tok-12345', taskId: 'task-1' } as unknown as TaskPushNotificationConfig;
  return {
    save: async () => undefined,
    load: async () => [config],
    loadWithMetadata: async () => [{ config, wireVersion: '1.0' }],
    delete: async () => undefined,
  } as unknown as PushNotificationStore;
}
