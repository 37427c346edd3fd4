import { BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';
import { GRPC_STATUS_DETAILS_BIN, decodeStatus, encodeGrpcStatusDetails, grpcStatusFor } from '@a2a-js/sdk/errors/grpc';
import { A2AError } from '@a2a-js/sdk/errors';
import { errorMessage } from '../../errors';
import { BAD_REQUEST_TYPE, withBadRequest, type ErrorDetail, type FieldViolation } from '../../protocol/errorDetails';
import { TASK_GENERATION_MISMATCH } from '../../protocol/generationExtension';
import { STORAGE_UNAVAILABLE } from '../tasks/storageOutage';

/**
 * gRPC errors as A2A v1.0.1 gives them (§10.6), decided here for the
 * node's own gRPC service (`grpcService.ts`): each A2A error's status (§5.4,
 * the SDK's public `grpcStatusFor`; the node's own errors by their reason),
 * a `google.rpc.Status` in `grpc-status-details-bin` with the error's
 * `google.rpc.ErrorInfo` and, for invalid params, a `google.rpc.BadRequest`
 * naming the field; anything that is no A2A error is `INTERNAL`.
 */

/** A call's error status, as grpc-js takes it (a unary callback's error, or emitted on a stream). */
export type GrpcError = Partial<grpc.StatusObject> & { code: grpc.status; details?: string };

/** The node's own A2A errors (outside the spec's table) by their ErrorInfo reason: their gRPC status. */
const NODE_ERROR_STATUS: Readonly<Record<string, grpc.status>> = Object.freeze({
  // A temporary system error, which §3.3.2 answers 503 over HTTP (`storageOutage.ts`).
  [STORAGE_UNAVAILABLE]: grpc.status.UNAVAILABLE,
  // The A2A 1.1 draft's TaskGenerationMismatchError (the generation extension, `generation.ts`).
  [TASK_GENERATION_MISMATCH]: grpc.status.ABORTED,
});

/**
 * The status a call that failed with `err` is answered with: an A2A error's
 * code, message and details (the BadRequest too when it names a field); any
 * other failure `INTERNAL` with its message, as the JSON-RPC binding's
 * -32603 carries it.
 */
export function grpcStatusOf(err: unknown): GrpcError {
  if (!(err instanceof A2AError)) return grpcRefusal(grpc.status.INTERNAL, errorMessage(err) || 'internal error');
  const specCode = grpcStatusFor(err);
  const code = NODE_ERROR_STATUS[err.reason] ?? (specCode === grpc.status.UNKNOWN ? grpc.status.INTERNAL : specCode);
  const metadata = new grpc.Metadata();
  metadata.set(GRPC_STATUS_DETAILS_BIN, statusDetails(code, err));
  return { code, details: err.message, metadata };
}

/** The `google.rpc.Status` of `err` answered with `code`: its ErrorInfo, and the BadRequest of a field it names. */
function statusDetails(code: grpc.status, err: A2AError): Buffer {
  const blob = encodeGrpcStatusDetails(code, err.message, err.reason, err.metadata);
  if (code !== grpc.status.INVALID_ARGUMENT) return blob;
  const details = withBadRequest([err.toErrorInfo()], err.message);
  const badRequest = details.find((detail) => (detail as ErrorDetail)['@type'] === BAD_REQUEST_TYPE) as
    { fieldViolations: FieldViolation[] } | undefined;
  if (!badRequest) return blob;
  const status = decodeStatus(blob);
  return encodeStatus(status.code, status.message, [
    ...status.details,
    { typeUrl: BAD_REQUEST_TYPE, value: encodeBadRequest(badRequest.fieldViolations) },
  ]);
}

/** A refusal the node answers before the handler sees the call (no credential): its status and message, no details. */
export function grpcRefusal(code: grpc.status, message: string): GrpcError {
  return { code, details: message, metadata: new grpc.Metadata() };
}

/** `google.rpc.Status` { code = 1; message = 2; repeated google.protobuf.Any details = 3 } in protobuf binary. */
function encodeStatus(code: number, message: string, details: ReadonlyArray<{ typeUrl: string; value: Uint8Array }>) {
  const writer = new BinaryWriter();
  if (code !== 0) writer.uint32(8).int32(code);
  if (message !== '') writer.uint32(18).string(message);
  for (const detail of details)
    writer.uint32(26).fork().uint32(10).string(detail.typeUrl).uint32(18).bytes(detail.value).join();
  return Buffer.from(writer.finish());
}

/** `google.rpc.BadRequest` { repeated FieldViolation field_violations = 1 }, each { field = 1; description = 2 }. */
function encodeBadRequest(violations: readonly FieldViolation[]): Uint8Array {
  const writer = new BinaryWriter();
  for (const violation of violations)
    writer.uint32(10).fork().uint32(10).string(violation.field).uint32(18).string(violation.description).join();
  return writer.finish();
}
