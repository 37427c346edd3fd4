import type { IncomingHttpHeaders } from 'node:http';
import type { PeerCertificate } from 'node:tls';
import { UnauthenticatedUser, type User } from '@a2a-js/sdk/server';

/**
 * A request as the host guard and the credential check see it, with nothing of the transport that carried it:
 * HTTP/1.1 gives its own; gRPC gives `POST`, its method path, its metadata as headers (`:authority` as `host`).
 */
export interface CallerRequest {
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
  /** The client's certificate on a TLS connection that asked for one (mTLS), else undefined. */
  readonly peerCertificate: PeerCertificate | undefined;
}

/** The caller of a node without credentials: every request runs as the owner (`principalOf`). */
export const ANONYMOUS: User = Object.freeze(new UnauthenticatedUser());
