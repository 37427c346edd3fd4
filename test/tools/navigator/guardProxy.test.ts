import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryLogger } from '../../../src/log/logger';
import { REFUSED_HEADER, startGuardProxy, type GuardProxy } from '../../../src/tools/navigator/guardProxy';
import { createHostPolicy } from '../../../src/tools/navigator/hostPolicy';

/** Sends one request through the proxy the way a browser does: absolute-form URL, or CONNECT. */
function viaProxy(
  proxy: GuardProxy,
  options: { method: string; path: string; headers?: Record<string, string> },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; socket?: import('node:net').Socket }> {
  const { port } = new URL(proxy.server);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: Number(port), ...options, timeout: 20_000 });
    req.on('connect', (res, socket) =>
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', socket }),
    );
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error('proxy request timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('guard proxy', () => {
  let server: http.Server;
  let origin: string;
  let port: number;
  let proxy: GuardProxy;
  const seen: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/plain', 'x-origin': 'yes' }).end(`hello ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    proxy = await startGuardProxy({
      policy: createHostPolicy({ allow: ['127.0.0.1', '*'], deny: ['denied.test'] }),
      logger: createMemoryLogger(),
    });
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('forwards an allowed plain HTTP request with its Host header and response headers', async () => {
    const res = await viaProxy(proxy, { method: 'GET', path: `${origin}/page?q=1` });
    expect(res.status).toBe(200);
    expect(res.body).toBe('hello /page?q=1');
    expect(res.headers['x-origin']).toBe('yes');
    expect(seen).toContain(`127.0.0.1:${port} /page?q=1`);
  });

  it('answers a refused HTTP request itself with 403 and the refusal header, and records it', async () => {
    const mark = proxy.refusalCount();
    const res = await viaProxy(proxy, { method: 'GET', path: `http://127.0.0.2:${port}/secret` });
    expect(res.status).toBe(403);
    expect(res.headers[REFUSED_HEADER]).toBe('1');
    expect(res.body).toMatch(/127\.0\.0\.2 is a loopback address/);
    expect(proxy.refusalsSince(mark)).toEqual([
      { url: `http://127.0.0.2:${port}/secret`, reason: expect.stringContaining('127.0.0.2') },
    ]);
    expect(seen.some((line) => line.includes('/secret'))).toBe(false);
  });

  it('refuses a CONNECT tunnel to a denied host', async () => {
    const mark = proxy.refusalCount();
    const res = await viaProxy(proxy, { method: 'CONNECT', path: 'denied.test:443' });
    expect(res.status).toBe(403);
    res.socket?.destroy();
    expect(proxy.refusalsSince(mark)).toEqual([
      { url: 'https://denied.test:443/', reason: 'host denied.test is denied by tools.browser.deny ("denied.test")' },
    ]);
  });

  it('opens a CONNECT tunnel to an allowed host and carries bytes both ways', async () => {
    const res = await viaProxy(proxy, { method: 'CONNECT', path: `127.0.0.1:${port}` });
    expect(res.status).toBe(200);
    const socket = res.socket!;
    const reply = await new Promise<string>((resolve, reject) => {
      let data = '';
      socket.on('data', (chunk: Buffer) => {
        data += chunk.toString('utf8');
        if (data.includes('hello /tunnelled')) resolve(data);
      });
      socket.on('error', reject);
      socket.write(`GET /tunnelled HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    });
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
  });
});
