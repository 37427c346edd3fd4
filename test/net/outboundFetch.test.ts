import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import {
  BodyTooLargeError,
  createOutboundFetch,
  createOutboundPolicy,
  createPinnedAgent,
  OutboundRefusedError,
} from '../../src/net';
import { waitFor } from '../support/waitFor';

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
  const ENDLESS_BYTES = 64 * 1024 * 1024;
  let endless: { written: number; res: http.ServerResponse } | undefined;
  let gzipLarge: http.ServerResponse | undefined;
  const loopbackFetch = () => {
    const dispatcher = createPinnedAgent({
      policy: createOutboundPolicy({ setting: 'agent.baseUrl', allowAddresses: ['127.0.0.0/8'] }),
    });
    return { dispatcher, fetch: createOutboundFetch({ dispatcher, maxResponseBytes: 1024 }) };
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/gzip') {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        res.end(gzipSync('data: {"a":1}\n\n'));
        return;
      }
      if (req.url === '/gzip-large') {
        req.resume();
        gzipLarge = res;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        // Decodes to 64 KiB, past the 1 KiB cap; the connection stays open until the client drops it.
        res.write(gzipSync('z'.repeat(64 * 1024)));
        return;
      }
      if (req.url === '/large') {
        req.resume();
        res.end('x'.repeat(4096));
        return;
      }
      if (req.url === '/endless') {
        req.resume();
        endless = { written: 0, res };
        const chunk = Buffer.alloc(64 * 1024, 'y');
        const write = (): void => {
          while (endless!.written < ENDLESS_BYTES) {
            endless!.written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', write);
          }
          res.end();
        };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        write();
        return;
      }
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

  it('answers a body decoded when the server compressed it anyway', async () => {
    const { dispatcher, fetch } = loopbackFetch();
    try {
      const response = await fetch(`${origin}/gzip`);
      expect(response.headers.get('content-encoding')).toBeNull();
      expect(await response.text()).toBe('data: {"a":1}\n\n');
    } finally {
      await dispatcher.close();
    }
  });

  it('errors a compressed body past the cap once decoded, and drops the connection', async () => {
    const { dispatcher, fetch } = loopbackFetch();
    try {
      const response = await fetch(`${origin}/gzip-large`);
      await expect(response.text()).rejects.toBeInstanceOf(BodyTooLargeError);
      await waitFor(() => gzipLarge?.destroyed, 20_000, 'the connection to close');
    } finally {
      await dispatcher.close();
    }
  });

  it('errors a body past the cap', async () => {
    const { dispatcher, fetch } = loopbackFetch();
    try {
      const response = await fetch(`${origin}/large`);
      await expect(response.text()).rejects.toBeInstanceOf(BodyTooLargeError);
    } finally {
      await dispatcher.close();
    }
  });

  it('stops reading from the server while the answer is not read, and closes it on cancel', async () => {
    const dispatcher = createPinnedAgent({
      policy: createOutboundPolicy({ setting: 'agent.baseUrl', allowAddresses: ['127.0.0.0/8'] }),
    });
    const fetch = createOutboundFetch({ dispatcher });
    try {
      const response = await fetch(`${origin}/endless`);
      const reader = response.body!.getReader();
      expect((await reader.read()).value!.byteLength).toBeGreaterThan(0);
      const stream = await waitFor(
        () => endless?.res.writableNeedDrain && endless,
        20_000,
        'the server to be held back',
      );
      // Had the client kept reading, it had the chance: a whole request on another connection has been served
      // by this process (server and client share its event loop) since. Kernel buffers take a few megabytes.
      await new Promise<void>((resolve, reject) =>
        http.get(`${origin}/moved`, (res) => res.resume().on('end', resolve)).on('error', reject),
      );
      expect(stream.written).toBeLessThan(ENDLESS_BYTES / 4);
      await reader.cancel();
      await waitFor(() => stream.res.destroyed, 20_000, 'the connection to close');
      expect(stream.written).toBeLessThan(ENDLESS_BYTES / 4);
    } finally {
      await dispatcher.close();
    }
  });
});
