import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { LangoConfig } from '../config/schema';
import { isLoopbackHost } from '../net/host';
import { authConfigured, publicBaseUrl } from './card';

/**
 * DNS-rebinding and cross-site defence for a node without credentials. A web
 * page can make a browser send requests to 127.0.0.1 under a host name the
 * page's owner controls (rebinding it to 127.0.0.1), or post to the node from
 * another origin. Without `a2a.auth` nothing else stands between such a page
 * and `exec_shell`, so the node answers only requests addressed to it by a
 * loopback literal, `localhost` or its configured public host, and refuses
 * state-changing requests a browser sends from any other origin.
 *
 * Loopback is judged by `src/net` (the outbound policy's parser): a literal
 * in any spelling, or `localhost`. None of those can be an attacker's name;
 * `127.example.com` can, and is refused.
 */

/** The host name of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased; undefined when malformed. */
export function hostOfHeader(header: string): string | undefined {
  if (header.startsWith('[')) {
    const end = header.indexOf(']');
    if (end < 0 || !/^(:\d{1,5})?$/.test(header.slice(end + 1))) return undefined;
    return header.slice(1, end).toLowerCase();
  }
  const colon = header.indexOf(':');
  if (colon < 0) return header.toLowerCase() || undefined;
  if (!/^\d{1,5}$/.test(header.slice(colon + 1))) return undefined;
  return header.slice(0, colon).toLowerCase() || undefined;
}

/** The probes' paths (`discovery.ts` `healthRoutes`): they answer fixed words, whoever asks. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

/**
 * A balancer's or orchestrator's health probe, which names no host of ours:
 * haproxy's `option httpchk` sends HTTP/1.0 with no `Host`, Kubernetes the
 * pod's address. They read nothing a rebinding page could use, so the guard
 * lets them through; every other route stays guarded.
 */
function isHealthProbe(req: IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return HEALTH_PATHS.has(query < 0 ? url : url.slice(0, query));
}

/** Methods a browser may send cross-site without changing anything. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function refuse(res: Response, method: string, path: string, status: 421 | 403, message: string): void {
  if (status === 421) res.setHeader('Connection', 'close');
  if (method === 'POST' && path === '/') {
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
  } else {
    res.status(status).json({ error: { code: status, message } });
  }
}

/** Why a request is refused before any route: its status and the message it is answered with. */
export interface HostRefusal {
  status: 421 | 403;
  message: string;
}

/** The host and origin check of a node without credentials, usable before express and as its first layer. */
export interface HostGuard {
  /** Why `req` is refused, or undefined when it may go on. */
  refusal(req: IncomingMessage): HostRefusal | undefined;
  /** The check as express's first layer, answering a refusal itself. */
  readonly handler: RequestHandler;
}

/**
 * The guard for `config`, or undefined when credentials are configured (then
 * every request must present one, and `Host` is not restricted). Mount its
 * handler before every route; a layer in front of express asks `refusal` and
 * leaves refused requests to that handler.
 * @example
 * const guard = hostGuard(config);
 * if (guard) app.use(guard.handler);
 */
export function hostGuard(config: LangoConfig): HostGuard | undefined {
  if (authConfigured(config)) return undefined;
  const publicHost = hostOfHeader(new URL(publicBaseUrl(config)).host);
  const allowed = (host: string | undefined): host is string =>
    host !== undefined && (host === publicHost || isLoopbackHost(host));
  const served = `without a2a.auth only loopback addresses, localhost${publicHost ? ` and ${publicHost}` : ''} are served`;

  // Clients send the same Host again and again: the last one let through is not parsed twice.
  let lastServed: string | undefined;
  const servedHeader = (header: string | undefined): boolean => {
    if (header === undefined) return false;
    if (header === lastServed) return true;
    if (!allowed(hostOfHeader(header))) return false;
    lastServed = header;
    return true;
  };
  const refusal = (req: IncomingMessage): HostRefusal | undefined => {
    if (isHealthProbe(req)) return undefined;
    const hostHeader = req.headers.host;
    if (!servedHeader(hostHeader)) {
      return {
        status: 421,
        message:
          `misdirected request: Host ${hostHeader === undefined ? 'is missing' : `"${hostHeader}" is not this node`}; ` +
          `${served} (set a2a.baseUrl to the public address, or configure a2a.auth)`,
      };
    }
    if (SAFE_METHODS.has(req.method ?? '')) return undefined;
    const origin = req.headers.origin;
    let crossOrigin = req.headers['sec-fetch-site'] === 'cross-site';
    if (!crossOrigin && origin !== undefined) {
      try {
        crossOrigin = !allowed(hostOfHeader(new URL(origin).host));
      } catch {
        crossOrigin = true; // `null` (sandboxed frames, files) or garbage
      }
    }
    if (!crossOrigin) return undefined;
    return {
      status: 403,
      message:
        `cross-origin request refused${origin ? ` (Origin "${origin}")` : ''}: ${served}; configure a2a.auth ` +
        'to accept callers from elsewhere',
    };
  };
  return {
    refusal,
    handler: (req, res, next) => {
      const refused = refusal(req);
      if (refused) refuse(res, req.method, req.path, refused.status, refused.message);
      else next();
    },
  };
}
