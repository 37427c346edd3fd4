import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { A2A_VERSION_HEADER, Extensions, HTTP_EXTENSION_HEADER } from '@a2a-js/sdk';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  validateVersion,
  type A2ARequestHandler,
  type User,
} from '@a2a-js/sdk/server';
import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { envelopeRefusal } from './jsonRpcEnvelope';

/** Options of {@link jsonRpcRoute}. */
export interface JsonRpcRouteOptions {
  requestHandler: A2ARequestHandler;
  /** Who the caller is (`auth.ts` `userFromRequest`). */
  userBuilder: (req: Request) => Promise<User>;
  maxBodyBytes: number;
  /** `a2a.legacyCompat`: a request without `A2A-Version` (or with 0.3) is v0.3 and left to the SDK's adapter. */
  legacyCompat: boolean;
  logger: Logger;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};
const LEGACY_VERSION = '0.3';
const INTERNAL_ERROR = -32603;

/**
 * `POST /` for a v1.0 JSON-RPC request with a plain UTF-8 JSON body, in one
 * handler: it reads and parses the body, checks the envelope
 * (`jsonRpcEnvelope.ts`) and calls the SDK's `JsonRpcTransportHandler` as the
 * SDK's express `jsonRpcHandler` does, without body-parser, the SDK's nested
 * router and express's `res.json` (together about a tenth of a greeting's CPU).
 * Anything else — v0.3 requests, other content types or encodings, a body
 * without a length or chunking — goes to `next()`, the general chain
 * (`jsonRpcEnvelope` and the SDK's handler), which answers it as before.
 * Oversized and malformed bodies are passed to the error handler
 * (`errors.ts` `jsonErrors`) in body-parser's terms, so they are answered alike.
 * @example
 * app.post('/', jsonRpcRoute({ requestHandler, userBuilder, maxBodyBytes, legacyCompat: true, logger }), ...jsonRpcEnvelope(maxBodyBytes), jsonRpcHandler(...));
 */
export function jsonRpcRoute(options: JsonRpcRouteOptions): RequestHandler {
  const { requestHandler, userBuilder, maxBodyBytes, legacyCompat, logger } = options;
  const transport = new JsonRpcTransportHandler(requestHandler);
  const versionHeader = A2A_VERSION_HEADER.toLowerCase();
  const extensionHeader = HTTP_EXTENSION_HEADER.toLowerCase();

  const answer = async (req: Request, res: Response, body: unknown): Promise<void> => {
    const refusal = envelopeRefusal(body);
    if (refusal) {
      sendJson(res, 200, refusal);
      return;
    }
    const requestId = (body as { id?: string | number | null }).id ?? null;
    try {
      const requestedVersion = headerValue(req, versionHeader);
      const context = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(headerValue(req, extensionHeader)),
        user: await userBuilder(req),
        headers: req.headers,
        requestedVersion,
      });
      validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'JSONRPC');
      const result = await transport.handle(body as Record<string, unknown>, context);
      if (context.activatedExtensions) res.setHeader(HTTP_EXTENSION_HEADER, Array.from(context.activatedExtensions));
      if (isAsyncIterable(result)) await stream(res, result, requestId);
      else sendJson(res, 200, result);
    } catch (err) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      if (error.code === INTERNAL_ERROR) logger.warn('JSON-RPC request failed', { error: errorMessage(err) });
      if (!res.headersSent)
        sendJson(res, error.code === INTERNAL_ERROR ? 500 : 200, { jsonrpc: '2.0', id: requestId, error });
      else if (!res.writableEnded) res.end();
    }
  };

  // Events as the SDK's handler writes them: the first event is awaited before the SSE headers,
  // so an error before any event is a plain JSON-RPC answer.
  const stream = async (res: Response, events: AsyncGenerator<unknown>, requestId: unknown): Promise<void> => {
    let event: IteratorResult<unknown>;
    try {
      event = await events.next();
    } catch (err) {
      sendJson(res, 200, { jsonrpc: '2.0', id: requestId, error: JsonRpcTransportHandler.mapToJSONRPCError(err) });
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    try {
      while (!event.done) {
        res.write(`data: ${JSON.stringify(event.value)}\n\n`);
        event = await events.next();
      }
    } catch (err) {
      logger.warn('JSON-RPC stream failed', { error: errorMessage(err) });
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      if (!res.writableEnded)
        res.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: requestId, error })}\n\n`);
    } finally {
      if (!res.writableEnded) res.end();
    }
  };

  return (req, res, next) => {
    if (
      !plainJsonBody(req) ||
      (legacyCompat && (headerValue(req, versionHeader) ?? LEGACY_VERSION) === LEGACY_VERSION)
    ) {
      next();
      return;
    }
    // Run in this request's async context, as body-parser binds its own: the body's events come from
    // the socket's context, and the request's trace span (OpenTelemetry's context) must reach the turn.
    // `runInAsyncScope` rather than `AsyncResource.bind`, whose bound function carries two deprecation
    // wrappers made per call (~2% of a greeting's CPU).
    const scope = new AsyncResource('lango.jsonRpcBody');
    readBody(req, maxBodyBytes, (err, text) =>
      scope.runInAsyncScope(() => {
        if (err) {
          next(err);
          return;
        }
        let body: unknown;
        try {
          // body-parser's reading of an empty body (`strict: false`): an empty object.
          body = text === '' ? {} : JSON.parse(text as string);
        } catch (parseError) {
          next(Object.assign(parseError as Error, { status: 400, type: 'entity.parse.failed' }));
          return;
        }
        // Later layers (request metrics) read the method from the parsed body.
        req.body = body;
        answer(req, res, body).catch(next);
      }),
    );
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

/** A body this route reads itself: declared JSON in UTF-8 (or no charset), not encoded, with a length or chunked. */
function plainJsonBody(req: IncomingMessage): boolean {
  const type = req.headers['content-type']?.toLowerCase().replace(/\s+/g, '');
  if (type !== 'application/json' && type !== 'application/json;charset=utf-8') return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

/** The body as UTF-8 text, or a body-parser-shaped error (413 `entity.too.large`, 400 `request.aborted`). */
function readBody(
  req: IncomingMessage,
  limit: number,
  done: (err: (Error & { status: number; type: string }) | undefined, text?: string) => void,
): void {
  const chunks: Buffer[] = [];
  let length = 0;
  let finished = false;
  const finish = (err?: Error & { status: number; type: string }) => {
    if (finished) return;
    finished = true;
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('error', onError);
    req.removeListener('aborted', onAborted);
    if (err) {
      req.resume();
      done(err);
    } else done(undefined, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  };
  const onData = (chunk: Buffer) => {
    length += chunk.length;
    if (length > limit) finish(bodyError('request entity too large', 413, 'entity.too.large'));
    else chunks.push(chunk);
  };
  const onEnd = () => finish();
  const onError = (err: Error) => finish(Object.assign(err, { status: 400, type: 'request.aborted' }));
  const onAborted = () => finish(bodyError('request aborted', 400, 'request.aborted'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

function bodyError(message: string, status: number, type: string): Error & { status: number; type: string } {
  return Object.assign(new Error(message), { status, type });
}

function sendJson(res: Response, status: number, value: unknown): void {
  const json = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

function isAsyncIterable(value: unknown): value is AsyncGenerator<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}
