import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundFetch, createOutboundPolicy, createPinnedAgent, OutboundRefusedError } from '../../src/net';

/**
 * The outbound fetch sends a text body (a model request) as a stream read
 * once, so undici does not hold the prompt for as long as the answer
 * streams; on the wire it must stay what it was: the same bytes, with
 * `Content-Length`, not chunked, and the caller's headers.
 */
describe('the outbound fetch', () => {
  let server: http.Server;
  let origin: string;
  let url: string;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/moved') {
        req.resume();
        res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    url = `${origin}/v1/chat/completions`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends a text body whole, with its byte length and the caller headers', async () => {
    const dispatcher = createPinnedAgent({
      policy: createOutboundPolicy({ setting: 'agent.baseUrl', allowAddresses: ['127.0.0.0/8'] }),
    });
    const fetch = createOutboundFetch({ dispatcher });
    const text = JSON.stringify({ model: 'scripted', prompt: `héllo ${'x'.repeat(20_000)} ✓` });
    try {
      for (const headers of [{ 'Content-Type': 'application/json', 'X-Request': 'one' }, [['x-request', 'two']]]) {
        const response = await fetch(url, { method: 'POST', body: text, headers: headers as RequestInit['headers'] });
        expect(await response.text()).toBe('ok');
      }
    } finally {
      await dispatcher.close();
    }
    expect(received.map((r) => r.headers['x-request'])).toEqual(['one', 'two']);
    for (const { headers, body } of received) {
      expect(body).toBe(text);
      expect(headers['content-length']).toBe(String(Buffer.byteLength(text)));
      expect(headers['transfer-encoding']).toBeUndefined();
    }
    expect(received[0]!.headers['content-type']).toBe('application/json');
  });

  it('refuses a redirect, naming the origin that sent it', async () => {
    const dispatcher = createPinnedAgent({
      policy: createOutboundPolicy({ setting: 'agent.baseUrl', allowAddresses: ['127.0.0.0/8'] }),
    });
    const fetch = createOutboundFetch({ dispatcher });
    try {
      const refusal = await fetch(`${origin}/moved`, { method: 'POST', body: '{}' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refusal).toBeInstanceOf(OutboundRefusedError);
      expect((refusal as Error).message).toBe(`${origin} answered with a redirect, refused: this endpoint needs none`);
    } finally {
      await dispatcher.close();
    }
  });
});
