import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { RequestOptions } from '@a2a-js/sdk/client';
import type { Dispatcher } from 'undici';
import type { RemoteAgent, RemoteInvocation, RemoteOutcome } from '../agent/agent';
import { RunEvents, type RunEvent } from '../agent/events';
import { isInterrupted, isSettled } from '../protocol/taskStates';
import type { Logger } from '../log/logger';
import { nameFault, shortError } from './callFaults';
import { TRACEPARENT_KEY, childTraceparent } from '../log/traceContext';
import { FEDERATION_HOPS_KEY, nextHop, resolveNodeId, type NodeId } from './hops';
import type { LoadedPeer } from './loader';
import { createDeadline } from '../net/deadline';
import type { OutboundPolicy } from '../net/policy';
import { rememberSeen, unseenContext, type PeerSessionState } from './peerContext';
import { sanitizeCardText } from './peerCard';
import { AnswerRelay } from './answerRelay';
import { offersGeneration, resumableSend, resumableStream } from './streamResume';
import {
  DEFAULT_PEER_LIMITS,
  PeerCallMeters,
  type PeerCallMeter,
  type PeerFetchOptions,
  type PeerLimits,
} from './peerFetch';
import { peerClientFor, type PeerClient } from './peerClient';
import type { PeerCredentials } from './peerToken';
import { ACCOUNT_METADATA_KEY, readHopAccount } from '../protocol/accounting';
import { callsOverGrpc, grpcInterface, preferredOrigin } from './peerCard';
import { ArtifactText, asTask, partsText, stateName, userMessage } from './remoteClient';

/**
 * A remote A2A agent as a sub-agent: one `invoke` sends the delegated
 * request to the peer (streaming when its card says so, otherwise a
 * non-blocking send and polling) and turns whatever happens into progress
 * events and a {@link RemoteOutcome}. Errors, timeouts and refusals become
 * `failed` with a note naming what failed; only cancellation throws. What
 * the peer sends is bounded by `a2a.peerLimits` (peerFetch.ts) and masked
 * by the secret registry before anyone sees it.
 */

const CANCEL_TIMEOUT_MS = 2_000;
/** After a cancel, how long the request may run on to learn the remote task id (so CancelTask can name it). */
const CANCEL_GRACE_MS = 1_000;
const POLL_MIN_MS = 100;
const POLL_MAX_MS = 1_000;
/** Longest peer text carried in one progress event (the answer itself is bounded by `maxAnswerBytes`). */
const MAX_PROGRESS_TEXT = 200;
/** Most steps kept of a peer's account of a call (its nested hops included). */
const MAX_ACCOUNT_STEPS = 500;

/**
 * What a call did to the peer's health. `ok: false` counts against the
 * circuit breaker: the peer was unreachable, timed out or gave an invalid
 * answer. An A2A error (the peer refusing properly) is `ok: true`.
 */
export interface CallReport {
  ok: boolean;
  error?: string;
  latencyMs: number;
}

/** Dependencies of {@link createRemoteAgent}. */
export interface RemoteAgentOptions {
  peer: LoadedPeer;
  /** This node's id on hop paths (its public A2A base URL). */
  selfId: NodeId;
  maxHops: number;
  logger: Logger;
  /** The federation's pinned dispatcher: every request to the peer goes through the outbound address policy. */
  dispatcher: Dispatcher;
  /** That policy itself, for a peer called over gRPC (its channel connects where the policy says); public only without. */
  policy?: Pick<OutboundPolicy, 'resolve'>;
  /** `a2a.peerLimits`; the defaults when absent. */
  limits?: Partial<PeerLimits>;
  /** Masks registered secrets (peer tokens among them) in anything the peer sent before it reaches a caller. */
  redact?: (text: string) => string;
  /** Told what each call says about the peer's health: the circuit breaker listens here. */
  onReport?: (report: CallReport) => void;
}

/**
 * Wraps a loaded peer as a {@link RemoteAgent}.
 * @example
 * const agent = createRemoteAgent({ peer, selfId: 'http://127.0.0.1:4000', maxHops: 4, logger, dispatcher });
 * const outcome = await drain(agent.invoke({ text, sessionId, signal, state: {}, metadata: {} }));
 */
export function createRemoteAgent(options: RemoteAgentOptions): RemoteAgent {
  const { peer } = options;
  const log = options.logger.child({ remote: peer.name });
  const stateKey = `a2a:${peer.name}`;
  // The interface the client talks to first: where requests go, which a person watching wants to see (not the card URL).
  const overGrpc = callsOverGrpc(peer.entry.transport, peer.sdkCard);
  const called = (overGrpc && grpcInterface(peer.sdkCard)) || peer.sdkCard.supportedInterfaces[0];
  const endpoint = called.url;
  const targetOrigin = preferredOrigin({ ...peer.sdkCard, supportedInterfaces: [called] });
  const limits: PeerLimits = { ...DEFAULT_PEER_LIMITS, ...options.limits };
  const redact = options.redact ?? ((text: string) => text);
  const warned = new Set<string>();
  const onDeviation = (deviation: string) => {
    if (warned.has(deviation)) return;
    warned.add(deviation);
    log.warn('remote agent deviates from the A2A spec; tolerated', { deviation });
  };
  // One client for the pinned card, shared by every call; each call's requests find the call's own meter
  // (and so its bound, and the name of what went wrong) by the call's abort signal.
  const meters = new PeerCallMeters();
  const peerOptions: PeerFetchOptions = {
    dispatcher: options.dispatcher,
    credentials: peer.credentials,
    limits,
    meters,
    legacy: peer.protocolVersion === '0.3',
    onDeviation,
  };
  // The client peerClient.ts chooses for the card, over the same checks whichever it is.
  let client: Promise<PeerClient> | undefined;
  const sharedClient = (): Promise<PeerClient> => {
    if (client) return client;
    client = peerClientFor(peer.sdkCard, {
      transport: peerOptions,
      polling: !peer.streaming,
      binding: peer.entry.transport,
      policy: options.policy,
    });
    // A client that could not be built is not kept: the next call tries again and names the same failure.
    client.catch(() => (client = undefined));
    return client;
  };
  /** The answer kept from one call is bounded like each response. */
  const checkAnswerSize = (meter: PeerCallMeter, artifacts: ArtifactText, text: string) => {
    if (artifacts.bytes + Buffer.byteLength(text) > limits.maxAnswerBytes)
      throw meter.fail(`answer larger than a2a.peerLimits.maxAnswerBytes (${limits.maxAnswerBytes} bytes)`);
  };
  const progress = (text: string | undefined) =>
    text ? sanitizeCardText(redact(text), MAX_PROGRESS_TEXT) || undefined : undefined;
  // A peer offering the generation extension has its cut streams resumed and its cut sends sent again.
  const resumable = offersGeneration(peer.sdkCard);
  // A peer's account is read as deep as a request may travel, and no larger than a few hundred steps.
  const accountBounds = { maxDepth: options.maxHops, maxSteps: MAX_ACCOUNT_STEPS, redact };

  async function* invoke(invocation: RemoteInvocation): AsyncGenerator<RunEvent, RemoteOutcome> {
    const hop = nextHop(invocation.metadata, resolveNodeId(options.selfId), options.maxHops, targetOrigin);
    if (!hop.ok) {
      log.warn('remote call refused', { reason: hop.reason });
      return { status: 'failed', reason: `remote agent ${peer.name} not called: ${hop.reason}` };
    }
    // A tracer's span for this call is the peer's parent; without one, a fresh span id in the caller's trace.
    const observed = invocation.observation?.traceparent();
    const trace = observed
      ? { traceparent: observed, traceId: observed.split('-')[1] }
      : childTraceparent(invocation.metadata[TRACEPARENT_KEY]);
    invocation.observation?.set({ hops: hop.metadata[FEDERATION_HOPS_KEY] as number, endpoint: peer.cardUrl });
    const callLog = log.child({ traceId: trace.traceId });
    // On behalf of the caller (a token exchanged for it), the node's own token, or not at all: decided first.
    const credentials = peer.onBehalfOf ? await peer.onBehalfOf.forCall(invocation.subjectToken) : undefined;
    if (credentials && !credentials.ok) {
      callLog.warn('remote call refused', { reason: credentials.reason });
      return credentials.needs === 'auth'
        ? { status: 'auth-required', text: `The remote agent ${peer.name} was not called: ${credentials.reason}.` }
        : { status: 'failed', reason: `remote agent ${peer.name} not called: ${credentials.reason}` };
    }
    const callCredentials = credentials?.credentials;
    const session = ((invocation.state[stateKey] as PeerSessionState | undefined) ??= {});
    // Only our own hop/trace metadata and the configured per-peer headers leave this node: inbound credentials never do.
    const metadata = { ...hop.metadata, [TRACEPARENT_KEY]: trace.traceparent };
    const limitedByConfig = peer.entry.timeoutMs === undefined || peer.entry.timeoutMs > limits.maxDurationMs;
    const timeoutMs = limitedByConfig ? limits.maxDurationMs : (peer.entry.timeoutMs as number);
    // One signal per call, aborted by its deadline or by the caller's cancel. A cancel before the peer has
    // named its task lets the request run on briefly, so the task can be cancelled by id.
    const requestAbort = new AbortController();
    let timedOut = false;
    let grace: NodeJS.Timeout | undefined;
    const seen: TaskTracker = {
      taskId: session.taskId,
      saw(id) {
        seen.taskId = id;
        if (invocation.signal.aborted) requestAbort.abort(invocation.signal.reason);
      },
    };
    const onCallerAbort = () => {
      if (seen.taskId) requestAbort.abort(invocation.signal.reason);
      else grace = setTimeout(() => requestAbort.abort(invocation.signal.reason), CANCEL_GRACE_MS);
    };
    if (invocation.signal.aborted) requestAbort.abort(invocation.signal.reason);
    else invocation.signal.addEventListener('abort', onCallerAbort, { once: true });
    const signal = requestAbort.signal;
    const request: RequestOptions = {
      signal,
      serviceParameters: { ...peer.headers, [TRACEPARENT_KEY]: trace.traceparent },
    };
    const meter = meters.start(signal, callCredentials);
    const started = Date.now();
    const context = unseenContext(invocation.context, session, peer.name);
    yield RunEvents.remoteCall(peer.name, 'sending', undefined, endpoint);
    callLog.info('remote call', {
      continuing: Boolean(session.taskId),
      streaming: peer.streaming,
      contextLines: context.length,
    });
    const deadline = setTimeout(() => {
      timedOut = true;
      requestAbort.abort(new DOMException(`the call took longer than ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs).unref();
    try {
      const c = await sharedClient();
      const message = userMessage(invocation.text, metadata, session, context);
      const params = { tenant: '', message, configuration: undefined, metadata };
      const task = peer.streaming
        ? yield* streamCall(c, params, request, seen, meter)
        : yield* pollCall(c, params, request, seen, meter);
      options.onReport?.({ ok: true, latencyMs: Date.now() - started });
      rememberSeen(session, invocation.context, invocation.text);
      return settle(task, session, callLog);
    } catch (error) {
      if (invocation.signal.aborted) {
        await cancelRemote(seen.taskId, callLog, callCredentials);
        delete invocation.state[stateKey];
        throw abortError(invocation.signal);
      }
      delete invocation.state[stateKey];
      if (timedOut) await cancelRemote(seen.taskId, callLog, callCredentials);
      const fault = timedOut
        ? {
            reason: `timed out after ${timeoutMs} ms${limitedByConfig ? ' (a2a.peerLimits.maxDurationMs)' : ''}`,
            counts: true,
          }
        : nameFault(error, meter);
      const reason = redact(fault.reason);
      options.onReport?.(
        fault.counts
          ? { ok: false, error: reason, latencyMs: Date.now() - started }
          : { ok: true, latencyMs: Date.now() - started },
      );
      callLog.warn('remote call failed', { reason });
      return { status: 'failed', reason: `remote agent ${peer.name} ${reason}` };
    } finally {
      clearTimeout(deadline);
      clearTimeout(grace);
      invocation.signal.removeEventListener('abort', onCallerAbort);
    }
  }

  /** Streams `SendStreamingMessage`, relaying status changes as progress, and returns the task as it last stood. */
  async function* streamCall(
    c: PeerClient,
    params: Parameters<PeerClient['sendMessageStream']>[0],
    request: RequestOptions,
    seen: TaskTracker,
    meter: PeerCallMeter,
  ) {
    const artifacts = new ArtifactText();
    const relay = new AnswerRelay(redact);
    let task: SettledTask = { state: undefined, text: '', artifacts };
    for await (const event of resumableStream(c, params, request, { resumable, onResume: resumed })) {
      const payload = event.payload;
      switch (payload?.$case) {
        case 'task':
          seen.saw(payload.value.id);
          artifacts.addAll(payload.value.artifacts);
          task = fromTask(payload.value, artifacts);
          for (const artifact of payload.value.artifacts) {
            const delta = relay.addWhole(artifact.artifactId, partsText(artifact.parts));
            if (delta) yield RunEvents.textDelta(peer.name, delta);
          }
          break;
        case 'statusUpdate': {
          seen.saw(payload.value.taskId);
          const text = partsText(payload.value.status?.message?.parts);
          const state = payload.value.status?.state;
          const changed = state !== task.state || (text && text !== task.text);
          task = {
            ...task,
            id: payload.value.taskId,
            contextId: payload.value.contextId,
            state,
            text: text || task.text,
            account: accountIn(payload.value.metadata) ?? task.account,
          };
          // Repeated identical updates (heartbeats) are not relayed: each relayed event reaches the caller.
          if (changed) yield RunEvents.remoteCall(peer.name, stateName(state), progress(text));
          // A peer keeps its stream open after auth-required (A2A §7.6.1, for credentials it may get out of
          // band); the caller is asked now instead, and its answer continues the remote task.
          if (state === TaskState.TASK_STATE_AUTH_REQUIRED) return task;
          break;
        }
        case 'artifactUpdate': {
          const { artifact, append } = payload.value;
          artifacts.add(artifact, append);
          checkAnswerSize(meter, artifacts, task.text);
          // One progress event per artifact, not one per streamed chunk; the chunks themselves go on as the answer.
          if (!append) yield RunEvents.remoteCall(peer.name, 'artifact', progress(artifact?.name));
          const delta = artifact ? relay.add(artifact.artifactId, partsText(artifact.parts), append) : '';
          if (delta) yield RunEvents.textDelta(peer.name, delta);
          break;
        }
        case 'message':
          return {
            state: TaskState.TASK_STATE_COMPLETED,
            text: partsText(payload.value.parts),
            artifacts,
            contextId: payload.value.contextId,
          } satisfies SettledTask;
        default:
          break;
      }
      checkAnswerSize(meter, artifacts, task.text);
      // No break on a settled state: a continued task's first snapshot still shows input-required.
      // The peer ends the stream once the task is final or interrupted.
    }
    if (!isSettled(task.state)) throw meter.fail(`the stream ended while the remote task was ${stateName(task.state)}`);
    return task;
  }

  /** Sends without blocking and polls `GetTask` until the task settles, so a cancel can name the task early. */
  async function* pollCall(
    c: PeerClient,
    params: Parameters<PeerClient['sendMessage']>[0],
    request: RequestOptions,
    seen: TaskTracker,
    meter: PeerCallMeter,
  ) {
    const artifacts = new ArtifactText();
    const result = await resumableSend(c, params, request, { resumable, onResume: resumed });
    const first = asTask(result);
    if (!first) {
      const reply = result as Message;
      return {
        state: TaskState.TASK_STATE_COMPLETED,
        text: partsText(reply.parts),
        artifacts,
        contextId: reply.contextId,
      } satisfies SettledTask;
    }
    const continuing = Boolean(seen.taskId);
    seen.saw(first.id);
    let current = first;
    let wait = POLL_MIN_MS;
    let last: TaskState | undefined;
    // A continued task's first snapshot still shows input-required: look again before trusting it.
    let stale = continuing && isInterrupted(current.status?.state);
    while (stale || !isSettled(current.status?.state)) {
      stale = false;
      if (current.status?.state !== last) yield RunEvents.remoteCall(peer.name, stateName(current.status?.state));
      last = current.status?.state;
      await sleep(wait, request.signal as AbortSignal);
      wait = Math.min(wait * 2, POLL_MAX_MS);
      current = await c.getTask({ tenant: '', id: first.id, historyLength: 0 }, request);
    }
    artifacts.addAll(current.artifacts);
    const settled = fromTask(current, artifacts);
    checkAnswerSize(meter, artifacts, settled.text);
    return settled;
  }

  /** A cut stream or send taken up again (`streamResume.ts`): logged, as the peer's health is not in question yet. */
  function resumed({ attempt, after, reason }: { attempt: number; after: string; reason: string }): void {
    log.info('remote call resumed after a cut', { attempt, after, reason: redact(reason) });
  }

  /** Maps the settled task to an outcome (with the peer's account of it) and keeps or drops the remote ids. */
  function settle(task: SettledTask, session: PeerSessionState, callLog: Logger): RemoteOutcome {
    const account = task.account === undefined ? undefined : readHopAccount(task.account, accountBounds);
    const outcome = outcomeOf(task, session, callLog);
    return account ? { ...outcome, account } : outcome;
  }

  function outcomeOf(task: SettledTask, session: PeerSessionState, callLog: Logger): RemoteOutcome {
    const state = stateName(task.state);
    const text = redact(task.artifacts.text() || task.text);
    if (task.contextId) session.contextId = task.contextId;
    // An interrupted remote task (input- or auth-required) is continued by the next message of the session.
    session.taskId = isInterrupted(task.state) ? task.id : undefined;
    callLog.info('remote call settled', { state });
    switch (task.state) {
      case TaskState.TASK_STATE_COMPLETED:
        return { status: 'completed', text: text || '(the remote agent answered with no text)' };
      case TaskState.TASK_STATE_INPUT_REQUIRED:
        return { status: 'input-required', text: redact(task.text) || text || 'The remote agent needs more input.' };
      case TaskState.TASK_STATE_AUTH_REQUIRED:
        return {
          status: 'auth-required',
          text: redact(task.text) || text || `The remote agent ${peer.name} needs authorization.`,
        };
      default:
        return {
          status: 'failed',
          reason: `remote agent ${peer.name} ended the task as ${state}${text ? `: ${text}` : ''}`,
        };
    }
  }

  /** Best effort: tells the peer to stop a task we no longer wait for (with the call's own credentials). */
  async function cancelRemote(
    taskId: string | undefined,
    callLog: Logger,
    credentials: PeerCredentials | undefined,
  ): Promise<void> {
    if (!taskId) return;
    const deadline = createDeadline(CANCEL_TIMEOUT_MS);
    try {
      const c = await sharedClient();
      const signal = deadline.signal;
      meters.start(signal, credentials);
      await c.cancelTask(
        { tenant: '', id: taskId, metadata: undefined },
        { signal, serviceParameters: { ...peer.headers } },
      );
      callLog.info('remote task cancelled', { taskId });
    } catch (error) {
      callLog.warn('remote task cancel failed', { taskId, reason: redact(shortError(error)) });
    } finally {
      deadline.clear();
    }
  }

  return Object.freeze({
    kind: 'remote' as const,
    name: peer.name,
    description: peer.description,
    keywords: peer.keywords,
    cardUrl: peer.cardUrl,
    invoke,
  });
}

/** Tracks the remote task id of the call in flight (for CancelTask). */
interface TaskTracker {
  taskId?: string;
  saw(id: string): void;
}

/** The remote task as far as we know it. */
interface SettledTask {
  id?: string;
  contextId?: string;
  state: TaskState | undefined;
  /** Text of the latest status message (or direct reply). */
  text: string;
  artifacts: ArtifactText;
  /** The peer's account of its turn (`protocol/accounting.ts`), as it sent it: read when the task settles. */
  account?: unknown;
}

function fromTask(task: Task, artifacts: ArtifactText): SettledTask {
  return {
    id: task.id,
    contextId: task.contextId,
    state: task.status?.state,
    text: partsText(task.status?.message?.parts),
    artifacts,
    account: accountIn(task.metadata),
  };
}

/** The account a task's or status update's metadata carries, unread (a peer's: checked once, when kept). */
function accountIn(metadata: Record<string, unknown> | undefined): unknown {
  return metadata?.[ACCOUNT_METADATA_KEY];
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason && typeof reason === 'object' && (reason as { name?: unknown }).name === 'AbortError')
    return reason as Error;
  const error = new Error('the delegated call was cancelled');
  error.name = 'AbortError';
  return error;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
