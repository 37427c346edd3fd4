import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE, RequestMalformedError } from '@a2a-js/sdk/errors';

/**
 * The typed error details of A2A v1.0.1 (§3.3.2, §9.5, §10.6, §11.6): every
 * detail object carries an `@type`; an A2A error carries a
 * `google.rpc.ErrorInfo`, and invalid params a `google.rpc.BadRequest` whose
 * field violation names the field. The node names the field where it
 * refuses a request ({@link invalidParam}); the SDK's transports serialize
 * the error's ErrorInfo (with that field in its metadata) on every binding,
 * and each binding's edge adds the BadRequest from it ({@link withBadRequest}).
 */

/** The `@type` of `google.rpc.BadRequest` in ProtoJSON `Any` form. */
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';
/** The ErrorInfo reason the SDK gives RequestMalformedError (JSON-RPC -32602, gRPC/HTTP INVALID_ARGUMENT). */
export const INVALID_PARAMS_REASON = 'INVALID_PARAMS';
/** The ErrorInfo metadata key carrying the field an invalid-params error is about. */
const FIELD_KEY = 'field';

/** One field a request got wrong (`google.rpc.BadRequest.FieldViolation`). */
export interface FieldViolation {
  field: string;
  description: string;
}

/** A detail object of an error body: ProtoJSON `Any`, so always with an `@type`. */
export type ErrorDetail = { '@type': string } & Record<string, unknown>;

/**
 * The refusal of a request whose `field` is wrong: the SDK's
 * RequestMalformedError (-32602 / INVALID_ARGUMENT / 400), its message
 * `<field>: <description>`, its ErrorInfo naming the field.
 * @example
 * throw invalidParam('message.parts', 'must contain at least one part');
 */
export function invalidParam(field: string, description: string): RequestMalformedError {
  return new RequestMalformedError({ message: `${field}: ${description}`, metadata: { [FIELD_KEY]: field } });
}

/** The ErrorInfo of invalid params naming `field`, as an error body's detail. */
export function invalidParamsInfo(field: string): ErrorDetail {
  return {
    '@type': ERROR_INFO_TYPE,
    reason: INVALID_PARAMS_REASON,
    domain: A2A_ERROR_DOMAIN,
    metadata: { [FIELD_KEY]: field },
  };
}

/** `google.rpc.BadRequest` with `violations`, as an error body's detail. */
export function badRequest(violations: readonly FieldViolation[]): ErrorDetail {
  return { '@type': BAD_REQUEST_TYPE, fieldViolations: violations.map((v) => ({ ...v })) };
}

/** The details of an invalid-params refusal the node answers itself: the ErrorInfo and the BadRequest. */
export function invalidParamsDetails(violation: FieldViolation): ErrorDetail[] {
  return [invalidParamsInfo(violation.field), badRequest([violation])];
}

/** The reason of the A2A ErrorInfo among `details` (an error body's), or undefined. */
export function errorReason(details: readonly unknown[]): string | undefined {
  for (const detail of details) {
    const info = detail as { '@type'?: unknown; reason?: unknown; domain?: unknown } | null;
    if (info?.['@type'] === ERROR_INFO_TYPE && info.domain === A2A_ERROR_DOMAIN && typeof info.reason === 'string')
      return info.reason;
  }
  return undefined;
}

/**
 * The field an invalid-params ErrorInfo among `details` names (as the SDK
 * serialized an {@link invalidParam} error), or undefined.
 */
export function violatedField(details: readonly unknown[]): string | undefined {
  for (const detail of details) {
    const info = detail as { '@type'?: unknown; reason?: unknown; metadata?: Record<string, unknown> } | null;
    if (info?.['@type'] !== ERROR_INFO_TYPE || info.reason !== INVALID_PARAMS_REASON) continue;
    const field = info.metadata?.[FIELD_KEY];
    if (typeof field === 'string' && field.length > 0) return field;
  }
  return undefined;
}

/**
 * `details` of an error body (JSON-RPC `error.data`, HTTP+JSON `error.details`) with the BadRequest its
 * invalid-params ErrorInfo implies appended (its description from the error's `message`); unchanged otherwise.
 */
export function withBadRequest(details: readonly unknown[], message: string): unknown[] {
  const field = violatedField(details);
  if (field === undefined || details.some((d) => (d as { '@type'?: unknown } | null)?.['@type'] === BAD_REQUEST_TYPE))
    return [...details];
  // The message is `<field>: <description>` (invalidParam's form): the violation's description is the rest.
  const description = message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
  return [...details, badRequest([{ field, description }])];
}

/**
 * A JSON-RPC error object as v1.0.1 wants it (§9.5): a `data` that is there
 * is an array of typed details, with the BadRequest of invalid params.
 * Anything else in `data` (not an array of `@type` objects) is dropped:
 * nothing untyped goes out.
 */
export function typedJsonRpcError<E extends { code: number; message: string; data?: unknown }>(error: E): E {
  if (error.data === undefined) return error;
  const data = Array.isArray(error.data) ? error.data.filter(isTyped) : [];
  const typed = withBadRequest(data, error.message);
  const { data: _dropped, ...rest } = error;
  return (typed.length > 0 ? { ...rest, data: typed } : rest) as E;
}

function isTyped(detail: unknown): detail is ErrorDetail {
  return typeof detail === 'object' && detail !== null && typeof (detail as ErrorDetail)['@type'] === 'string';
}
