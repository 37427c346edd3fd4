import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import type { StreamResponse } from '@a2a-js/sdk';
import { UnauthenticatedUser, type A2ARequestHandler, type ServerCallContext, type User } from '@a2a-js/sdk/server';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { CredentialUser, type Authenticator } from './auth';
import type { ServerTlsOptions } from './serverTls';
import { grpcRefusal, toSpecStatus, type GrpcError } from './grpcStatus';

/** Options of {@link createGrpcBinding}. */
export interface GrpcBindingOptions {
  /** The node's one request handler (`TaskHandler`, behind the tenant gate): the one every binding calls. */
  requestHandler: A2ARequestHandler;
  /** Who each credential is (`auth.ts`): the same principals and grants as the JSON bindings. */
  auth: Authenticator;
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

/** A unary method of the SDK's service, as grpc-js calls it. */
type UnaryMethod = (
  call: grpc.ServerUnaryCall<unknown, unknown>,
  callback: grpc.sendUnaryData<unknown>,
) => Promise<void>;
/** A server-streaming method of the SDK's service. */
type StreamingMethod = (call: grpc.ServerWritableStream<unknown, unknown>) => Promise<void>;

/**
 * The A2A gRPC binding (§10, `lf.a2a.v1.A2AService`) over the node's request
 * handler, through the SDK's `grpcService`, which maps each A2A error to its
 * gRPC status with its `google.rpc.ErrorInfo` (§10.6). Around it, each call:
 * the caller's credential from the call's metadata (`authorization`, the API
 * key header) as the JSON bindings read it from headers — none where one is
 * required is `UNAUTHENTICATED` before the handler sees the call; request
 * messages bounded by `a2a.maxBodyBytes`; errors with the node's details
 * (`grpcStatus.ts`); a stream the caller cancels stops following its task
 * (the task runs on, as on the other bindings). Nothing a caller sends is
 * thrown past a call.
 * @example
 * const grpcBinding = createGrpcBinding({ requestHandler, auth, maxMessageBytes: 100 * 1024, logger });
 * const port = await grpcBinding.listen('127.0.0.1', 0);
 */
export function createGrpcBinding(options: GrpcBindingOptions): GrpcBinding {
  const { auth, logger } = options;
  /** Each call's caller, found before the SDK's service builds its context (its `userBuilder`). */
  const callers = new WeakMap<object, User>();
  /** What the binding knows of each call while the SDK's service runs it, by the call's own user object. */
  const calls = new WeakMap<User, CallState>();
  const sdk = grpcService({
    requestHandler: watched(options.requestHandler, (context) => (context.user ? calls.get(context.user) : undefined)),
    userBuilder: async (call) => callers.get(call) ?? new UnauthenticatedUser(),
  }) as unknown as Record<string, UnaryMethod | StreamingMethod>;

  /** The call's caller (a fresh user object per call), or undefined when a credential is required and wrong. */
  const authenticate = async (
    call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  ): Promise<User | undefined> => {
    // The credentials of the call's metadata; a gRPC call presents no client certificate to the authenticator.
    const request = { headers: headersOf(call.metadata), socket: {} } as unknown as IncomingMessage;
    const user = await auth.authenticate(request);
    if (!user) return undefined;
    // A user object of the call's own: the SDK's context carries it to the handler, which finds the call by it.
    const own =
      user instanceof CredentialUser ? new CredentialUser(user.userName, user.principal) : new UnauthenticatedUser();
    callers.set(call, own);
    calls.set(own, { call });
    return own;
  };
  /** The node's status for what the SDK's service answered `error` with, from the call's own failure. */
  const statusOf = (user: User, error: GrpcError) => toSpecStatus(error, calls.get(user)?.failure);
  const refusal = () =>
    grpcRefusal(grpc.status.UNAUTHENTICATED, 'authentication required: present a valid bearer token or API key');

  // Nothing a caller sends may throw past a call: a fault anywhere in one is logged and answered INTERNAL.
  const fault = (method: string, err: unknown): GrpcError => {
    logger.warn('gRPC call failed', { method, error: errorMessage(err) });
    return { code: grpc.status.INTERNAL, details: 'internal error', metadata: new grpc.Metadata() };
  };
  const service: grpc.UntypedServiceImplementation = {};
  for (const [name, definition] of Object.entries(A2AService)) {
    const method = sdk[name];
    if (definition.responseStream) {
      const streaming = method as StreamingMethod;
      const serve = async (call: grpc.ServerWritableStream<unknown, unknown>) => {
        const user = await authenticate(call);
        if (!user) {
          call.emit('error', refusal());
          return;
        }
        // The SDK's service emits its error on the call: the node's status goes out instead.
        const emit = call.emit.bind(call);
        call.emit = (event: string | symbol, ...args: unknown[]) =>
          event === 'error' ? emit(event, statusOf(user, args[0] as GrpcError)) : emit(event, ...args);
        await streaming(call);
      };
      service[name] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
        serve(call).catch((err: unknown) => call.emit('error', fault(name, err)));
      };
    } else {
      const unary = method as UnaryMethod;
      const serve = async (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const user = await authenticate(call);
        if (!user) {
          callback(refusal(), null);
          return;
        }
        await unary(call, (error, value) =>
          error ? callback(statusOf(user, error as GrpcError), null) : callback(null, value),
        );
      };
      service[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        serve(call, callback).catch((err: unknown) => callback(fault(name, err), null));
      };
    }
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
  });
  server.addService(A2AService, service);
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

/** A call's metadata as the HTTP headers the authenticator reads (text values; binary ones are left out). */
function headersOf(metadata: grpc.Metadata): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [key, value] of Object.entries(metadata.getMap())) if (typeof value === 'string') headers[key] = value;
  return headers;
}

/** What the binding knows of a call while the SDK's service runs it. */
interface CallState {
  /** The call: cancelled (its `cancelled` event) when the caller leaves, and a stream stops following its task. */
  readonly call: { readonly cancelled: boolean; once(event: 'cancelled', listener: () => void): unknown };
  /** What the handler threw, before the SDK's service mapped it (`grpcStatus.ts` maps the node's own errors). */
  failure?: unknown;
}

/** The handler's methods that answer once. */
const PROMISED = [
  'getAuthenticatedExtendedAgentCard',
  'sendMessage',
  'getTask',
  'cancelTask',
  'createTaskPushNotificationConfig',
  'getTaskPushNotificationConfig',
  'listTaskPushNotificationConfigs',
  'deleteTaskPushNotificationConfig',
  'listTasks',
] as const satisfies readonly (keyof A2ARequestHandler)[];
/** The handler's methods that answer with a stream. */
const STREAMED = ['sendMessageStream', 'resubscribe'] as const satisfies readonly (keyof A2ARequestHandler)[];

/**
 * `handler` as each gRPC call finds it (`stateOf` its context): what a method throws is kept with the call,
 * and a stream ends when its caller cancels (the task runs on).
 */
function watched(
  handler: A2ARequestHandler,
  stateOf: (context: ServerCallContext) => CallState | undefined,
): A2ARequestHandler {
  const keep = (context: ServerCallContext) => (err: unknown) => {
    const state = stateOf(context);
    if (state) state.failure = err;
    throw err;
  };
  const answering = { getAgentCard: () => handler.getAgentCard() } as A2ARequestHandler;
  for (const method of PROMISED) {
    const call = handler[method].bind(handler) as (params: unknown, context: ServerCallContext) => Promise<unknown>;
    (answering as unknown as Record<string, unknown>)[method] = (params: unknown, context: ServerCallContext) =>
      call(params, context).catch(keep(context));
  }
  for (const method of STREAMED) {
    const open = handler[method].bind(handler) as (
      params: unknown,
      context: ServerCallContext,
    ) => AsyncGenerator<StreamResponse, void, undefined>;
    (answering as unknown as Record<string, unknown>)[method] = (params: unknown, context: ServerCallContext) => {
      const state = stateOf(context);
      return state ? followed(open(params, context), state) : open(params, context);
    };
  }
  return answering;
}

/**
 * `events` while the call wants them: its failure kept with the call; when the caller cancels, the pending read
 * ends the stream and `events` is returned (not awaited: its owner ends it as soon as it can).
 */
function followed(
  events: AsyncGenerator<StreamResponse, void, undefined>,
  state: CallState,
): AsyncGenerator<StreamResponse, void, undefined> {
  const done: IteratorReturnResult<void> = { value: undefined, done: true };
  const cancelled = new Promise<IteratorReturnResult<void>>((resolve) => {
    const stop = () => {
      events.return(undefined).catch(() => undefined);
      resolve(done);
    };
    if (state.call.cancelled) stop();
    else state.call.once('cancelled', stop);
  });
  const keep = (err: unknown): never => {
    state.failure = err;
    throw err;
  };
  const stream: AsyncGenerator<StreamResponse, void, undefined> = {
    next: () => Promise.race([events.next().catch(keep), cancelled]),
    return: async () => {
      await events.return(undefined);
      return done;
    },
    throw: (err: unknown) => events.throw(err),
    [Symbol.asyncIterator]: () => stream,
    [Symbol.asyncDispose]: async () => {
      await events.return(undefined);
    },
  };
  return stream;
}
