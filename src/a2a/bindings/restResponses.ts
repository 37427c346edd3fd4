import { A2AError, RequestMalformedError, restStatusFor, toRestErrorBody } from '@a2a-js/sdk/errors';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { errorReason, withBadRequest } from '../../protocol/errorDetails';
import { sendJson, type HttpCall } from './httpCall';
import { InboundRefusal } from './inbound';
import { TASK_GENERATION_MISMATCH } from '../../protocol/generationExtension';
import { STORAGE_UNAVAILABLE } from '../tasks/storageOutage';

/**
 * HTTP+JSON answers as A2A v1.0.1 gives them (the node's own v1.0 REST
 * binding, `restBinding.ts`, writes every answer through here). Each A2A
 * error is answered with the status of v1.0.1's table (§5.4, the SDK's
 * public `restStatusFor`) in a `google.rpc.Status` body carrying its
 * `google.rpc.ErrorInfo` (§11.6, the SDK's `toRestErrorBody`); invalid
 * params add a `google.rpc.BadRequest` naming the field (§11.6); the node's
 * database not answering (`storageOutage.ts`) is 503 with `Retry-After`
 * (§3.3.2); bodies are labelled `application/json` unless `Accept` prefers
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

/** The `Content-Type` of a JSON answer to `call`: A2A's own media type when its `Accept` prefers it, else JSON's. */
export function restContentType(call: HttpCall): string {
  return `${prefersA2aMediaType(call.header('accept')) ? A2A_MEDIA_TYPE : JSON_MEDIA_TYPE}; charset=utf-8`;
}

/** Whether an `Accept` header ranks `application/a2a+json` above `application/json` (q-values; ties go to JSON). */
function prefersA2aMediaType(accept: string | undefined): boolean {
  if (!accept || !accept.includes(A2A_MEDIA_TYPE)) return false;
  let a2a = -1;
  let json = -1;
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = Number(/^q=([\d.]+)$/.exec(parameters.find((p) => p.startsWith('q=')) ?? 'q=1')?.[1] ?? 1);
    if (type === A2A_MEDIA_TYPE) a2a = Math.max(a2a, q);
    else if (type === JSON_MEDIA_TYPE || type === 'application/*' || type === '*/*') json = Math.max(json, q);
  }
  return a2a > json;
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

/** An HTTP+JSON error answer: its status, `google.rpc.Status` body and headers. */
export interface RestErrorAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * The answer to what ended an HTTP+JSON call (or a call to the node's other routes): an A2A error as the SDK's REST
 * error body with the spec's status and the node's details, a refusal of the inbound chain as
 * `{ error: { code, status?, message } }` with its own status, anything else as a logged internal error.
 */
export function restErrorAnswer(err: unknown, logger: Logger, at: { method: string; path: string }): RestErrorAnswer {
  if (err instanceof InboundRefusal) {
    const headers = err.options.close ? { ...err.options.headers, Connection: 'close' } : { ...err.options.headers };
    // A body that is not JSON is a malformed request, as the SDK's REST handler calls one.
    if (err.code === PARSE_ERROR)
      return { status: 400, body: toRestErrorBody(new RequestMalformedError(err.message), 400), headers };
    const status = err.options.restStatus ? { status: err.options.restStatus } : {};
    return { status: err.status, body: { error: { code: err.status, ...status, message: err.message } }, headers };
  }
  if (err instanceof A2AError) {
    const body = toRestErrorBody(err, restStatusFor(err));
    const answer = specErrorBody(body, body.error.code);
    return { status: answer.status, body, headers: answer.headers };
  }
  logger.error('request failed', { method: at.method, path: at.path, error: errorMessage(err) });
  return { status: 500, body: { error: { code: 500, message: 'internal error' } }, headers: {} };
}

/** Writes {@link restErrorAnswer} of `err` as the call's answer (ends a response already under way). */
export function sendRestRefusal(call: HttpCall, err: unknown, logger: Logger): void {
  const { res } = call;
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const answer = restErrorAnswer(err, logger, call);
  sendJson(res, answer.status, answer.body, { ...answer.headers, 'Content-Type': restContentType(call) });
}
