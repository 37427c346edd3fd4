import type { IncomingHttpHeaders } from 'node:http';
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { InboundRefusal, type Binding, type InboundCall } from './inbound';
import { ANONYMOUS, type Principal, type SubjectToken } from '../../principal';

/**
 * A gRPC call as the inbound chain's call (`inbound.ts`), so the gRPC
 * binding mounts the steps every binding mounts (host guard, interceptors,
 * credentials): `POST` to its method's path, its metadata as headers (its
 * `:authority` as `host`), the client certificate of an mTLS connection,
 * the A2A method as its name, and its answer heard as the HTTP status its
 * gRPC code stands for. A class, not a literal of closures: one is made per
 * call.
 */
export class GrpcCall implements InboundCall {
  readonly binding: Binding = 'grpc';
  readonly method = 'POST';
  readonly path: string;
  name: string;
  principal: Principal = ANONYMOUS;
  subjectToken: SubjectToken | undefined = undefined;
  readonly headers: IncomingHttpHeaders;
  private listeners: Array<(status: number) => void> = [];
  private done = false;

  constructor(
    readonly call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
    /** The A2A method (`SendMessage`, …). */
    name: string,
  ) {
    this.name = name;
    this.path = `/lf.a2a.v1.A2AService/${name}`;
    this.headers = headersOf(call.metadata, call.getHost());
  }

  get remoteAddress(): string | undefined {
    return peerAddress(this.call.getPeer());
  }

  get peerCertificate(): PeerCertificate | undefined {
    // grpc-js gives a certificate only on a TLS connection that verified it.
    return this.call.getAuthContext()?.sslPeerCertificate;
  }

  onAnswered(listener: (status: number) => void): void {
    this.listeners.push(listener);
  }

  /** The call was answered with `code` (once: a second answer is ignored). */
  answered(code: grpc.status): void {
    if (this.done) return;
    this.done = true;
    const status = HTTP_STATUS_OF[code] ?? 500;
    for (const listener of this.listeners) listener(status);
  }
}

/**
 * The HTTP status each gRPC code stands for (the `google.rpc.Code` table):
 * what interceptors (request metrics, the request span) hear of a gRPC answer.
 */
const HTTP_STATUS_OF: Readonly<Record<number, number>> = Object.freeze({
  [grpc.status.OK]: 200,
  [grpc.status.CANCELLED]: 499,
  [grpc.status.UNKNOWN]: 500,
  [grpc.status.INVALID_ARGUMENT]: 400,
  [grpc.status.DEADLINE_EXCEEDED]: 504,
  [grpc.status.NOT_FOUND]: 404,
  [grpc.status.ALREADY_EXISTS]: 409,
  [grpc.status.PERMISSION_DENIED]: 403,
  [grpc.status.RESOURCE_EXHAUSTED]: 429,
  [grpc.status.FAILED_PRECONDITION]: 400,
  [grpc.status.ABORTED]: 409,
  [grpc.status.OUT_OF_RANGE]: 400,
  [grpc.status.UNIMPLEMENTED]: 501,
  [grpc.status.INTERNAL]: 500,
  [grpc.status.UNAVAILABLE]: 503,
  [grpc.status.DATA_LOSS]: 500,
  [grpc.status.UNAUTHENTICATED]: 401,
});

/**
 * The gRPC code of a refusal of the inbound chain, by its HTTP status: a
 * credential missing or wrong is `UNAUTHENTICATED`; a misdirected or
 * cross-origin request `PERMISSION_DENIED`; anything else as `google.rpc.Code`
 * maps the status.
 */
export function grpcCodeOf(refusal: InboundRefusal): grpc.status {
  switch (refusal.status) {
    case 401:
      return grpc.status.UNAUTHENTICATED;
    case 403:
    case 421:
      return grpc.status.PERMISSION_DENIED;
    case 404:
      return grpc.status.NOT_FOUND;
    case 413:
    case 429:
      return grpc.status.RESOURCE_EXHAUSTED;
    case 503:
      return grpc.status.UNAVAILABLE;
    default:
      return refusal.status < 500 ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL;
  }
}

/** A call's metadata as HTTP headers (text values; binary ones left out), its authority as `host`. */
function headersOf(metadata: grpc.Metadata, authority: string): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = { host: authority };
  for (const [key, value] of Object.entries(metadata.getMap())) if (typeof value === 'string') headers[key] = value;
  return headers;
}

/**
 * The address of a gRPC peer as grpc-js names it: `127.0.0.1:5012`, `::1:5012` (its socket's address and port),
 * or with a scheme (`ipv4:127.0.0.1:5012`, `ipv6:[::1]:5012`); undefined for `unknown`.
 */
export function peerAddress(peer: string): string | undefined {
  const bare = peer.replace(/^ipv[46]:/, '');
  const withPort = /^\[?(.+?)\]?:\d+$/.exec(bare);
  const address = withPort ? withPort[1] : bare;
  return address && address !== 'unknown' ? address : undefined;
}
