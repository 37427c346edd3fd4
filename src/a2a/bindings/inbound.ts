import type { Access } from '../../identity/identity';
import type { Principal, SubjectToken } from '../../principal';
import type { CallerRequest } from '../../identity/request';

/**
 * The inbound chain's vocabulary, whatever carries the request: small steps
 * composed once (as Hono composes middleware), run in order over one call
 * object. Every binding (JSON-RPC, HTTP+JSON, gRPC) mounts the same steps —
 * host guard, interceptors, body limit, credentials, body parsing — and one
 * refusal type, which each binding writes in its own shape.
 */

/** The binding a call came in on: it decides how a refusal is written. `http`: the node's other routes. */
export type Binding = 'jsonrpc' | 'rest' | 'grpc' | 'http';

/** One request going through the inbound chain. */
export interface InboundCall extends CallerRequest {
  readonly binding: Binding;
  /**
   * The A2A method called (`SendMessage`, …), or a coarse name of the node's other routes (`healthz`, `other`):
   * a bounded set, never a raw path. JSON-RPC learns it once the body is parsed.
   */
  name: string;
  /** Who the caller is: set by the identity step (`credentials.ts`); anonymous before it, and on public routes. */
  principal: Principal;
  /** The OIDC token behind `principal`, set by the identity step: for the turn's on-behalf-of calls (issue 33). */
  subjectToken?: SubjectToken;
  /** Hears the answer's status once it is sent in full (HTTP status; gRPC: the HTTP status its code stands for). */
  onAnswered(listener: (status: number) => void): void;
}

/**
 * One step of the chain: it calls `next` to go on (within whatever context it opens) or throws an
 * {@link InboundRefusal}; what it does after `next` settles runs once the rest of the chain has.
 */
export type Step<C extends InboundCall = InboundCall> = (call: C, next: () => Promise<void>) => Promise<void> | void;

/** A step run before every route of every binding (request metrics, the request's span). */
export type RequestIntercept = Step<InboundCall>;

/**
 * The steps every binding mounts, built once per server: a binding runs `hostGuard` and `intercepts` first for every
 * call, its own transport steps (an HTTP body limit), then `credentials` before anything that answers for a caller.
 */
export interface SharedSteps {
  /** The host and origin check (`hostGuard.ts`), without credentials configured. */
  hostGuard?: Step;
  /** Request metrics, the request's span. */
  intercepts: readonly RequestIntercept[];
  /** Who the caller is and whether it may call the route (`credentials.ts`), by the route's access. */
  identify(access: Access): Step | undefined;
}

const DONE = Promise.resolve();

/**
 * Composes `steps` into one function run per call, each step's `next` the rest of the chain. A step that
 * throws, or whose promise rejects, rejects the whole run: the binding answers it ({@link InboundRefusal}).
 * @example
 * const run = compose([hostStep(guard), ...intercepts, credentials(auth), answer]);
 * run(call).catch((err) => refuse(call, err));
 */
export function compose<C extends InboundCall>(steps: readonly Step<C>[]): (call: C) => Promise<void> {
  return (call) => {
    const dispatch = (index: number): Promise<void> => {
      const step = steps[index];
      if (!step) return DONE;
      try {
        return Promise.resolve(step(call, () => dispatch(index + 1)));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
}

/** What a refusal adds to its answer beyond status, code and message. */
export interface RefusalOptions {
  /** Response headers (`WWW-Authenticate`). */
  headers?: Record<string, string>;
  /** Close the connection after answering (a misdirected request; a body nothing will read). */
  close?: boolean;
  /** The `google.rpc.Code` name REST answers carry (`UNAUTHENTICATED`). */
  restStatus?: string;
  /** The HTTP status of the JSON-RPC answer when it is not `status`: errors in a request's content travel as 200. */
  rpcStatus?: number;
}

/**
 * A request the chain refuses before the A2A handler sees it: the HTTP status, the JSON-RPC code a JSON-RPC
 * caller gets (with HTTP `status`), and a message naming what was wrong.
 */
export class InboundRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly options: RefusalOptions = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** JSON-RPC's Invalid Request code, which every transport-level refusal carries. */
export const INVALID_REQUEST = -32600;
