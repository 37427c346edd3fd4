import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A request as the node's interceptors see it: Node's own, with what express or the JSON-RPC route add once
 * they have read it (the parsed body; the URL before any router rewrote it).
 */
export type InterceptedRequest = IncomingMessage & { body?: unknown; originalUrl?: string };

/**
 * A layer run once before every route (request metrics, the request's span): plain Node request and response,
 * so the same function runs in express's chain and in the JSON-RPC route that answers before express.
 * It registers what it needs (`res.once('finish')`) and calls `next` within whatever context it opens.
 */
export type RequestIntercept = (req: InterceptedRequest, res: ServerResponse, next: () => void) => void;

/**
 * Runs `intercepts` in order, then `last`, each inside the context the one before opened.
 * @example
 * runIntercepts(intercepts, req, res, () => answer(req, res));
 */
export function runIntercepts(
  intercepts: readonly RequestIntercept[],
  req: InterceptedRequest,
  res: ServerResponse,
  last: () => void,
): void {
  const step = (index: number): void => {
    if (index === intercepts.length) last();
    else intercepts[index](req, res, () => step(index + 1));
  };
  step(0);
}
