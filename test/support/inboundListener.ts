import type { RequestListener } from 'node:http';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Step } from '../../src/a2a/bindings/inbound';
import { identityStep } from '../../src/a2a/bindings/credentials';
import { inboundHttp } from '../../src/a2a/bindings/inboundHttp';
import { RouteTable } from '../../src/a2a/bindings/routes';
import type { RequestIntercept } from '../../src/a2a/bindings/inbound';
import { protocolRoutes } from '../../src/a2a/httpRoutes';
import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import { createCallers } from '../../src/identity/callers';
import { createIdentity } from '../../src/identity/identity';
import { createMemoryLogger } from '../../src/log/logger';
import { DEFAULT_PEER_GRANT } from '../../src/tools/families';

/** What {@link bindingsFor} mounts besides the handler; defaults: no guard, no `a2a.auth` (loopback: the owner), 1 MiB bodies. */
export interface BindingsOptions {
  legacyCompat?: boolean;
  maxBodyBytes?: number;
  hostGuard?: Step;
  /** `a2a.auth` of the node's identity component (none: a loopback caller is the owner). */
  auth?: NonNullable<LangoConfigInput['a2a']>['auth'];
  intercepts?: RequestIntercept[];
}

/**
 * The node's inbound chain around any `A2ARequestHandler` (JSON-RPC and HTTP+JSON rows of the route table, no card,
 * no pages: 404), for tests that script the handler's events.
 * @example
 * const server = http.createServer(bindingsFor(handler, { legacyCompat: false }));
 */
export function bindingsFor(requestHandler: A2ARequestHandler, options: BindingsOptions = {}): RequestListener {
  const logger = createMemoryLogger();
  const legacyCompat = options.legacyCompat ?? false;
  const maxBodyBytes = options.maxBodyBytes ?? 1 << 20;
  const config = LangoConfig.parse({ server: { host: '127.0.0.1', port: 0 }, a2a: { auth: options.auth } });
  const callers = createCallers(config.a2a.auth, { defaultGrant: DEFAULT_PEER_GRANT });
  const identity = createIdentity({ config, callers, logger });
  return inboundHttp({
    steps: { hostGuard: options.hostGuard, intercepts: options.intercepts ?? [], identify: identityStep(identity) },
    table: new RouteTable(protocolRoutes({ requestHandler, legacyCompat, maxBodyBytes, logger })),
    maxBodyBytes,
    logger,
  });
}
