import express from 'express';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Logger } from '../log/logger';
import { CARD_PATH, LEGACY_CARD_PATH, cardRoute } from './bindings/cardRoute';
import type { CardService } from './card/cardService';
import { jsonErrors, notFound } from './bindings/errors';
import type { HttpCall } from './bindings/httpCall';
import type { HttpRouteHandler } from './bindings/inboundHttp';
import { InboundRefusal, type Step } from './bindings/inbound';
import { jsonRpcBinding } from './bindings/jsonRpcBinding';
import { jsonBody, JSON_RPC_MEDIA_TYPES, REST_MEDIA_TYPES } from './bindings/requestBody';
import { restBinding } from './bindings/restBinding';
import { sendRestRefusal } from './bindings/restResponses';
import { RouteTable, type Pages, type Route } from './bindings/routes';

/** What the node's HTTP route table is built from. */
export interface HttpRoutesOptions {
  /** The A2A bindings; absent with `a2a.enabled: false` (no card, no protocol: the pages only). */
  a2a?: { requestHandler: A2ARequestHandler; cards: CardService; legacyCompat: boolean };
  /** Every module's pages: health and discovery (`discovery.ts`), push deliveries, the console, metrics, `/node/*`. */
  pages: readonly Pages[];
  maxBodyBytes: number;
  logger: Logger;
}

/**
 * The node's one route table over HTTP/1.1 (issue 37 §1), assembled in one
 * place from every binding's and page's rows: JSON-RPC at `POST /`, the card,
 * HTTP+JSON (`restBinding.ts`), then the pages, which express renders under
 * their rows. The gRPC binding's methods are its service's (`grpcBinding.ts`),
 * every one `caller`.
 * @example
 * const table = httpRoutes({ a2a: { requestHandler, cards, legacyCompat: true }, pages, maxBodyBytes, logger });
 * http.createServer(inboundHttp({ steps, table, maxBodyBytes, logger }));
 */
export function httpRoutes(options: HttpRoutesOptions): RouteTable<HttpRouteHandler> {
  const { logger, maxBodyBytes } = options;
  const routes: Route<HttpRouteHandler>[] = [];
  if (options.a2a) {
    const { requestHandler, cards, legacyCompat } = options.a2a;
    routes.push(...protocolRoutes({ requestHandler, legacyCompat, maxBodyBytes, logger }));
    const card = { steps: [cardRoute({ cards, legacyCompat, logger })] };
    for (const path of [CARD_PATH, LEGACY_CARD_PATH])
      routes.push({
        methods: ['GET', 'HEAD'],
        path,
        binding: 'http',
        name: 'AgentCard',
        access: 'public',
        handler: card,
      });
  }
  routes.push(...pageRoutes(options.pages, logger));
  return new RouteTable(routes);
}

/**
 * The rows of the A2A protocol over HTTP: JSON-RPC (both versions) at `POST /`, and HTTP+JSON's, each reading its
 * body with the chain's one JSON reader.
 */
export function protocolRoutes(options: {
  requestHandler: A2ARequestHandler;
  legacyCompat: boolean;
  maxBodyBytes: number;
  logger: Logger;
}): Route<HttpRouteHandler>[] {
  const { requestHandler, legacyCompat, maxBodyBytes, logger } = options;
  const rpc = jsonRpcBinding({ requestHandler, legacyCompat, logger });
  const rpcBody = jsonBody({ maxBodyBytes, mediaTypes: JSON_RPC_MEDIA_TYPES });
  const routes: Route<HttpRouteHandler>[] = [
    {
      methods: ['POST'],
      path: '/',
      binding: 'jsonrpc',
      name: 'other',
      access: 'caller',
      handler: { steps: [rpcBody, rpc.answer], refuse: rpc.refuse },
    },
  ];
  const body = jsonBody({ maxBodyBytes, mediaTypes: REST_MEDIA_TYPES });
  for (const { steps, ...row } of restBinding({ requestHandler, legacyCompat, body, logger }))
    routes.push({ ...row, handler: { steps } });
  return routes;
}

/** The pages' rows, each rendered by one express app holding every page router. */
function pageRoutes(pages: readonly Pages[], logger: Logger): Route<HttpRouteHandler>[] {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  for (const page of pages) app.use(page.router);
  // A row express does not answer (a page's router declined it) is the table's mistake: JSON, never HTML.
  app.use(notFound);
  app.use(jsonErrors(logger));
  const render: Step<HttpCall> = (call) => app(call.req, call.res);
  return pages.flatMap((page) => {
    const handler: HttpRouteHandler = {
      steps: [render],
      refuse: page.refuse
        ? (call, err) => {
            if (err instanceof InboundRefusal && (err.status === 401 || err.status === 403) && !call.res.headersSent)
              page.refuse!(call.req, call.res, err.status, err.message);
            else sendRestRefusal(call, err, logger);
          }
        : undefined,
    };
    return page.routes.map((row) => ({ ...row, handler }));
  });
}
