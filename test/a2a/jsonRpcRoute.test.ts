import http from 'node:http';
import zlib from 'node:zlib';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';

let node: A2ATestNode;
const MAX_BODY = 4096;

beforeAll(async () => {
  node = await startA2ANode({ config: { a2a: { maxBodyBytes: MAX_BODY } } });
});
afterAll(() => node.close());

const sendMessage = (text: string, id: unknown = 7) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'SendMessage',
    params: { message: { messageId: `m-${text.length}`, role: 'ROLE_USER', parts: [{ text }] } },
  });

/** One POST over a raw socket, the body written in the given pieces (chunked when no Content-Length is set). */
function post(
  pieces: Buffer[],
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${node.url}/`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    for (const piece of pieces) req.write(piece);
    req.end();
  });
}

describe('POST / for v1.0 JSON-RPC', () => {
  it('reads a chunked body whose multi-byte characters are split between chunks', async () => {
    const body = Buffer.from(sendMessage('grüße 🌍'));
    const split = body.indexOf(Buffer.from('ü')) + 1; // inside the two bytes of ü
    const response = await post([body.subarray(0, split), body.subarray(split)], {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
    });
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
    const response = await post([Buffer.from('{"jsonrpc":"2.0",'), ...Array(6).fill(piece), Buffer.from('}')], {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
    });
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    expect(JSON.parse(response.text).error.code).toBe(-32600);
  });

  it('answers a post to /?query as express routed it: the same JSON-RPC answer as on /', async () => {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        `${node.url}/?from=test`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(sendMessage('query'));
    });
    expect(answer.status).toBe(200);
    expect(JSON.stringify(JSON.parse(answer.text).result)).toContain('echo: query');
  });

  it('leaves a gzip-encoded body to the general chain, which inflates and answers it', async () => {
    const response = await post([zlib.gzipSync(sendMessage('packed'))], {
      'Content-Type': 'application/json',
      'Content-Encoding': 'gzip',
      'A2A-Version': '1.0',
    });
    expect(response.status).toBe(200);
    expect(JSON.stringify(JSON.parse(response.text).result)).toContain('echo: packed');
  });

  it('answers an empty body as body-parser did: an envelope error naming jsonrpc', async () => {
    const response = await post([], {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
      'Content-Length': '0',
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text).error).toMatchObject({ code: -32600, message: expect.stringMatching(/jsonrpc/) });
  });
});

describe('the JSON-RPC route in front of express', () => {
  it('runs the interceptors once per request, and answers one that throws with a JSON-RPC internal error', async () => {
    let calls = 0;
    const front = await startA2ANode({
      extra: {
        intercept: [
          (_req, _res, next) => {
            calls += 1;
            if (calls === 1) throw new Error('interceptor broke');
            next();
          },
        ],
      },
    });
    try {
      const send = (text: string) =>
        fetch(`${front.url}/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
          body: sendMessage(text),
        });
      const broken = await send('first');
      expect(broken.status).toBe(500);
      expect(await broken.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: 'internal error' },
      });
      const answered = await send('second');
      expect(answered.status).toBe(200);
      expect(JSON.stringify(((await answered.json()) as { result: unknown }).result)).toContain('echo: second');
      expect(calls).toBe(2);
    } finally {
      await front.close();
    }
  });
});
