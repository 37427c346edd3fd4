import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp, type LangoApp } from '../../src/app';
import { hostOfHeader } from '../../src/a2a/bindings/hostGuard';
import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { testChromium } from '../support/chromium';
import { probe } from '../support/httpProbe';
import { waitFor } from '../support/waitFor';

/**
 * The DNS-rebinding and cross-site defence of a node without credentials,
 * over every route of a real node on 127.0.0.1: which `Host` values are
 * served (421 otherwise; the health probes whatever it says, HTTP/1.0 with
 * none included), which `Origin`s may post (403 otherwise), and that
 * with credentials configured `Host` is not restricted but a credential is
 * required. Ends with a real Chromium: a page under a rebound name, and a
 * page of another origin posting `exec_shell`, both refused.
 */

const TOKEN = 'host-origin-token-0123';
const PUBLIC_HOST = 'agents.example.com';

interface Answer {
  status: number;
  body: string;
}

/** One raw HTTP/1.1 request with exactly the headers given (`Host` included, or left out when null). */
function request(
  port: number,
  options: { method?: string; path: string; host: string | null; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.host !== null) headers.Host = options.host;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(options.body));
    }
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers,
        setHost: false,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${options.method ?? 'GET'} ${options.path}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

const RPC = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } });

/** Every route family of the node: card, JSON-RPC, REST, discovery, health, and a path no route claims. */
const ROUTES: Array<{ name: string; method: string; path: string; body?: string; headers?: Record<string, string> }> = [
  {
    name: 'card (v1.0 fast path)',
    method: 'GET',
    path: '/.well-known/agent-card.json',
    headers: { 'A2A-Version': '1.0' },
  },
  { name: 'card (legacy path)', method: 'GET', path: '/.well-known/agent.json' },
  { name: 'JSON-RPC', method: 'POST', path: '/', body: RPC, headers: { 'A2A-Version': '1.0' } },
  { name: 'REST GetTask', method: 'GET', path: '/tasks/no-such-task', headers: { 'A2A-Version': '1.0' } },
  { name: 'REST ListTasks', method: 'GET', path: '/tasks', headers: { 'A2A-Version': '1.0' } },
  {
    name: 'REST SendMessage',
    method: 'POST',
    path: '/message:send',
    body: '{}',
    headers: { 'A2A-Version': '1.0' },
  },
  { name: 'agents', method: 'GET', path: '/agents' },
  { name: 'agent card by name', method: 'GET', path: '/agents/operator/card' },
  { name: 'unknown path', method: 'GET', path: '/no/such/route' },
  // Near the probes' paths, not them: guarded like any other route.
  { name: 'readiness under another method', method: 'POST', path: '/readyz', body: '{}' },
  { name: 'a path below readiness', method: 'GET', path: '/readyz/x' },
];

/** The health probes, answered whatever the Host (they disclose nothing): what each answers on a healthy node. */
const PROBES = [
  { path: '/healthz', answer: { status: 'ok' } },
  { path: '/readyz', answer: { status: 'ready', checks: { database: 'ok', tree: 'ok' } } },
];

const SERVED_HOSTS = (port: number) => [
  `127.0.0.1:${port}`,
  '127.0.0.1',
  '127.42.0.9:1234',
  `localhost:${port}`,
  'LocalHost',
  `[::1]:${port}`,
  '[::ffff:127.0.0.1]',
  // Other spellings of loopback: no attacker's name can produce them.
  '127.1',
  '2130706433:80',
  '0x7f.0.0.1',
  'localhost.',
  '127.0.0.1.',
  'app.localhost',
  PUBLIC_HOST,
  `${PUBLIC_HOST.toUpperCase()}:443`,
];

const REFUSED_HOSTS: Array<string | null> = [
  'evil.example.com',
  '127.example.com',
  '127.0.0.1.nip.io',
  'localhost.evil.com',
  'localhost.example.com.',
  '1.2.3.300',
  '[::2]',
  '10.0.0.8:4000',
  `sub.${PUBLIC_HOST}`,
  '',
  '127.0.0.1:4000:1',
  '[::1',
  '127.0.0.1:http',
];

async function startNode(input: LangoConfigInput): Promise<{ app: LangoApp; port: number; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-host-'));
  const config = LangoConfig.parse({
    dataDir: path.join(dir, 'data'),
    server: { host: '127.0.0.1', port: 0 },
    tools: { browser: { enabled: false } },
    ...input,
    a2a: { baseUrl: `https://${PUBLIC_HOST}`, ...input.a2a },
  });
  const app = await createApp(config, { logger: createMemoryLogger() });
  const url = await app.listen();
  return { app, port: Number(new URL(url).port), dir };
}

describe('Host and Origin without credentials', () => {
  let node: { app: LangoApp; port: number; dir: string };
  beforeAll(async () => {
    node = await startNode({});
  });
  afterAll(async () => {
    await node.app.close();
    fs.rmSync(node.dir, { recursive: true, force: true });
  });

  it.each(ROUTES)('serves $name to every loopback or public Host', async (route) => {
    for (const host of SERVED_HOSTS(node.port)) {
      const answer = await request(node.port, { ...route, host });
      expect({ host, refused: [403, 421].includes(answer.status) }).toEqual({ host, refused: false });
    }
  });

  it.each(ROUTES)('answers $name with 421 for any other Host', async (route) => {
    for (const host of REFUSED_HOSTS) {
      const answer = await request(node.port, { ...route, host });
      expect({ host, status: answer.status }).toEqual({ host, status: 421 });
      const body = JSON.parse(answer.body) as { error: { message: string } };
      expect(body.error.message).toMatch(/^misdirected request: Host /);
      if (route.method === 'POST' && route.path === '/') expect(body).toMatchObject({ jsonrpc: '2.0', id: null });
    }
  });

  it('leaves a request without Host to Node, which refuses HTTP/1.1 without one (400)', async () => {
    for (const route of [...ROUTES, ...PROBES])
      expect((await request(node.port, { ...route, host: null })).status).toBe(400);
  });

  it.each(PROBES)('answers the probe $path whatever the Host, telling nothing more', async ({ path, answer }) => {
    // haproxy's default check: HTTP/1.0, no Host at all.
    const haproxy = await probe(node.port, { path });
    expect({ status: haproxy.status, body: JSON.parse(haproxy.body) as unknown }).toEqual({
      status: 200,
      body: answer,
    });
    expect((await probe(node.port, { method: 'HEAD', path })).status).toBe(200);
    // Kubernetes: the pod's address; and any other name.
    for (const host of ['10.1.2.3:4000', ...REFUSED_HOSTS]) {
      const probe = await request(node.port, { path, host });
      expect({ host, status: probe.status, body: JSON.parse(probe.body) as unknown }).toEqual({
        host,
        status: 200,
        body: answer,
      });
    }
    const withQuery = await request(node.port, { path: `${path}?verbose=1`, host: '10.1.2.3:4000' });
    expect(JSON.parse(withQuery.body)).toEqual(answer);
  });

  it.each(ROUTES)('refuses $name in HTTP/1.0 without a Host (421), as every route but the probes', async (route) => {
    const answer = await probe(node.port, route);
    expect(answer.status).toBe(421);
    expect(answer.body).toContain('misdirected request: Host is missing');
  });

  const POSTS = ROUTES.filter((route) => route.method === 'POST');

  it.each(POSTS)('refuses $name from another origin with 403', async (route) => {
    const host = `127.0.0.1:${node.port}`;
    for (const headers of <Record<string, string>[]>[
      { Origin: 'https://evil.example.com' },
      { Origin: 'http://127.example.com' },
      { Origin: 'null' },
      { Origin: 'not a url' },
      { Origin: `https://sub.${PUBLIC_HOST}` },
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'cross-site', Origin: `http://127.0.0.1:${node.port}` },
    ]) {
      const answer = await request(node.port, { ...route, host, headers: { ...route.headers, ...headers } });
      expect({ headers, status: answer.status }).toEqual({ headers, status: 403 });
      expect(answer.body).toContain('cross-origin request refused');
    }
  });

  it.each(POSTS)('lets $name through from its own origins and from non-browser clients', async (route) => {
    const host = `127.0.0.1:${node.port}`;
    for (const headers of <Record<string, string>[]>[
      {},
      { Origin: `http://127.0.0.1:${node.port}` },
      { Origin: 'http://localhost:3000' },
      { Origin: `https://${PUBLIC_HOST}` },
      { 'Sec-Fetch-Site': 'same-origin', Origin: `http://localhost:${node.port}` },
      { 'Sec-Fetch-Site': 'none' },
    ]) {
      const answer = await request(node.port, { ...route, host, headers: { ...route.headers, ...headers } });
      expect({ headers, status: [403, 421].includes(answer.status) }).toEqual({ headers, status: false });
    }
  });

  it('lets a cross-origin GET through: the browser cannot read the answer, and nothing changes', async () => {
    const answer = await request(node.port, {
      path: '/.well-known/agent-card.json',
      host: `127.0.0.1:${node.port}`,
      headers: { Origin: 'https://evil.example.com', 'Sec-Fetch-Site': 'cross-site' },
    });
    expect(answer.status).toBe(200);
  });
});

describe('Host and Origin with credentials', () => {
  let node: { app: LangoApp; port: number; dir: string };
  beforeAll(async () => {
    node = await startNode({ a2a: { auth: { bearerTokens: [TOKEN] } } });
  });
  afterAll(async () => {
    await node.app.close();
    fs.rmSync(node.dir, { recursive: true, force: true });
  });

  it.each(ROUTES)('serves $name under any Host, with a credential where one is required', async (route) => {
    for (const host of ['evil.example.com', '10.0.0.8:4000', `127.0.0.1:${node.port}`]) {
      const anonymous = await request(node.port, { ...route, host });
      expect(anonymous.status).not.toBe(421);
      const authorized = await request(node.port, {
        ...route,
        host,
        headers: { ...route.headers, Authorization: `Bearer ${TOKEN}`, Origin: 'https://elsewhere.example' },
      });
      expect([401, 403, 421]).not.toContain(authorized.status);
    }
  });

  it('still requires the credential on protected routes whatever the Host says', async () => {
    for (const host of ['127.0.0.1', 'localhost', 'evil.example.com']) {
      const answer = await request(node.port, { method: 'POST', path: '/', host, body: RPC });
      expect(answer.status).toBe(401);
    }
  });
});

describe('Host header parsing', () => {
  it('reads a Host header and refuses malformed ones', () => {
    expect(hostOfHeader('Example.COM:8080')).toBe('example.com');
    expect(hostOfHeader('[::1]:4000')).toBe('::1');
    expect(hostOfHeader('[::1]')).toBe('::1');
    for (const bad of ['', ':4000', 'a:b', 'a:1:2', '[::1', '[::1]x', 'h:123456'])
      expect(hostOfHeader(bad)).toBeUndefined();
  });
});

describe('a real browser against a node without credentials', () => {
  let node: { app: LangoApp; port: number; dir: string };
  let attacker: http.Server;
  let attackerPort: number;
  let browser: import('playwright-core').Browser;

  beforeAll(async () => {
    node = await startNode({});
    attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>attacker</title>');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerPort = (attacker.address() as AddressInfo).port;
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: await testChromium(),
      // The attacker's names resolve to 127.0.0.1, as a rebinding DNS server would make them.
      args: ['--no-sandbox', '--disable-gpu', `--host-resolver-rules=MAP *.attacker.test 127.0.0.1`],
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    attacker?.closeAllConnections();
    await new Promise((resolve) => attacker?.close(resolve));
    await node?.app.close();
    if (node) fs.rmSync(node.dir, { recursive: true, force: true });
  });

  const pwnedFile = () => path.join(node.dir, 'data', 'workspace', 'pwned');
  /**
   * The attack: a message naming exec_shell, which the offline model runs. Same-origin (and after
   * rebinding) a page may post JSON; cross-origin only a "simple" request goes out without a preflight.
   */
  const sendExec = (base: string, crossOrigin = false) => `fetch('${base}/', {
      method: 'POST', ${crossOrigin ? "mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }" : "headers: { 'Content-Type': 'application/json' }"},
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: {
        kind: 'message', messageId: 'm' + Math.random(), role: 'user', parts: [{ kind: 'text', text: 'exec_shell {"command":"touch pwned"}' }] } } }),
    }).then(() => 'sent', (e) => String(e))`;

  it('runs the attack payload when it comes from the node itself (the control: the payload works)', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`http://127.0.0.1:${node.port}/healthz`);
      expect(await page.evaluate(sendExec(`http://127.0.0.1:${node.port}`))).toBe('sent');
      await waitFor(() => fs.existsSync(pwnedFile()), 20_000, 'the command to write its file');
      fs.rmSync(pwnedFile());
    } finally {
      await page.close();
    }
  });

  it('refuses a page under a rebound name: the node answers 421 and runs nothing', async () => {
    const page = await browser.newPage();
    try {
      const response = await page.goto(`http://rebind.attacker.test:${node.port}/.well-known/agent-card.json`);
      expect(response?.status()).toBe(421);
      // Same-origin from the browser's point of view, so it may read the answer: it is the refusal.
      const answer = await page.evaluate(`fetch('/', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: '{}' }).then(async (r) => r.status + ' ' + (await r.text()))`);
      expect(answer).toMatch(/^421 .*misdirected request/);
      await page.evaluate(sendExec(`http://rebind.attacker.test:${node.port}`));
      expect(fs.existsSync(pwnedFile())).toBe(false);
    } finally {
      await page.close();
    }
  });

  it('refuses a cross-origin post from another page: exec_shell never runs', async () => {
    const page = await browser.newPage();
    const seen: number[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`http://127.0.0.1:${node.port}/`)) seen.push(response.status());
    });
    try {
      await page.goto(`http://evil.attacker.test:${attackerPort}/`);
      expect(await page.evaluate(sendExec(`http://127.0.0.1:${node.port}`, true))).toBe('sent');
      await waitFor(() => seen.length > 0, 20_000, 'a request to reach the server');
      expect(seen).toEqual([403]);
      expect(fs.existsSync(pwnedFile())).toBe(false);
    } finally {
      await page.close();
    }
  });
});
