import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../log/logger';

/**
 * The last word on every request the SDK and our routes did not answer:
 * JSON, never express's HTML page, never a stack trace. Body-parser errors
 * (oversize, bad encoding, malformed JSON) keep their HTTP status; JSON-RPC
 * posts get a JSON-RPC error envelope.
 */

const isJsonRpc = (method: string, path: string) => method === 'POST' && path === '/';

/** JSON-RPC codes for body-parser failures. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

/**
 * Refuses bodies over `maxBodyBytes` by their declared length before any
 * parsing, with HTTP 413 and a JSON error (the SDK's parsers stop at their
 * own 100 kB limit and fall through to {@link jsonErrors}).
 */
export function bodyLimit(maxBodyBytes: number): RequestHandler {
  return (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length <= maxBodyBytes) {
      next();
      return;
    }
    // Nothing will read the body: close the connection after answering.
    res.setHeader('Connection', 'close');
    sendError(
      res,
      req.method,
      req.path,
      413,
      INVALID_REQUEST,
      `request body of ${length} bytes exceeds the limit of ${maxBodyBytes} bytes`,
    );
  };
}

/** 404 for paths no route claims. */
export const notFound: RequestHandler = (req, res) => {
  sendError(res, req.method, req.path, 404, -32601, `no route for ${req.method} ${req.path}`);
};

/** Maps any error reaching express to a JSON answer. */
export function jsonErrors(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const e = (err ?? {}) as { status?: number; statusCode?: number; type?: string; message?: string };
    const status = e.status ?? e.statusCode ?? 500;
    if (res.headersSent) {
      res.end();
      return;
    }
    if (e.type === 'entity.too.large' || status === 413) {
      res.setHeader('Connection', 'close');
      sendError(res, req.method, req.path, 413, INVALID_REQUEST, 'request body exceeds the size limit');
    } else if (e.type === 'entity.parse.failed' || err instanceof SyntaxError) {
      // JSON-RPC errors travel as HTTP 200 (as the SDK sends its own); REST says 400.
      sendError(
        res,
        req.method,
        req.path,
        isJsonRpc(req.method, req.path) ? 200 : 400,
        PARSE_ERROR,
        'Parse error: the request body is not valid JSON',
      );
    } else if (status >= 400 && status < 500) {
      sendError(
        res,
        req.method,
        req.path,
        status,
        INVALID_REQUEST,
        `bad request: ${e.type ?? e.message ?? 'unreadable body'}`,
      );
    } else {
      logger.error('request failed', { method: req.method, path: req.path, error: e.message ?? String(err) });
      sendError(res, req.method, req.path, 500, INTERNAL_ERROR, 'internal error');
    }
  };
}

function sendError(
  res: Parameters<RequestHandler>[1],
  method: string,
  path: string,
  status: number,
  code: number,
  message: string,
): void {
  if (isJsonRpc(method, path)) {
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message } });
  } else {
    res.status(status).json({ error: { code: status, message } });
  }
}
