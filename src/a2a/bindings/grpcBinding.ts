import * as grpc from '@grpc/grpc-js';
import type { StreamResponse } from '@a2a-js/sdk';
import { UnauthenticatedUser, type A2ARequestHandler, type ServerCallContext, type User } from '@a2a-js/sdk/server';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { PrincipalUser } from '../../identity/request';
import { GrpcCall, grpcCodeOf } from './grpcCall';
import { compose, InboundRefusal, type SharedSteps, type Step } from './inbound';
import type { ServerTlsOptions } from '../../identity/serverTls';
import { grpcRefusal, toSpecStatus, type GrpcError } from './grpcStatus';

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
 * gRPC status with its `google.rpc.ErrorInfo` (§10.6). Each call goes through
 * the chain every binding mounts (`SharedSteps`: host guard, interceptors —
 * request metrics and the request's span —, credentials from the call's
 * metadata or its client certificate), as a `GrpcCall`; a refusal is
 * answered with its gRPC code (a credential missing or wrong:
 * `UNAUTHENTICATED`) before the handler sees the call. Request messages are
 * bounded by `a2a.maxBodyBytes`; errors carry the node's details
 * (`grpcStatus.ts`); a stream the caller cancels stops following its task
 * (the task runs on, as on the other bindings). Nothing a caller sends is
 * thrown past a call.
 * @example
 * const grpcBinding = createGrpcBinding({ requestHandler, steps, maxMessageBytes: 100 * 1024, logger });
 * const port = await grpcBinding.listen('127.0.0.1', 0);
 */
export function createGrpcBinding(options: GrpcBindingOptions): GrpcBinding {
  const { steps, logger } = options;
  /** Each call's caller, found before the SDK's service builds its context (its `userBuilder`). */
  const callers = new WeakMap<object, User>();
  /** What the binding knows of each call while the SDK's service runs it, by the call's own user object. */
  const calls = new WeakMap<User, CallState>();
  const sdk = grpcService({
    requestHandler: watched(options.requestHandler, (context) => (context.user ? calls.get(context.user) : undefined)),
    userBuilder: async (call) => callers.get(call) ?? new UnauthenticatedUser(),
  }) as unknown as Record<string, UnaryMethod | StreamingMethod>;

  /** The caller the chain found, as a user object of the call's own: the handler finds the call by it. */
  const own = (call: GrpcCall): User => {
    const user = new PrincipalUser(call.principal);
    callers.set(call.call, user);
    calls.set(user, { call: call.call });
    return user;
  };
  /** The node's status for what the SDK's service answered `error` with, from the call's own failure. */
  const statusOf = (user: User, error: GrpcError) => toSpecStatus(error, calls.get(user)?.failure);
  /** How a call that ended its chain early is answered: a refusal with its code, a fault as INTERNAL (logged). */
  const ended = (call: GrpcCall, err: unknown): GrpcError => {
    if (err instanceof InboundRefusal) return grpcRefusal(grpcCodeOf(err), err.message);
    logger.warn('gRPC call failed', { method: call.name, error: errorMessage(err) });
    return grpcRefusal(grpc.status.INTERNAL, 'internal error');
  };
  const shared: Step<GrpcCall>[] = [
    ...(steps.hostGuard ? [steps.hostGuard] : []),
    ...steps.intercepts,
    ...(steps.identify('caller') ? [steps.identify('caller')!] : []),
  ];

  const service: grpc.UntypedServiceImplementation = {};
  for (const [key, definition] of Object.entries(A2AService)) {
    const name = definition.path.slice(definition.path.lastIndexOf('/') + 1);
    const method = sdk[key];
    if (definition.responseStream) {
      const streaming = method as StreamingMethod;
      const run = compose<GrpcCall>([
        ...shared,
        async (call) => {
          const stream = call.call as grpc.ServerWritableStream<unknown, unknown>;
          const user = own(call);
          // The SDK's service emits its error on the call: the node's status goes out instead.
          const emit = stream.emit.bind(stream);
          stream.emit = (event: string | symbol, ...args: unknown[]) => {
            if (event !== 'error') return emit(event, ...args);
            const status = statusOf(user, args[0] as GrpcError);
            call.answered(status.code);
            return emit(event, status);
          };
          stream.once('finish', () => call.answered(grpc.status.OK));
          await streaming(stream);
        },
      ]);
      service[key] = (stream: grpc.ServerWritableStream<unknown, unknown>) => {
        const call = new GrpcCall(stream, name);
        stream.once('cancelled', () => call.answered(grpc.status.CANCELLED));
        run(call).catch((err: unknown) => {
          const status = ended(call, err);
          call.answered(status.code);
          stream.emit('error', status);
        });
      };
    } else {
      const unary = method as UnaryMethod;
      const callbacks = new WeakMap<GrpcCall, grpc.sendUnaryData<unknown>>();
      const run = compose<GrpcCall>([
        ...shared,
        async (call) => {
          const user = own(call);
          const callback = callbacks.get(call)!;
          await unary(call.call as grpc.ServerUnaryCall<unknown, unknown>, (error, value) => {
            const status = error ? statusOf(user, error as GrpcError) : undefined;
            call.answered(status ? status.code : grpc.status.OK);
            if (status) callback(status, null);
            else callback(null, value);
          });
        },
      ]);
      service[key] = (unaryCall: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const call = new GrpcCall(unaryCall, name);
        callbacks.set(call, callback);
        run(call).catch((err: unknown) => {
          const status = ended(call, err);
          call.answered(status.code);
          callback(status, null);
        });
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
