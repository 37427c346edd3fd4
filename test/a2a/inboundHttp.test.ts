import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { AgentCard } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { identityStep } from '../../src/a2a/bindings/credentials';
import { createCallers } from '../../src/identity/callers';
import { createIdentity } from '../../src/identity/identity';
import { ANONYMOUS, namedCaller } from '../../src/principal';
import { DEFAULT_PEER_GRANT } from '../../src/tools/families';
import { hostGuard } from '../../src/a2a/bindings/hostGuard';
import { compose, InboundRefusal, type InboundCall } from '../../src/a2a/bindings/inbound';
import { LangoConfig } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { bindingsFor } from '../support/inboundListener';

let node: A2ATestNode;
const MAX_BODY = 4096;

beforeAll(async () => {
  node = await startA2ANode({ config: { a2a: { maxBodyBytes: MAX_BODY } } });
});
afterAll(() => node.close());

const V1 = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
const sendMessage = (text: string, id: unknown = 7) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'SendMessage',
    params: { message: { messageId: `m-${text.length}`, role: 'ROLE_USER', parts: [{ text }] } },
  });

/** One request over a socket, the body written in the given pieces (chunked when no Content-Length is set). */
function send(
  url: string,
  pieces: Buffer[],
  headers: Record<string, string>,
  method = 'POST',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    const write = (index: number): void => {
      if (index === pieces.length) {
        req.end();
        return;
      }
      // One piece per turn, as a client streaming its body would.
      if (req.write(pieces[index]!)) setImmediate(() => write(index + 1));
      else req.once('drain', () => write(index + 1));
    };
    write(0);
  });
}
const post = (pieces: Buffer[], headers: Record<string, string>) => send(`${node.url}/`, pieces, headers);

describe('POST / for JSON-RPC', () => {
  it('reads a chunked body whose multi-byte characters are split between chunks', async () => {
    const body = Buffer.from(sendMessage('grüße 🌍'));
    const split = body.indexOf(Buffer.from('ü')) + 1; // inside the two bytes of ü
    const response = await post([body.subarray(0, split), body.subarray(split)], V1);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const answer = JSON.parse(response.text);
    expect(answer.id).toBe(7);
    expect(JSON.stringify(answer.result)).toContain('echo: grüße 🌍');
  });

  it('answers a charset spelled in capitals and an id of 0', async () => {
    const response = await post([Buffer.from(sendMessage('zero', 0))], {
      'Content-Type': 'Application/JSON; Charset=UTF-8',
      'A2A-Version': '1.0',
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toMatchObject({ id: 0, result: expect.any(Object) });
  });

  it('refuses a chunked body over the limit with 413, though it declared no length', async () => {
    const piece = Buffer.alloc(1024, 0x20);
    const response = await post([Buffer.from('{"jsonrpc":"2.0",'), ...Array(6).fill(piece), Buffer.from('}')], V1);
    expect(response.status).toBe(413);
    // Answered while the body still came: no `Connection: close` (the rest is read and dropped, lingeringClose.test.ts).
    expect(JSON.parse(response.text).error).toMatchObject({ code: -32600, message: expect.stringMatching(/4096/) });
  });

  it.each([
    ['JSON-RPC', '/', (text: string) => expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', id: null })],
    ['HTTP+JSON', '/message:send', (text: string) => expect(JSON.parse(text).error.code).toBe(413)],
  ])(
    'answers a streamed %s body far over the limit with a JSON 413 the caller reads, not a reset',
    async (_binding, path, shape) => {
      // 512 KiB in 16 KiB pieces: the node reads and drops what follows the limit before it closes.
      const pieces = Array.from({ length: 32 }, () => Buffer.alloc(16 * 1024, 0x20));
      const response = await send(`${node.url}${path}`, pieces, V1);
      expect(response.status).toBe(413);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      shape(response.text);
    },
  );

  it('answers a declared body over the limit with a JSON 413 the caller reads, on both bindings', async () => {
    for (const path of ['/', '/message:send']) {
      const body = Buffer.alloc(200 * 1024, 0x20);
      const response = await send(`${node.url}${path}`, [body], { ...V1, 'Content-Length': String(body.length) });
      expect({ path, status: response.status }).toEqual({ path, status: 413 });
      expect(JSON.parse(response.text)).toBeDefined();
    }
  });

  it('answers a post to /?query as on /', async () => {
    const response = await send(`${node.url}/?from=test`, [Buffer.from(sendMessage('query'))], V1);
    expect(response.status).toBe(200);
    expect(JSON.stringify(JSON.parse(response.text).result)).toContain('echo: query');
  });

  it('inflates a gzip-encoded body, and counts the limit on what it inflates to', async () => {
    const packed = await post([zlib.gzipSync(sendMessage('packed'))], { ...V1, 'Content-Encoding': 'gzip' });
    expect(packed.status).toBe(200);
    expect(JSON.stringify(JSON.parse(packed.text).result)).toContain('echo: packed');
    const bomb = await post([zlib.gzipSync(Buffer.alloc(100_000, 0x20))], { ...V1, 'Content-Encoding': 'gzip' });
    expect(bomb.status).toBe(413);
  });

  it('answers an empty body as body-parser did: an envelope error naming jsonrpc', async () => {
    const response = await post([], { ...V1, 'Content-Length': '0' });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text).error).toMatchObject({ code: -32600, message: expect.stringMatching(/jsonrpc/) });
  });

  it('refuses a body without a JSON media type, charset or encoding as ContentTypeNotSupported', async () => {
    const body = [Buffer.from(sendMessage('x'))];
    const cases: Array<Record<string, string>> = [
      { 'A2A-Version': '1.0' },
      { 'A2A-Version': '1.0', 'Content-Type': 'application/json; charset=latin1' },
      { ...V1, 'Content-Encoding': 'compress' },
    ];
    for (const headers of cases) {
      const response = await post(body, headers);
      expect({ headers, code: JSON.parse(response.text).error.code }).toEqual({ headers, code: -32005 });
    }
  });
});

describe('the inbound chain', () => {
  it('runs the interceptors once per request, and answers one that throws with a JSON-RPC internal error', async () => {
    let calls = 0;
    const front = await startA2ANode({
      extra: {
        intercept: [
          (_call, next) => {
            calls += 1;
            if (calls === 1) throw new Error('interceptor broke');
            return next();
          },
        ],
      },
    });
    try {
      const sendText = (text: string) =>
        fetch(`${front.url}/`, { method: 'POST', headers: V1, body: sendMessage(text) });
      const broken = await sendText('first');
      expect(broken.status).toBe(500);
      expect(await broken.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: 'internal error' },
      });
      const answered = await sendText('second');
      expect(answered.status).toBe(200);
      expect(JSON.stringify(((await answered.json()) as { result: unknown }).result)).toContain('echo: second');
      expect(calls).toBe(2);
    } finally {
      await front.close();
    }
  });

  it('tells the interceptors each call by name and the status it was answered with, refusals included', async () => {
    const heard: string[] = [];
    const observed = await startA2ANode({
      config: { a2a: { maxBodyBytes: MAX_BODY } },
      extra: {
        intercept: [
          (call, next) => {
            call.onAnswered((status) => heard.push(`${call.binding} ${call.name} ${status}`));
            return next();
          },
        ],
      },
    });
    try {
      const url = observed.url;
      await send(`${url}/`, [Buffer.from(sendMessage('named'))], V1);
      await send(`${url}/tasks/nope`, [], { 'A2A-Version': '1.0' }, 'GET');
      await send(`${url}/.well-known/agent-card.json`, [], { 'A2A-Version': '1.0' }, 'GET');
      await send(`${url}/`, [Buffer.alloc(MAX_BODY + 1, 0x20)], V1);
      await send(`${url}/healthz`, [], {}, 'GET');
      expect(heard).toEqual([
        'jsonrpc SendMessage 200',
        'rest GetTask 404',
        'http AgentCard 200',
        'jsonrpc other 413',
        'http healthz 200',
      ]);
    } finally {
      await observed.close();
    }
  });

  it("runs the rest of the chain in the context an interceptor opened, though the body's bytes come later", async () => {
    // As the tracing interceptor opens the request's span: the turn must run inside it.
    const span = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const card = {
      capabilities: {},
      supportedInterfaces: [
        { url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'http://127.0.0.1/', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ],
    } as unknown as AgentCard;
    const handler = {
      getAgentCard: async () => card,
      sendMessage: async () => {
        seen.push(span.getStore());
        return { messageId: 'm', contextId: '', taskId: '', role: 2, parts: [], extensions: [], referenceTaskIds: [] };
      },
    } as unknown as A2ARequestHandler;
    let opened = 0;
    const server = http.createServer(
      bindingsFor(handler, { intercepts: [(_call, next) => span.run(`request-${++opened}`, next)] }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const body = Buffer.from(sendMessage('in context'));
      const half = body.length >> 1;
      await send(`${url}/`, [body.subarray(0, half), body.subarray(half)], V1);
      const restBody = Buffer.from(JSON.stringify(JSON.parse(sendMessage('rest')).params));
      await send(`${url}/message:send`, [restBody.subarray(0, 10), restBody.subarray(10)], V1);
      expect(seen).toEqual(['request-1', 'request-2']);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('takes a principal found asynchronously (a token validated after a key fetch) on every binding', async () => {
    const token = 'async-token-0123456789';
    const config = LangoConfig.parse({ a2a: { auth: { bearerTokens: ['configured-token-0123456789'] } } });
    const identity = createIdentity({
      config,
      callers: createCallers(config.a2a.auth, { defaultGrant: DEFAULT_PEER_GRANT }),
      logger: createMemoryLogger(),
      // The validator's contract (`tokens.ts`): a promise for a token not seen before, which never rejects.
      tokens: {
        principal: async (presented) => {
          await new Promise((resolve) => setImmediate(resolve)); // a key fetch, say
          return presented === token ? namedCaller('async-caller') : undefined;
        },
      },
    });
    const guarded = await startA2ANode({
      config: { a2a: { auth: { bearerTokens: ['configured-token-0123456789'] } } },
    });
    try {
      // The node's own step over the same authenticator contract, run outside any HTTP server.
      const step = identityStep(identity)('caller')!;
      const call = plainCall({ authorization: `Bearer ${token}` });
      let reached = false;
      await compose([step, () => void (reached = true)])(call);
      expect(reached).toBe(true);
      expect(call.principal.id).toBe('async-caller');
      const refused = await compose([step])(plainCall({})).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(InboundRefusal);
      expect(refused).toMatchObject({
        status: 401,
        options: { headers: { 'WWW-Authenticate': identity.challenge } },
      });
      // And the node's own: the same 401 on JSON-RPC and HTTP+JSON.
      for (const path of ['/', '/message:send']) {
        const response = await send(`${guarded.url}${path}`, [Buffer.from(sendMessage('x'))], V1);
        expect({ path, status: response.status }).toEqual({ path, status: 401 });
      }
    } finally {
      await guarded.close();
    }
  });

  it('runs the host guard and the credential step on a call that no HTTP server made (a gRPC call, say)', async () => {
    const config = LangoConfig.parse({ server: { host: '127.0.0.1', port: 0 } });
    const guard = hostGuard(config)!;
    const run = compose([guard.step, (call: InboundCall) => void (call.name = 'reached')]);
    const admitted = plainCall({ host: '127.0.0.1:50051' });
    await run(admitted);
    expect(admitted.name).toBe('reached');
    const misdirected = await run(plainCall({ host: 'evil.example:50051' })).catch((err: unknown) => err);
    expect(misdirected).toMatchObject({ status: 421, options: { close: true } });
  });
});

/** A call as a binding other than HTTP/1.1 would build one: no request or response objects behind it. */
function plainCall(headers: http.IncomingHttpHeaders): InboundCall {
  return {
    binding: 'grpc',
    method: 'POST',
    path: '/lf.a2a.v1.A2AService/SendMessage',
    headers,
    remoteAddress: '127.0.0.1',
    peerCertificate: undefined,
    name: 'SendMessage',
    principal: ANONYMOUS,
    onAnswered: () => undefined,
  };
}
