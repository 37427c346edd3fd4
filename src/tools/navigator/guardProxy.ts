import http from 'node:http';
import net from 'node:net';
import type { Logger } from '../../log/logger';
import type { HostPolicy } from './hostPolicy';

/** A request the policy refused: what the page asked for and why it was not fetched. */
export interface Refusal {
  url: string;
  reason: string;
}

/** A running guard proxy; one per browser session. */
export interface GuardProxy {
  /** `http://127.0.0.1:<port>`: what the browser context is told to use as its proxy. */
  readonly server: string;
  /** How many requests have been refused so far: a mark for {@link GuardProxy.refusalsSince}. */
  refusalCount(): number;
  /** The refusals after `mark` (a value of `refusalCount()`), oldest first; the oldest may have been dropped. */
  refusalsSince(mark: number): Refusal[];
  close(): Promise<void>;
}

/** Options for {@link startGuardProxy}. */
export interface GuardProxyOptions {
  policy: HostPolicy;
  logger: Logger;
  /** Refusals kept; older ones are dropped. */
  maxRefusals?: number;
}

/** `host:port` of a URL: what a refused HTTPS tunnel and the page's own request have in common. */
export function hostPort(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? '443' : '80')}`;
  } catch {
    return url;
  }
}

/**
 * Refusals worth telling the model about: the browser's own favicon fetch
 * after a page load is refused like anything else but says nothing about the page.
 */
export function reportedRefusals(refusals: Refusal[]): Refusal[] {
  return refusals.filter((r) => !r.url.endsWith('/favicon.ico'));
}

/** Marks a response the proxy wrote itself, so `browser_navigate` can tell a refusal from a real 403. */
export const REFUSED_HEADER = 'x-lango-refused';

const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

function withoutHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const copy: http.OutgoingHttpHeaders = { ...headers };
  for (const name of HOP_BY_HOP) delete copy[name];
  return copy;
}

/**
 * Starts the HTTP proxy every request of a browser session goes through.
 * Playwright's request interception does not see redirects, so the policy
 * is enforced here instead: each plain HTTP request and each CONNECT tunnel
 * (HTTPS, WebSocket) is checked against {@link HostPolicy} — main frame,
 * redirect hop, iframe or image alike — and the upstream connection goes to
 * the very address the policy approved, so DNS cannot be switched between
 * the check and the connection.
 * @example
 * const proxy = await startGuardProxy({ policy, logger });
 * const context = await browser.newContext({ proxy: { server: proxy.server } });
 */
export async function startGuardProxy(options: GuardProxyOptions): Promise<GuardProxy> {
  const { policy, logger } = options;
  const maxRefusals = options.maxRefusals ?? 100;
  const refusals: Refusal[] = [];
  let refusalCount = 0;
  const sockets = new Set<net.Socket>();
  const agent = new http.Agent({ keepAlive: false });

  function refuse(url: string, reason: string): void {
    refusals.push({ url, reason });
    refusalCount += 1;
    if (refusals.length > maxRefusals) refusals.shift();
    logger.info('browser request refused', { url, reason });
  }

  function track(socket: net.Socket): void {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  }

  const server = http.createServer((req, res) => {
    void forward(req, res);
  });
  server.on('connection', track);

  async function forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('the guard proxy needs an absolute URL');
      return;
    }
    const decision =
      target.protocol === 'http:'
        ? await policy.checkHost(target.hostname)
        : { ok: false as const, reason: `${target.protocol} is not proxied` };
    if (!decision.ok) {
      refuse(target.href, decision.reason);
      res
        .writeHead(403, {
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
          [REFUSED_HEADER]: '1',
        })
        .end(`Refused by the browser policy: ${decision.reason}`);
      return;
    }
    const upstream = http.request(
      {
        agent,
        host: decision.address,
        family: decision.family,
        port: target.port || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers: { ...withoutHopByHop(req.headers), host: target.host },
        setHost: false,
      },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.statusMessage, withoutHopByHop(response.headers));
        response.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent)
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream error: ${error.message}`);
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    void tunnel(req, socket, head);
  });

  async function tunnel(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    let target: URL;
    try {
      target = new URL(`https://${req.url ?? ''}`);
    } catch {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const decision = await policy.checkHost(target.hostname);
    if (!decision.ok) {
      refuse(`https://${req.url ?? ''}/`, decision.reason);
      socket.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: 1\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const upstream = net.connect({
      host: decision.address,
      family: decision.family,
      port: Number(target.port || 443),
    });
    track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => {
      if (connected) socket.destroy();
      else socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    socket.on('close', () => upstream.destroy());
  }

  // A WebSocket over plain HTTP would arrive as an upgrade; Chromium tunnels
  // WebSockets through CONNECT, so anything arriving here is refused outright.
  server.on('upgrade', (_req: http.IncomingMessage, socket: net.Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;

  return {
    server: `http://127.0.0.1:${address.port}`,
    refusalCount: () => refusalCount,
    refusalsSince: (mark) => refusals.slice(Math.max(0, refusals.length - (refusalCount - mark))),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await closed;
    },
  };
}
