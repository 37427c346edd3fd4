import type { RequestHandler, Response } from 'express';
import { errorReason, withBadRequest } from './errorDetails';
import { STORAGE_UNAVAILABLE } from './storageOutage';

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
      const error = (body as Partial<RestErrorBody> | undefined)?.error;
      if (res.statusCode >= 400 && error && Array.isArray(error.details)) {
        const details = withBadRequest(error.details, typeof error.message === 'string' ? error.message : '');
        error.details = details;
        // Not an error of the table: a temporary system error, which §3.3.2 answers 503 (`storageOutage.ts`).
        if (errorReason(details) === STORAGE_UNAVAILABLE) {
          error.code = 503;
          error.status = 'UNAVAILABLE';
          res.status(503).setHeader('Retry-After', RETRY_AFTER_SECONDS);
        }
      }
      res.setHeader('Content-Type', `${mediaType}; charset=utf-8`);
      return json(body);
    };
    next();
  };
}
