import type { RequestListener } from 'node:http';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { HttpCall } from './httpCall';
import { compose, InboundRefusal, type SharedSteps, type Step } from './inbound';
import { CREDENTIAL_PAGES } from './callNames';
import type { JsonRpcBinding } from './jsonRpcBinding';
import { declaredBodyLimit, jsonBody, lingeringClose, JSON_RPC_MEDIA_TYPES, REST_MEDIA_TYPES } from './requestBody';
import type { RestBinding } from './restBinding';
import { sendRestRefusal } from './restResponses';

/** Options of {@link inboundHttp}: the shared steps, then what each binding adds. */
export interface InboundHttpOptions {
  /** The steps every binding mounts (a gRPC binding mounts the same object). */
  steps: SharedSteps;
  /** `a2a.maxBodyBytes`: declared and streamed bodies alike. */
  maxBodyBytes: number;
  /** The A2A bindings; absent with `a2a.enabled: false` (health only). */
  a2a?: {
    jsonRpc: JsonRpcBinding;
    rest: RestBinding;
    /** The card's route (`cardRoute.ts`). */
    card: Step<HttpCall>;
  };
  /** Everything else: health, the node's pages, discovery (express, answering its own 404s). */
  pages: RequestListener;
  logger: Logger;
}

/**
 * The node's request listener: one chain per binding, composed once from the
 * same steps, and nothing in front of or beside it.
 *
 * - every request: host guard → interceptors → declared body limit;
 * - JSON-RPC (`POST /`): → credentials → the JSON body → `jsonRpcBinding`;
 * - HTTP+JSON (the SDK's REST routes): → credentials → the JSON body → the message check → the SDK's handler;
 * - the card: → `cardRoute`; discovery (`/agents`) and push deliveries: → credentials → pages; anything else → pages.
 *
 * A step's refusal (`InboundRefusal`), an A2A error or a fault is answered in
 * the binding's shape; one that closes the connection over a body still
 * coming is answered first, then lingers: what is left of the body is read
 * and dropped (bounded) before the connection closes, so the caller reads the
 * answer.
 * @example
 * const server = http.createServer(inboundHttp({ steps: { hostGuard: guard?.step, intercepts }, maxBodyBytes, a2a, pages, logger }));
 */
export function inboundHttp(options: InboundHttpOptions): RequestListener {
  const { maxBodyBytes, logger, a2a, steps } = options;
  const shared: Step<HttpCall>[] = [
    ...(steps.hostGuard ? [steps.hostGuard] : []),
    ...steps.intercepts,
    declaredBodyLimit(maxBodyBytes),
  ];
  const credentials = steps.credentials ? [steps.credentials] : [];
  const toPages: Step<HttpCall> = (call) => options.pages(call.req, call.res);
  const pages = compose<HttpCall>([...shared, ...(a2a ? [a2a.card] : []), toPages]);
  const discovery = a2a && credentials.length > 0 ? compose<HttpCall>([...shared, ...credentials, toPages]) : pages;
  const jsonRpc =
    a2a &&
    compose<HttpCall>([
      ...shared,
      ...credentials,
      jsonBody({ maxBodyBytes, mediaTypes: JSON_RPC_MEDIA_TYPES }),
      a2a.jsonRpc.answer,
    ]);
  const rest =
    a2a &&
    compose<HttpCall>([
      ...shared,
      ...credentials,
      jsonBody({ maxBodyBytes, mediaTypes: REST_MEDIA_TYPES }),
      a2a.rest.checkMessage,
      a2a.rest.answer,
    ]);

  const write = (call: HttpCall, err: unknown) => {
    try {
      if (a2a && call.binding === 'jsonrpc') a2a.jsonRpc.refuse(call, err);
      else sendRestRefusal(call, err, logger);
    } catch (failure) {
      // Nothing a caller sends may end the process: an answer that cannot be written ends the connection.
      logger.warn('could not answer a refused request', { error: errorMessage(failure) });
      call.res.destroy();
    }
  };
  const refuse = (call: HttpCall, err: unknown) => {
    // A request wholly received (`complete`: its body, if any, is in memory) closes cleanly after its answer.
    if (!(err instanceof InboundRefusal && err.options.close && !call.req.complete && !call.res.headersSent)) {
      write(call, err);
      return;
    }
    // Its body is still coming: the answer first, then the rest read and dropped before the connection closes.
    write(call, new InboundRefusal(err.status, err.code, err.message, { ...err.options, close: false }));
    lingeringClose(call.req);
  };

  return (req, res) => {
    const call = new HttpCall(req, res);
    const run =
      call.binding === 'jsonrpc'
        ? jsonRpc
        : call.binding === 'rest'
          ? rest
          : CREDENTIAL_PAGES.has(call.name)
            ? discovery
            : pages;
    (run ?? pages)(call).catch((err: unknown) => refuse(call, err));
  };
}
