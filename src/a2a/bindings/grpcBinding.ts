import * as grpc from '@grpc/grpc-js';
import type { StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { userFor } from '../../identity/request';
import type { ServerTlsOptions } from '../../identity/serverTls';
import { GrpcCall, grpcCodeOf } from './grpcCall';
import {
  answerMetadata,
  grpcCallContext,
  serviceDefinition,
  STREAMED_METHODS,
  UNARY_METHODS,
  UndecodableRequest,
  type GrpcMethodKey,
} from './grpcService';
import { grpcRefusal, grpcStatusOf, type GrpcError } from './grpcStatus';
import { compose, InboundRefusal, type SharedSteps, type Step } from './inbound';
import type { RouteSpec } from './routes';

/** Options of {@link createGrpcBinding}. */
export interface GrpcBindingOptions {
  /** The node's one request handler (`TaskHandler`, behind the tenant gate): the one every binding calls. */
  requestHandler: A2ARequestHandler;
  /** The steps every binding mounts (`inbound.ts` `SharedSteps`): host guard, interceptors, credentials. */
  steps: SharedSteps;
  /** `a2a.maxBodyBytes`: the largest request message; a larger one is refused (RESOURCE_EXHAUSTED). */
  maxMessageBytes: number;
  logger: Logger;
}

/** The gRPC binding of one node: started by `createApp` on `server.grpcPort`, closed with the node. */
export interface GrpcBinding {
  /**
   * Listens on `host:port` (0: a free port), over TLS with `tls` (`server.tls`, read by `serverTls.ts`: the node's
   * certificate and key; with a client CA and `clientCert: required`, client certificates checked in the
   * handshake); resolves with the port.
   */
  listen(host: string, port: number, tls?: ServerTlsOptions): Promise<number>;
  /** Stops taking calls and ends the open ones (their streams end; running tasks run on). */
  close(): Promise<void>;
}

/**
 * The A2A gRPC binding (§10, `lf.a2a.v1.A2AService`) over the node's request
 * handler, through the node's own service (`grpcService.ts`: the SDK's
 * `grpcService` has no seam for the node's statuses or for a caller that
 * leaves). Each call goes through the chain every binding mounts
 * (`SharedSteps`: host guard, interceptors — request metrics and the
 * request's span —, credentials from the call's metadata or its client
 * certificate), as a `GrpcCall`; a refusal is answered with its gRPC code (a
 * credential missing or wrong: `UNAUTHENTICATED`) before the handler sees the
 * call. Request messages are bounded by `a2a.maxBodyBytes` (grpc-js:
 * RESOURCE_EXHAUSTED), and what they decode to by the limits every binding is
 * held to (the handler's gate: INVALID_ARGUMENT naming the field); each error
 * is answered with its status and details (`grpcStatus.ts`); a stream the
 * caller cancels stops following its task (the task runs on, as on the other
 * bindings). Nothing a caller sends is thrown past a call.
 * @example
 * const grpcBinding = createGrpcBinding({ requestHandler, steps, maxMessageBytes: 100 * 1024, logger });
 * const port = await grpcBinding.listen('127.0.0.1', 0);
 */
export function createGrpcBinding(options: GrpcBindingOptions): GrpcBinding {
  const { steps, logger, requestHandler } = options;
  /** How a call that failed is answered: a refusal of the chain with its code, an error with its status. */
  const failed = (call: GrpcCall, err: unknown): GrpcError => {
    if (err instanceof InboundRefusal) return grpcRefusal(grpcCodeOf(err), err.message);
    const status = grpcStatusOf(err);
    if (status.code === grpc.status.INTERNAL)
      logger.warn('gRPC call failed', { method: call.name, error: errorMessage(err) });
    return status;
  };
  /** The call's context, once its request decoded (an undecodable one is refused here, after the chain). */
  const contextOf = (call: GrpcCall) => {
    const request: unknown = call.call.request;
    if (request instanceof UndecodableRequest) throw request.refusal();
    return grpcCallContext(call.call, call.headers, userFor(call.principal, call.subjectToken), requestHandler);
  };
  /** The chain of a method's row of the route table: the shared steps, then identity by the row's access. */
  const shared = (key: string): Step<GrpcCall>[] => {
    const identify = steps.identify(GRPC_ROUTES.get(key)!.access);
    return [...(steps.hostGuard ? [steps.hostGuard] : []), ...steps.intercepts, ...(identify ? [identify] : [])];
  };

  const service: grpc.UntypedServiceImplementation = {};
  for (const [key, method] of Object.entries(UNARY_METHODS)) {
    const name = GRPC_ROUTES.get(key)!.name;
    const callbacks = new WeakMap<GrpcCall, grpc.sendUnaryData<unknown>>();
    const run = compose<GrpcCall>([
      ...shared(key),
      async (call) => {
        const unary = call.call as grpc.ServerUnaryCall<unknown, unknown>;
        const context = await contextOf(call);
        const answer = await method(requestHandler, unary.request as never, context);
        unary.sendMetadata(answerMetadata(context));
        call.answered(grpc.status.OK);
        callbacks.get(call)!(null, answer);
      },
    ]);
    service[key] = (unary: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const call = new GrpcCall(unary, name);
      callbacks.set(call, callback);
      run(call).catch((err: unknown) => {
        const status = failed(call, err);
        call.answered(status.code);
        callback(status, null);
      });
    };
  }
  for (const [key, method] of Object.entries(STREAMED_METHODS)) {
    const name = GRPC_ROUTES.get(key)!.name;
    const run = compose<GrpcCall>([
      ...shared(key),
      async (call) => {
        const stream = call.call as grpc.ServerWritableStream<unknown, StreamResponse>;
        const context = await contextOf(call);
        await writeStream(stream, method(requestHandler, stream.request as never, context), () =>
          answerMetadata(context),
        );
        call.answered(grpc.status.OK);
        if (!stream.cancelled) stream.end();
      },
    ]);
    service[key] = (stream: grpc.ServerWritableStream<unknown, StreamResponse>) => {
      const call = new GrpcCall(stream, name);
      stream.once('cancelled', () => call.answered(grpc.status.CANCELLED));
      run(call).catch((err: unknown) => {
        const status = failed(call, err);
        call.answered(status.code);
        // grpc-js ends a server stream with the status of the error emitted on it.
        if (!stream.cancelled) stream.emit('error', status);
      });
    };
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
  });
  server.addService(serviceDefinition(), service);
  let closed = false;
  return {
    listen: (host, port, tls) =>
      new Promise((resolve, reject) => {
        const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
        server.bindAsync(target, credentialsOf(tls), (err, bound) => (err ? reject(err) : resolve(bound)));
      }),
    async close() {
      if (closed) return;
      closed = true;
      // Open streams would hold a graceful shutdown for as long as their tasks run: end them now.
      server.forceShutdown();
    },
  };
}

/**
 * The gRPC binding's rows of the node's route table, by service key: each method of `lf.a2a.v1.A2AService`
 * (its path, its A2A name), every one `caller`. grpc-js dispatches by path; who may call is the table's.
 */
export const GRPC_ROUTES: ReadonlyMap<string, RouteSpec> = new Map(
  [...Object.keys(UNARY_METHODS), ...Object.keys(STREAMED_METHODS)].map((key) => {
    const path = A2AService[key as GrpcMethodKey].path;
    const name = path.slice(path.lastIndexOf('/') + 1);
    return [key, Object.freeze({ methods: ['POST'], path, binding: 'grpc', name, access: 'caller' } as const)];
  }),
);

/**
 * Writes `events` on `stream` while its caller wants them: the response metadata (`opened`, known once the
 * stream opened: the extensions it activated) with the first event; the next event read once the call took the
 * last; when the caller cancels (or the call closes: the server shutting down), the pending read ends the writing
 * and `events` is returned (not awaited: its owner ends it as soon as it can; the task runs on). A failure of
 * `events` rejects, for the call's status.
 */
async function writeStream(
  stream: grpc.ServerWritableStream<unknown, StreamResponse>,
  events: AsyncGenerator<StreamResponse, void, undefined>,
  opened: () => grpc.Metadata,
): Promise<void> {
  const left: IteratorReturnResult<void> = { value: undefined, done: true };
  let leave = () => undefined as void;
  const gone = new Promise<IteratorReturnResult<void>>((resolve) => {
    leave = () => {
      events.return(undefined).catch(() => undefined);
      resolve(left);
    };
  });
  if (stream.cancelled || stream.destroyed) leave();
  stream.once('cancelled', leave);
  stream.once('close', leave);
  try {
    let event = await Promise.race([events.next(), gone]);
    if (event === left) return;
    stream.sendMetadata(opened());
    while (!event.done) {
      if (!stream.write(event.value)) await Promise.race([drained(stream), gone]);
      event = await Promise.race([events.next(), gone]);
    }
  } finally {
    stream.off('cancelled', leave);
    stream.off('close', leave);
  }
}

/** Resolves once `stream` drained (the caller took what was buffered). */
function drained(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => stream.once('drain', () => resolve()));
}

/**
 * The gRPC server's credentials for `server.tls`: plaintext without it; else TLS with the node's certificate,
 * asking a client for its certificate only when one is required (grpc-js checks what it asks for; an `optional`
 * client certificate is not asked for over gRPC).
 */
function credentialsOf(tls: ServerTlsOptions | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  const pem = (value: unknown) => (Buffer.isBuffer(value) ? value : Buffer.from(String(value)));
  const required = Boolean(tls.requestCert && tls.rejectUnauthorized && tls.ca);
  return grpc.ServerCredentials.createSsl(
    required ? pem(tls.ca) : null,
    [{ cert_chain: pem(tls.cert), private_key: pem(tls.key) }],
    required,
  );
}
