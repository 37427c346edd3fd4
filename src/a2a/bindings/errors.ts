import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../../log/logger';

/**
 * The last word on every request the express routes (the SDK's REST handler,
 * the node's pages) did not answer: JSON, never express's HTML page, never a
 * stack trace. Body-parser errors of the pages' own parsers keep their HTTP
 * status; JSON-RPC posts get a JSON-RPC error envelope.
 */

const isJsonRpc = (method: string, path: string) => method === 'POST' && path === '/';

/** JSON-RPC codes for body-parser failures. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

/** 404 for paths no route claims. */
export const notFound: RequestHandler = (req, res) => {
  sendError(res, req.method, req.path, 404, -32601, `no route for ${req.method} ${req.path}`);
};

/** How an error reaching the edge is answered: HTTP status, JSON-RPC code and message, and whether the connection closes. */
interface ErrorAnswer {
  status: number;
  code: number;
  message: string;
  /** After an oversized body nothing reads the rest: the connection closes. */
  close: boolean;
}

/**
 * The answer to `err` for a request (`method`, `path`): body-parser errors keep their status, parse errors are
 * JSON-RPC's (HTTP 200 for a JSON-RPC post), anything else is an internal error, logged without a stack.
 */
function errorAnswer(err: unknown, method: string, path: string, logger: Logger): ErrorAnswer {
  const e = (err ?? {}) as { status?: number; statusCode?: number; type?: string; message?: string };
  const status = e.status ?? e.statusCode ?? 500;
  if (e.type === 'entity.too.large' || status === 413) {
    return { status: 413, code: INVALID_REQUEST, message: 'request body exceeds the size limit', close: true };
  }
  if (e.type === 'entity.parse.failed' || err instanceof SyntaxError) {
    // JSON-RPC errors travel as HTTP 200 (as the SDK sends its own); REST says 400.
    return {
      status: isJsonRpc(method, path) ? 200 : 400,
      code: PARSE_ERROR,
      message: 'Parse error: the request body is not valid JSON',
      close: false,
    };
  }
  if (status >= 400 && status < 500) {
    return {
      status,
      code: INVALID_REQUEST,
      message: `bad request: ${e.type ?? e.message ?? 'unreadable body'}`,
      close: false,
    };
  }
  logger.error('request failed', { method, path, error: e.message ?? String(err) });
  return { status: 500, code: INTERNAL_ERROR, message: 'internal error', close: false };
}

/** The JSON body of an error answer: a JSON-RPC envelope for a JSON-RPC post, the REST error object otherwise. */
function errorBody(method: string, path: string, status: number, code: number, message: string): unknown {
  return isJsonRpc(method, path)
    ? { jsonrpc: '2.0', id: null, error: { code, message } }
    : { error: { code: status, message } };
}

/** Maps any error reaching express to a JSON answer. */
export function jsonErrors(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.end();
      return;
    }
    const answer = errorAnswer(err, req.method, req.path, logger);
    if (answer.close) res.setHeader('Connection', 'close');
    sendError(res, req.method, req.path, answer.status, answer.code, answer.message);
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
  res.status(status).json(errorBody(method, path, status, code, message));
}
