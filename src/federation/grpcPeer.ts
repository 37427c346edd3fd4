import type { AgentCard, Message, StreamResponse, Task } from '@a2a-js/sdk';
import { ClientFactory, type AgentCardResolver, type RequestOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { A2AError } from '@a2a-js/sdk/errors';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { RemoteAgentError } from '../errors';
import { formatIp } from '../net/address';
import { OutboundRefusedError, type OutboundPolicy } from '../net/policy';
import type { PeerClient } from './jsonRpcPeer';
import { grpcInterface, grpcTarget } from './peerCard';
import type { PeerCallMeter, PeerCallMeters, PeerLimits } from './peerFetch';
import type { PeerCredentials } from './peerToken';

/**
 * The client of a peer called over A2A's gRPC binding (§10): the SDK's own
 * (`GrpcTransportFactory`), held to what every peer call is held to. Its
 * host is judged by the federation's outbound address policy and the
 * connection made to exactly the address judged (no second DNS answer);
 * each answer and stream event is measured (its protobuf size) against
 * `a2a.peerLimits.maxAnswerBytes`, events are counted against `maxEvents`,
 * and the call's signal (its deadline, the caller's cancel) cancels the
 * gRPC call. What went wrong is told to the call's meter as the HTTP
 * clients tell theirs: the peer's A2A error is a rejection; a call that got
 * no answer, unreachable; anything else, an invalid answer. Plaintext
 * HTTP/2 only: a gRPC target is `host:port` (or `grpc://host:port`).
 */

/** Options of {@link createGrpcPeerClient}. */
export interface GrpcPeerClientOptions {
  /** The pinned card; its gRPC interface is the one called. */
  card: AgentCard;
  /** The federation's outbound address policy (`outbound.ts`). */
  policy: Pick<OutboundPolicy, 'resolve'>;
  limits: PeerLimits;
  /** Where each call finds its meter, by the call's signal. */
  meters: PeerCallMeters;
  /** The peer does not stream: a send returns at once and the task is polled. */
  polling: boolean;
  /** The entry's OAuth 2 client credentials: the token goes out as each call's `authorization` metadata. */
  credentials?: PeerCredentials;
}

/** gRPC status codes that mean no answer came (the peer was not reached, or the call was cut). */
const NO_ANSWER = new Set([1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

/**
 * The peer's client over gRPC, connected to the address the policy judged.
 * @throws OutboundRefusedError when the policy refuses the host; RemoteAgentError when the card has no usable gRPC interface.
 * @example
 * const client = await createGrpcPeerClient({ card: peer.sdkCard, policy, limits, meters, polling: !peer.streaming });
 */
export async function createGrpcPeerClient(options: GrpcPeerClientOptions): Promise<PeerClient> {
  const { card, limits, meters } = options;
  const chosen = grpcInterface(card);
  if (!chosen) throw new RemoteAgentError('card offers no A2A v1.0 gRPC interface');
  const { host, port } = grpcTarget(chosen.url);
  const decision = await options.policy.resolve(host);
  if (!decision.ok) throw new OutboundRefusedError(decision.reason);
  const address = formatIp(decision.addresses[0]);
  const endpoint = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  // The card was normalized and pinned by the loader: the resolver must not re-interpret it.
  const cardResolver: AgentCardResolver = {
    resolve: () => Promise.reject(new RemoteAgentError('cards are loaded by the federation, not the client')),
    normalizeAgentCard: (c: unknown) => c as AgentCard,
  };
  const client = await new ClientFactory({
    transports: [new GrpcTransportFactory()],
    cardResolver,
    clientConfig: { polling: options.polling },
  }).createFromAgentCard({ ...card, supportedInterfaces: [{ ...chosen, url: endpoint }] });

  const meterOf = (request: RequestOptions | undefined): PeerCallMeter | undefined =>
    meters.of(request?.signal as AbortSignal | undefined);
  /** `request` with the current token; a peer refusing it (UNAUTHENTICATED) drops it and the call is tried once more. */
  const authorized = async <T>(
    request: RequestOptions | undefined,
    send: (r: RequestOptions | undefined) => Promise<T>,
  ) => {
    const credentials = meterOf(request)?.credentials ?? options.credentials;
    if (!credentials) return send(request);
    const withToken = async () => {
      const sent = await credentials.headers();
      return { sent, request: { ...request, serviceParameters: { ...request?.serviceParameters, ...sent } } };
    };
    const first = await withToken();
    try {
      return await send(first.request);
    } catch (error) {
      if ((error as { status?: number }).status !== 16 /* UNAUTHENTICATED */) throw error;
      credentials.rejected(first.sent);
      return send((await withToken()).request);
    }
  };
  /** One answer of `bytes` heard: the peer is reachable, and the answer must fit the bound. */
  const heard = (meter: PeerCallMeter | undefined, bytes: number, what: string) => {
    if (!meter) return;
    meter.responded = true;
    if (bytes > limits.maxAnswerBytes)
      throw meter.fail(`${what} larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
  };
  const failed = (meter: PeerCallMeter | undefined, error: unknown): unknown => {
    if (!meter || !(error instanceof A2AError)) return error;
    const status = (error as { status?: number }).status;
    // The SDK's generic A2AError is a gRPC failure without an A2A reason; a named one is the peer's refusal.
    if (error.name !== 'A2AError') {
      meter.responded = true;
      meter.rejected ??= error.message;
    } else if (status === 8 /* RESOURCE_EXHAUSTED */) {
      meter.responded = true;
      return meter.fail(`a message larger than the gRPC channel takes (${error.message})`);
    } else if (status === undefined || !NO_ANSWER.has(status)) meter.responded = true;
    return error;
  };
  const taskBytes = (task: Task) => A2AService.getTask.responseSerialize(task).length;
  const resultBytes = (result: Message | Task) =>
    'status' in result
      ? taskBytes(result as Task)
      : A2AService.sendMessage.responseSerialize({ payload: { $case: 'message', value: result as Message } }).length;

  /** A stream from the peer with the call's credentials, each event bounded and counted. */
  async function* relayed(
    request: RequestOptions | undefined,
    open: (request: RequestOptions) => AsyncGenerator<unknown, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const meter = meterOf(request);
    try {
      const credentials = meter?.credentials ?? options.credentials;
      const sent = credentials ? await credentials.headers() : {};
      const authorizedRequest = { ...request, serviceParameters: { ...request?.serviceParameters, ...sent } };
      for await (const event of open(authorizedRequest)) {
        heard(
          meter,
          A2AService.sendStreamingMessage.responseSerialize(event as StreamResponse).length,
          'a stream event',
        );
        if (meter && ++meter.events > limits.maxEvents)
          throw meter.fail(`more than a2a.peerLimits.maxEvents (${limits.maxEvents}) stream events`);
        yield event as StreamResponse;
      }
    } catch (error) {
      throw failed(meter, error);
    }
  }

  return {
    async sendMessage(params, request) {
      const meter = meterOf(request);
      try {
        const result = await authorized(request, (r) => client.sendMessage(params, r));
        heard(meter, resultBytes(result), 'an answer');
        return result;
      } catch (error) {
        throw failed(meter, error);
      }
    },
    sendMessageStream(params, request) {
      return relayed(request, (r) => client.sendMessageStream(params, r));
    },
    // A dropped stream resumed from its last event (the generation extension, `streamResume.ts`).
    resubscribeTask(params, request) {
      return relayed(request, (r) => client.resubscribeTask(params, r));
    },
    async getTask(params, request) {
      const meter = meterOf(request);
      try {
        const task = await authorized(request, (r) => client.getTask(params, r));
        heard(meter, taskBytes(task), 'an answer');
        return task;
      } catch (error) {
        throw failed(meter, error);
      }
    },
    async cancelTask(params, request) {
      const meter = meterOf(request);
      try {
        const task = await authorized(request, (r) => client.cancelTask(params, r));
        heard(meter, taskBytes(task), 'an answer');
        return task;
      } catch (error) {
        throw failed(meter, error);
      }
    },
  };
}
