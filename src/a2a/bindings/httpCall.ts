import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { ANONYMOUS, type Principal, type SubjectToken } from '../../principal';
import type { Binding, InboundCall } from './inbound';

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** Where a request holds its call, for the express routes behind the chain (which are given the request alone). */
const CALL = Symbol('lango.httpCall');
type WithCall = IncomingMessage & { [CALL]?: HttpCall };

/**
 * The principal the inbound chain's identity step found for `req`
 * (anonymous when none ran): the node's own routes behind it (discovery,
 * push deliveries, the console) scope what they show by it.
 */
export function principalOfRequest(req: IncomingMessage): Principal {
  return (req as WithCall)[CALL]?.principal ?? ANONYMOUS;
}

/** The client certificate of `req`'s TLS connection, when the client CA vouched for it (mTLS); else undefined. */
export function peerCertificateOf(req: IncomingMessage): PeerCertificate | undefined {
  const socket = req.socket as Partial<TLSSocket> | undefined;
  // Only a certificate the client CA vouched for names anyone (`clientCert: optional` lets others connect).
  if (typeof socket?.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const certificate = socket.getPeerCertificate();
  // Node gives an empty object when the client sent none.
  return certificate && Object.keys(certificate).length > 0 ? certificate : undefined;
}

/**
 * An HTTP/1.1 request as the inbound chain's call: Node's own request and
 * response, plus what the steps learn (the caller, the parsed body, the
 * JSON-RPC id). A class, not a literal of closures: one is made per request.
 */
export class HttpCall implements InboundCall {
  /** Set from the route table's row (`inboundHttp.ts`); `http`/`other` for a path no row has. */
  binding: Binding = 'http';
  readonly path: string;
  name = 'other';
  principal: Principal = ANONYMOUS;
  subjectToken: SubjectToken | undefined = undefined;
  /** The route's path parameters (`{id}`, `{tenant}`), percent-decoded. */
  params: Readonly<Record<string, string>> = NO_PARAMS;
  /** The parsed body, once the body step read it. */
  body: unknown = undefined;
  /** The JSON-RPC request's id once its body is parsed: refusals after that point answer it. */
  rpcId: string | number | null = null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    (req as WithCall)[CALL] = this;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    this.path = query < 0 ? url : url.slice(0, query);
  }

  /** The query's parameters (the first of a repeated one). */
  query(): URLSearchParams {
    const url = this.req.url ?? '';
    const at = url.indexOf('?');
    return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }

  get remoteAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  get peerCertificate(): PeerCertificate | undefined {
    return peerCertificateOf(this.req);
  }

  onAnswered(listener: (status: number) => void): void {
    this.res.once('finish', () => listener(this.res.statusCode));
  }

  /** The value of a header sent once (the first of a repeated one), or undefined when absent or empty. */
  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return (Array.isArray(value) ? value[0] : value) || undefined;
  }
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Writes `value` as the whole JSON answer, with `headers` added (`Content-Type` among them replaces JSON's). */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void {
  const json = JSON.stringify(value);
  const head: Record<string, string | number> = {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(json),
  };
  if (headers) Object.assign(head, headers);
  res.writeHead(status, head);
  res.end(json);
}
