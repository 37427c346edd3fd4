import type { LangoConfig } from '../../config/schema';
import { isLoopbackHost } from '../../net/host';
import { publicBaseUrl } from '../card/card';
import { authConfigured } from '../../identity/identity';
import { INVALID_REQUEST, InboundRefusal, type Step } from './inbound';
import type { CallerRequest } from '../../identity/request';

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
function isHealthProbe(req: Pick<CallerRequest, 'method' | 'path'>): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && HEALTH_PATHS.has(req.path);
}

/** Methods a browser may send cross-site without changing anything. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Why a request is refused before any route: its status and the message it is answered with. */
export interface HostRefusal {
  status: 421 | 403;
  message: string;
}

/** The host and origin check of a node without credentials. */
export interface HostGuard {
  /** Why `req` is refused, or undefined when it may go on. */
  refusal(req: Pick<CallerRequest, 'method' | 'path' | 'headers'>): HostRefusal | undefined;
  /** The check as the inbound chain's first step: a refused request goes no further (421 closes the connection). */
  readonly step: Step;
}

/**
 * The guard for `config`, or undefined when credentials are configured (then
 * every request must present one, and `Host` is not restricted). Its step
 * goes first in every binding's chain.
 * @example
 * const guard = hostGuard(config);
 * const run = compose([...(guard ? [guard.step] : []), ...intercepts, answer]);
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
  const refusal = (req: Pick<CallerRequest, 'method' | 'path' | 'headers'>): HostRefusal | undefined => {
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
    if (SAFE_METHODS.has(req.method)) return undefined;
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
    step: (call, next) => {
      const refused = refusal(call);
      if (!refused) return next();
      throw new InboundRefusal(refused.status, INVALID_REQUEST, refused.message, { close: refused.status === 421 });
    },
  };
}
