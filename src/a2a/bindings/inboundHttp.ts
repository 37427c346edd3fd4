import type { RequestListener } from 'node:http';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { HttpCall } from './httpCall';
import { compose, InboundRefusal, type SharedSteps, type Step } from './inbound';
import { declaredBodyLimit, lingeringClose } from './requestBody';
import { sendRestRefusal } from './restResponses';
import type { RouteTable } from './routes';

/** What answers one row of the route table over HTTP/1.1. */
export interface HttpRouteHandler {
  /** The route's own steps, after the shared ones and the identity step: its body step, then its answer. */
  readonly steps: readonly Step<HttpCall>[];
  /** Writes what ended the route's chain in its shape (JSON-RPC, a console page); REST's JSON error else. */
  readonly refuse?: (call: HttpCall, err: unknown) => void;
}

/** Options of {@link inboundHttp}. */
export interface InboundHttpOptions {
  /** The steps every binding mounts (a gRPC binding mounts the same object). */
  steps: SharedSteps;
  /** The node's one route table: every row the node serves over HTTP, with what answers it. */
  table: RouteTable<HttpRouteHandler>;
  /** `a2a.maxBodyBytes`: declared bodies are refused before anything else reads them. */
  maxBodyBytes: number;
  logger: Logger;
}

const METHOD_NOT_FOUND = -32601;

/**
 * The node's request listener: the route table says which row a request is
 * (or answers 404 / 405 before any handler runs), and each row runs one
 * chain composed once from the same steps:
 * host guard → interceptors → declared body limit → identity (by the row's
 * access: who the caller is, and whether it may call the row) → the row's
 * own steps (its body, its answer).
 *
 * A step's refusal (`InboundRefusal`), an A2A error or a fault is answered in
 * the row's shape; one that closes the connection over a body still coming
 * is answered first, then lingers: what is left of the body is read and
 * dropped (bounded) before the connection closes, so the caller reads the
 * answer.
 * @example
 * const server = http.createServer(inboundHttp({ steps, table, maxBodyBytes, logger }));
 */
export function inboundHttp(options: InboundHttpOptions): RequestListener {
  const { maxBodyBytes, logger, steps, table } = options;
  const shared: Step<HttpCall>[] = [
    ...(steps.hostGuard ? [steps.hostGuard] : []),
    ...steps.intercepts,
    declaredBodyLimit(maxBodyBytes),
  ];
  const runs = new Map(
    table.routes.map((route) => {
      const identify = steps.identify(route.access);
      return [route, compose<HttpCall>([...shared, ...(identify ? [identify] : []), ...route.handler.steps])];
    }),
  );
  const unmatched = compose<HttpCall>([...shared, (call) => refuseUnmatched(call, table)]);

  const write = (call: HttpCall, err: unknown, handler: HttpRouteHandler | undefined) => {
    try {
      if (handler?.refuse) handler.refuse(call, err);
      else sendRestRefusal(call, err, logger);
    } catch (failure) {
      // Nothing a caller sends may end the process: an answer that cannot be written ends the connection.
      logger.warn('could not answer a refused request', { error: errorMessage(failure) });
      call.res.destroy();
    }
  };
  const refuse = (call: HttpCall, err: unknown, handler?: HttpRouteHandler) => {
    // A request wholly received (`complete`: its body, if any, is in memory) closes cleanly after its answer.
    if (!(err instanceof InboundRefusal && err.options.close && !call.req.complete && !call.res.headersSent)) {
      write(call, err, handler);
      return;
    }
    // Its body is still coming: the answer first, then the rest read and dropped before the connection closes.
    write(call, new InboundRefusal(err.status, err.code, err.message, { ...err.options, close: false }), handler);
    lingeringClose(call.req);
  };

  return (req, res) => {
    const call = new HttpCall(req, res);
    const match = table.match(call.method, call.path);
    if (match.kind !== 'route') {
      unmatched(call).catch((err: unknown) => refuse(call, err));
      return;
    }
    const { route } = match;
    call.binding = route.binding;
    call.name = route.name;
    call.params = match.params;
    runs.get(route)!(call).catch((err: unknown) => refuse(call, err, route.handler));
  };
}

/** The answer to a request no row is: 405 naming the methods a row of its path takes, else 404. */
function refuseUnmatched(call: HttpCall, table: RouteTable<HttpRouteHandler>): never {
  const match = table.match(call.method, call.path);
  if (match.kind === 'method')
    throw new InboundRefusal(405, METHOD_NOT_FOUND, `${call.method} is not served at ${call.path}`, {
      headers: { Allow: match.allow.join(', ') },
    });
  throw new InboundRefusal(404, METHOD_NOT_FOUND, `no route for ${call.method} ${call.path}`);
}
