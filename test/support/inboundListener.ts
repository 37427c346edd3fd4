import type { RequestListener } from 'node:http';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Step } from '../../src/a2a/bindings/inbound';
import { inboundHttp } from '../../src/a2a/bindings/inboundHttp';
import { jsonRpcBinding } from '../../src/a2a/bindings/jsonRpcBinding';
import { restBinding } from '../../src/a2a/bindings/restBinding';
import type { RequestIntercept } from '../../src/a2a/bindings/inbound';
import { createMemoryLogger } from '../../src/log/logger';

/** What {@link bindingsFor} mounts besides the handler; defaults: no guard, no credentials, 1 MiB bodies. */
export interface BindingsOptions {
  legacyCompat?: boolean;
  maxBodyBytes?: number;
  hostGuard?: Step;
  credentials?: Step;
  intercepts?: RequestIntercept[];
}

/**
 * The node's inbound chain around any `A2ARequestHandler` (JSON-RPC and HTTP+JSON, no card, no pages: 404),
 * for tests that script the handler's events.
 * @example
 * const server = http.createServer(bindingsFor(handler, { legacyCompat: false }));
 */
export function bindingsFor(requestHandler: A2ARequestHandler, options: BindingsOptions = {}): RequestListener {
  const logger = createMemoryLogger();
  const legacyCompat = options.legacyCompat ?? false;
  return inboundHttp({
    steps: { hostGuard: options.hostGuard, intercepts: options.intercepts ?? [], credentials: options.credentials },
    maxBodyBytes: options.maxBodyBytes ?? 1 << 20,
    a2a: {
      jsonRpc: jsonRpcBinding({ requestHandler, legacyCompat, logger }),
      rest: restBinding({ requestHandler, legacyCompat, logger }),
      card: (_call, next) => next(),
    },
    pages: (_req, res) => res.writeHead(404).end(),
    logger,
  });
}
