import { nestingProblem } from './jsonDepth';
import { invalidParamsDetails, type ErrorDetail } from '../../protocol/errorDetails';
import { MESSAGE_METHODS, messageViolation, violationText } from './messageSchema';

/**
 * The JSON-RPC 2.0 envelope of `POST /`, checked once the body is parsed and
 * before the SDK's transport sees it (`jsonRpcBinding.ts`). The SDK reports a
 * broken envelope as -32602 (and parses non-objects as parse errors); JSON-RPC
 * says -32600 Invalid Request. A message's raw shape is checked too (-32602
 * naming the field), before the SDK's reader coerces it.
 */

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** A JSON-RPC error response. */
export interface JsonRpcRefusal {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: ErrorDetail[] };
}

/**
 * The answer to a parsed `POST /` body that is not a well-formed JSON-RPC
 * request (-32600) or whose message has the wrong shape (-32602), or
 * undefined when the SDK may have it. JSON-RPC errors travel as HTTP 200,
 * as the SDK sends its own.
 */
export function envelopeRefusal(body: unknown): JsonRpcRefusal | undefined {
  const problem = envelopeProblem(body);
  if (!problem) {
    const request = body as { id?: string | number | null; method: string; params?: unknown };
    const schema = MESSAGE_METHODS.get(request.method);
    const nesting = nestingProblem(request.params, 'params');
    const violation = nesting || !schema ? undefined : messageViolation(schema, request.params ?? {});
    if (nesting)
      return {
        jsonrpc: '2.0',
        id: request.id ?? null,
        error: { code: INVALID_PARAMS, message: `Invalid params: ${nesting}` },
      };
    if (!violation) return undefined;
    return {
      jsonrpc: '2.0',
      id: request.id ?? null,
      // §9.5: the field violation as a google.rpc.BadRequest (its path from params), with the ErrorInfo.
      error: {
        code: INVALID_PARAMS,
        message: `Invalid params: ${violationText(violation, 'params')}`,
        data: invalidParamsDetails(violation),
      },
    };
  }
  const id = isObject(body) && isValidId(body.id) && body.id !== undefined ? (body.id as string | number | null) : null;
  return { jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: `Invalid Request: ${problem}` } };
}

function envelopeProblem(body: unknown): string | undefined {
  if (Array.isArray(body)) return 'batch requests are not supported; send one JSON-RPC object';
  if (!isObject(body)) return 'the body must be a JSON-RPC request object';
  if (body.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof body.method !== 'string' || body.method.length === 0) return 'method must be a non-empty string';
  // JSON-RPC 2.0: numbers SHOULD NOT have fractional parts; the node takes integers only, as the SDK did.
  if (!isValidId(body.id)) return 'id must be a string, an integer or null';
  if (body.params !== undefined && (typeof body.params !== 'object' || body.params === null)) {
    return 'params must be an object';
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isValidId(id: unknown): boolean {
  return id === undefined || id === null || typeof id === 'string' || Number.isSafeInteger(id);
}
