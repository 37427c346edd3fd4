import type { RequestHandler, Response } from 'express';
import { A2AError, RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { sendJson, type HttpCall } from './httpCall';
import { InboundRefusal } from './inbound';
import { TASK_GENERATION_MISMATCH } from './generation';
import { STORAGE_UNAVAILABLE } from './storageOutage';

/**
 * HTTP+JSON answers as the A2A v1.0 specification gives them (§5.4 error
 * code mappings, §11.1 media type), where the SDK's REST transport differs:
 * it answers ContentTypeNotSupported 400, TaskNotCancelable 400 and
 * InvalidAgentResponse 500, and labels every body `application/a2a+json`.
 * The v0.3 REST answers (`legacyCompat`) get the same statuses: v0.3 asks for
 * "appropriate HTTP status codes that correspond to A2A error types" without a
 * table, so one error has one status whichever version the caller speaks.
 */

/** The A2A media type a client may ask for in `Accept`; without it responses are `application/json` (§11.1). */
export const A2A_MEDIA_TYPE = 'application/a2a+json';
const JSON_MEDIA_TYPE = 'application/json';

/**
 * Each A2A error by its `google.rpc.ErrorInfo` reason (§11.6): the HTTP
 * status and the `google.rpc.Code` name of the v1.0 table (§5.4).
 */
export const SPEC_REST_ERRORS: Readonly<Record<string, { status: number; name: string }>> = Object.freeze({
  TASK_NOT_FOUND: { status: 404, name: 'NOT_FOUND' },
  TASK_NOT_CANCELABLE: { status: 409, name: 'FAILED_PRECONDITION' },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { status: 400, name: 'UNIMPLEMENTED' },
  UNSUPPORTED_OPERATION: { status: 400, name: 'UNIMPLEMENTED' },
  CONTENT_TYPE_NOT_SUPPORTED: { status: 415, name: 'INVALID_ARGUMENT' },
  INVALID_AGENT_RESPONSE: { status: 502, name: 'INTERNAL' },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: { status: 400, name: 'FAILED_PRECONDITION' },
  EXTENSION_SUPPORT_REQUIRED: { status: 400, name: 'FAILED_PRECONDITION' },
  VERSION_NOT_SUPPORTED: { status: 400, name: 'UNIMPLEMENTED' },
  // The A2A 1.1 draft's (the generation extension, `generation.ts`).
  [TASK_GENERATION_MISMATCH]: { status: 409, name: 'ABORTED' },
  // Not an error of the table: a temporary system error, which §3.3.2 answers 503 (`storageOutage.ts`).
  [STORAGE_UNAVAILABLE]: { status: 503, name: 'UNAVAILABLE' },
});

/** The v0.3 error bodies (`{ code, message }`) by their JSON-RPC code, as the reasons above. */
const LEGACY_CODE_REASONS: Readonly<Record<number, string>> = Object.freeze({
  [-32001]: 'TASK_NOT_FOUND',
  [-32002]: 'TASK_NOT_CANCELABLE',
  [-32003]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [-32004]: 'UNSUPPORTED_OPERATION',
  [-32005]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [-32006]: 'INVALID_AGENT_RESPONSE',
  [-32007]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
});

/** When a caller answered 503 may try again: about when a balancer has moved it to a replica that answers. */
const RETRY_AFTER_SECONDS = '5';

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const A2A_ERROR_DOMAIN = 'a2a-protocol.org';

interface RestErrorBody {
  error: { code?: number; status?: string; details?: Array<Record<string, unknown>> };
}

/** The A2A error reason a REST error body carries, if it is one. */
function reasonOf(body: unknown): string | undefined {
  const details = (body as Partial<RestErrorBody> | undefined)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  const info = details.find((d) => d?.['@type'] === ERROR_INFO_TYPE && d?.domain === A2A_ERROR_DOMAIN);
  return typeof info?.reason === 'string' ? info.reason : undefined;
}

/**
 * Mounted in front of the SDK's REST handler: every JSON body it sends goes
 * out as `application/json` unless the caller's `Accept` prefers
 * `application/a2a+json`, and every A2A error body gets the status of the
 * spec's table (in the HTTP status line and `error.code` / `error.status`).
 * Server-sent event streams and empty answers pass untouched.
 */
export function restResponses(): RequestHandler {
  return (req, res, next) => {
    const mediaType =
      req.accepts([JSON_MEDIA_TYPE, A2A_MEDIA_TYPE]) === A2A_MEDIA_TYPE ? A2A_MEDIA_TYPE : JSON_MEDIA_TYPE;
    const json = res.json.bind(res) as Response['json'];
    res.json = (body?: unknown) => {
      const legacyCode = (body as { code?: unknown } | undefined)?.code;
      const legacyReason = typeof legacyCode === 'number' ? LEGACY_CODE_REASONS[legacyCode] : undefined;
      if (legacyReason && res.statusCode >= 400) res.status(SPEC_REST_ERRORS[legacyReason]!.status);
      const mapped = SPEC_REST_ERRORS[reasonOf(body) ?? ''];
      if (mapped && res.statusCode >= 400) {
        const error = (body as RestErrorBody).error;
        error.code = mapped.status;
        error.status = mapped.name;
        res.status(mapped.status);
        if (mapped.status === 503) res.setHeader('Retry-After', RETRY_AFTER_SECONDS);
      }
      res.setHeader('Content-Type', `${mediaType}; charset=utf-8`);
      return json(body);
    };
    next();
  };
}

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
    const mapped = SPEC_REST_ERRORS[err.toErrorInfo().reason];
    const status = mapped?.status ?? 400;
    const body = toRestErrorBody(err, status);
    if (mapped) body.error.status = mapped.name;
    sendJson(res, status, body);
    return;
  }
  logger.error('request failed', { method: call.method, path: call.path, error: errorMessage(err) });
  sendJson(res, 500, { error: { code: 500, message: 'internal error' } });
}
