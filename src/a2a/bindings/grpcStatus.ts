import { BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';
import {
  GRPC_STATUS_DETAILS_BIN,
  decodeErrorInfo,
  decodeStatus,
  encodeGrpcStatusDetails,
} from '@a2a-js/sdk/errors/grpc';
import { A2AError, ERROR_INFO_TYPE } from '@a2a-js/sdk/errors';
import { BAD_REQUEST_TYPE, violatedField, withBadRequest, type FieldViolation } from '../../protocol/errorDetails';
import { TASK_GENERATION_MISMATCH } from '../../protocol/generationExtension';
import { STORAGE_UNAVAILABLE } from '../tasks/storageOutage';

/**
 * gRPC errors as A2A v1.0.1 gives them (§10.6): a `google.rpc.Status` in
 * `grpc-status-details-bin` with the `google.rpc.ErrorInfo` of the A2A error
 * and, for invalid params, a `google.rpc.BadRequest` naming the field. The
 * SDK's gRPC service already maps each A2A error to its status (§5.4) and
 * encodes its ErrorInfo; {@link toSpecStatus} adds the BadRequest and gives
 * an error that is no A2A error `INTERNAL` (the SDK says `UNKNOWN`).
 */

/** What the SDK's gRPC service passes to a call's callback (or emits on a stream) for an error. */
export type GrpcError = Partial<grpc.StatusObject> & { code: grpc.status; details?: string };

/** The node's own A2A errors (outside the spec's table) by their ErrorInfo reason: their gRPC status. */
const NODE_ERROR_STATUS: Readonly<Record<string, grpc.status>> = Object.freeze({
  // A temporary system error, which §3.3.2 answers 503 over HTTP (`storageOutage.ts`).
  [STORAGE_UNAVAILABLE]: grpc.status.UNAVAILABLE,
  // The A2A 1.1 draft's TaskGenerationMismatchError (the generation extension, `generation.ts`).
  [TASK_GENERATION_MISMATCH]: grpc.status.ABORTED,
});

/**
 * `error` (what the SDK's service answered for `failure`, the handler's
 * throw) as the node answers it: one of the node's own errors gets its
 * status and ErrorInfo; `UNKNOWN` becomes `INTERNAL` (§10.6 maps internal
 * errors there); an `INVALID_ARGUMENT` whose ErrorInfo names a field gets
 * the BadRequest beside it. Anything else passes unchanged.
 */
export function toSpecStatus(error: GrpcError, failure?: unknown): GrpcError {
  const own = failure instanceof A2AError ? NODE_ERROR_STATUS[failure.reason] : undefined;
  if (own !== undefined) {
    const { message, reason } = failure as A2AError;
    const metadata = new grpc.Metadata();
    metadata.set(GRPC_STATUS_DETAILS_BIN, encodeGrpcStatusDetails(own, message, reason));
    return { code: own, details: message, metadata };
  }
  if (error.code === grpc.status.UNKNOWN) return { ...error, code: grpc.status.INTERNAL };
  if (error.code !== grpc.status.INVALID_ARGUMENT || !error.metadata) return error;
  const [blob] = error.metadata.get(GRPC_STATUS_DETAILS_BIN);
  if (!Buffer.isBuffer(blob)) return error;
  const status = decodeStatus(blob);
  const infos = status.details
    .filter((detail) => detail.typeUrl === ERROR_INFO_TYPE)
    .map((detail) => ({ '@type': ERROR_INFO_TYPE, ...decodeErrorInfo(detail.value) }));
  const field = violatedField(infos);
  if (field === undefined || status.details.some((detail) => detail.typeUrl === BAD_REQUEST_TYPE)) return error;
  const badRequest = withBadRequest(infos, status.message).at(-1) as { fieldViolations: FieldViolation[] };
  const metadata = error.metadata.clone();
  metadata.set(
    GRPC_STATUS_DETAILS_BIN,
    encodeStatus(status.code, status.message, [
      ...status.details,
      { typeUrl: BAD_REQUEST_TYPE, value: encodeBadRequest(badRequest.fieldViolations) },
    ]),
  );
  return { ...error, metadata };
}

/** A refusal the node answers before the SDK sees the call (no credential): its status and message, no details. */
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
