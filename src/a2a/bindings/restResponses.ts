import type { RequestHandler, Response } from 'express';
import { A2AError, RequestMalformedError, restStatusFor, toRestErrorBody } from '@a2a-js/sdk/errors';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { errorReason, withBadRequest } from '../../protocol/errorDetails';
import { sendJson, type HttpCall } from './httpCall';
import { InboundRefusal } from './inbound';
import { TASK_GENERATION_MISMATCH } from '../../protocol/generationExtension';
import { STORAGE_UNAVAILABLE } from '../tasks/storageOutage';

/**
 * HTTP+JSON answers as A2A v1.0.1 gives them. The SDK's REST transport
 * already answers each A2A error with the status of v1.0.1's table (§5.4:
 * TaskNotCancelable, ContentTypeNotSupported and the other client errors
 * 400, InvalidAgentResponse 500) in a `google.rpc.Status` body carrying its
 * `google.rpc.ErrorInfo` (§11.6), and the v0.3 REST layer (`legacyCompat`)
 * the same statuses. What this adds: invalid params get a
 * `google.rpc.BadRequest` naming the field (§11.6); the node's database not
 * answering (`storageOutage.ts`) is 503 with `Retry-After` (§3.3.2); and
 * bodies are labelled `application/json` unless `Accept` prefers
 * `application/a2a+json` (§11.1: both are accepted on requests).
 */

/** The A2A media type (§11.1, §14.1); a client asks for it in `Accept`, else responses are `application/json`. */
export const A2A_MEDIA_TYPE = 'application/a2a+json';
const JSON_MEDIA_TYPE = 'application/json';

/** When a caller answered 503 may try again: about when a balancer has moved it to a replica that answers. */
const RETRY_AFTER_SECONDS = '5';

interface RestErrorBody {
  error: { code?: number; status?: string; message?: unknown; details?: unknown };
}

/**
 * Mounted in front of the SDK's REST handler: every JSON body it sends goes
 * out in the media type the caller prefers, and an invalid-params error body
 * gets its BadRequest detail. Server-sent event streams and empty answers
 * pass untouched.
 */
export function restResponses(): RequestHandler {
  return (req, res, next) => {
    const mediaType =
      req.accepts([JSON_MEDIA_TYPE, A2A_MEDIA_TYPE]) === A2A_MEDIA_TYPE ? A2A_MEDIA_TYPE : JSON_MEDIA_TYPE;
    const json = res.json.bind(res) as Response['json'];
    res.json = (body?: unknown) => {
      if (res.statusCode >= 400) {
        const answer = specErrorBody(body, res.statusCode);
        res.status(answer.status);
        for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      }
      res.setHeader('Content-Type', `${mediaType}; charset=utf-8`);
      return json(body);
    };
    next();
  };
}

/**
 * An HTTP+JSON error body (`google.rpc.Status`) answered with `status` as the node sends it: invalid params with
 * the BadRequest naming the field; the node's database not answering 503 with `Retry-After`. Changes `body` in
 * place; resolves with the status and headers to send it with.
 */
function specErrorBody(body: unknown, status: number): { status: number; headers: Record<string, string> } {
  const error = (body as Partial<RestErrorBody> | undefined)?.error;
  if (!error || !Array.isArray(error.details)) return { status, headers: {} };
  const details = withBadRequest(error.details, typeof error.message === 'string' ? error.message : '');
  error.details = details;
  const own = NODE_ERRORS[errorReason(details) ?? ''];
  if (!own) return { status, headers: {} };
  error.code = own.status;
  error.status = own.name;
  return { status: own.status, headers: own.headers ?? {} };
}

/** Errors outside the v1.0.1 table the SDK answers by, with the status the node sends them with. */
const NODE_ERRORS: Readonly<Record<string, { status: number; name: string; headers?: Record<string, string> }>> = {
  // A temporary system error, which §3.3.2 answers 503 (`storageOutage.ts`).
  [STORAGE_UNAVAILABLE]: { status: 503, name: 'UNAVAILABLE', headers: { 'Retry-After': RETRY_AFTER_SECONDS } },
  // The A2A 1.1 draft's TaskGenerationMismatchError (the generation extension, `generation.ts`).
  [TASK_GENERATION_MISMATCH]: { status: 409, name: 'ABORTED' },
};

const PARSE_ERROR = -32700;

/**
 * Writes a refusal or error that ended an HTTP+JSON call (or a call to the node's other routes) before the SDK's
 * handler: an A2A error as the SDK's REST error body with the spec's status, a refusal of the inbound chain as
 * `{ error: { code, status?, message } }` with its own, anything else as a logged internal error.
 */
export function sendRestRefusal(call: HttpCall, err: unknown, logger: Logger): void {
  const { res } = call;
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  if (err instanceof InboundRefusal) {
    const headers = err.options.close ? { ...err.options.headers, Connection: 'close' } : err.options.headers;
    // A body that is not JSON is a malformed request, as the SDK's REST handler calls one.
    if (err.code === PARSE_ERROR) {
      sendJson(res, 400, toRestErrorBody(new RequestMalformedError(err.message), 400), headers);
      return;
    }
    const status = err.options.restStatus ? { status: err.options.restStatus } : {};
    sendJson(res, err.status, { error: { code: err.status, ...status, message: err.message } }, headers);
    return;
  }
  if (err instanceof A2AError) {
    // As the SDK's REST handler answers it (the v1.0.1 table), with the node's details.
    const body = toRestErrorBody(err, restStatusFor(err));
    const answer = specErrorBody(body, body.error.code);
    sendJson(res, answer.status, body, answer.headers);
    return;
  }
  logger.error('request failed', { method: call.method, path: call.path, error: errorMessage(err) });
  sendJson(res, 500, { error: { code: 500, message: 'internal error' } });
}
