import type { AgentCard, SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import type { RequestOptions } from '@a2a-js/sdk/client';
import { GENERATION_EXTENSION, GENERATION_METADATA_KEY } from '../protocol/generation';
import { errorMessage } from '../errors';
import { isSettled } from '../protocol/taskStates';
import type { PeerClient } from './jsonRpcPeer';

/**
 * A delegated call that survives a dropped connection (issue 27): when the
 * peer's card offers the generation extension (`protocol/generation.ts`), its
 * streams carry each event's generation, so a stream cut (the socket
 * closed, or the stream ended before the task settled) is resumed with
 * `SubscribeToTask` and `Last-Event-ID` from the last event received: the
 * caller sees every event once, as if nothing had happened. A send cut
 * before the peer named its task is sent again as it was — the same
 * message id, which the peer takes as a retry (no second turn). Against a
 * peer that does not offer the extension nothing changes: the cut fails
 * the call as it always did.
 */

/** How many times one call's stream (or send) is taken up again after a cut. */
const MAX_RESUMES = 3;

/** Whether the peer's card offers the generation extension (its streams can be resumed, its sends retried). */
export function offersGeneration(card: AgentCard): boolean {
  return (card.capabilities?.extensions ?? []).some((e) => e.uri === GENERATION_EXTENSION);
}

/** The call's options with the extension activated (`A2A-Extensions`), and any further service parameters. */
function activated(request: RequestOptions, more: Record<string, string> = {}): RequestOptions {
  return {
    ...request,
    serviceParameters: { ...request.serviceParameters, 'A2A-Extensions': GENERATION_EXTENSION, ...more },
  };
}

/** What a resumed call tells its caller: each time it took the stream (or send) up again, and why. */
export type OnResume = (what: { attempt: number; after: string; reason: string }) => void;

/**
 * `SendStreamingMessage` to the peer, resumed after a cut when `resumable`
 * (the peer offers the extension); exactly the client's stream otherwise.
 * @example
 * for await (const event of resumableStream(client, params, request, { resumable: offersGeneration(card) })) …
 */
export async function* resumableStream(
  client: PeerClient,
  params: SendMessageRequest,
  request: RequestOptions,
  options: { resumable: boolean; onResume?: OnResume },
): AsyncGenerator<StreamResponse, void, undefined> {
  if (!options.resumable) {
    yield* client.sendMessageStream(params, request);
    return;
  }
  let taskId: string | undefined;
  let generation: number | undefined;
  let settled = false;
  let source = client.sendMessageStream(params, activated(request));
  for (let attempt = 1; ; attempt += 1) {
    let reason: string;
    try {
      for await (const event of source) {
        const seen = eventIds(event);
        taskId = seen.taskId ?? taskId;
        generation = seen.generation ?? generation;
        if (seen.state !== undefined) settled = isSettled(seen.state);
        yield event;
      }
      if (settled || request.signal?.aborted) return;
      reason = 'the stream ended before the task settled';
    } catch (error) {
      // Only a cut is taken up again: the peer's own answers (errors, bounds) stand, as does the caller's cancel.
      if (request.signal?.aborted || !isNetworkError(error)) throw error;
      reason = errorMessage(error);
    }
    if (attempt > MAX_RESUMES) throw new Error(`${reason} (${MAX_RESUMES} resumes tried)`);
    const after = taskId && generation !== undefined ? `${taskId}:${generation}` : undefined;
    options.onResume?.({ attempt, after: after ?? 'the send', reason });
    source = after
      ? client.resubscribeTask({ tenant: params.tenant, id: taskId! }, activated(request, { 'Last-Event-ID': after }))
      : client.sendMessageStream(params, activated(request));
  }
}

/**
 * `SendMessage` to the peer, sent again as it was (its message id the
 * same) when the connection is cut before any answer and `resumable`.
 */
export async function resumableSend(
  client: PeerClient,
  params: SendMessageRequest,
  request: RequestOptions,
  options: { resumable: boolean; onResume?: OnResume },
): ReturnType<PeerClient['sendMessage']> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await client.sendMessage(params, options.resumable ? activated(request) : request);
    } catch (error) {
      if (!options.resumable || request.signal?.aborted || !isNetworkError(error) || attempt > MAX_RESUMES) throw error;
      options.onResume?.({ attempt, after: 'the send', reason: errorMessage(error) });
    }
  }
}

/** The task id, generation and state an event carries, where it carries them. */
function eventIds(event: StreamResponse): { taskId?: string; generation?: number; state?: number } {
  const payload = event.payload;
  let taskId: string | undefined;
  let metadata: Record<string, unknown> | undefined;
  let state: number | undefined;
  switch (payload?.$case) {
    case 'task':
      taskId = payload.value.id;
      metadata = payload.value.metadata;
      state = payload.value.status?.state;
      break;
    case 'statusUpdate':
      taskId = payload.value.taskId;
      metadata = payload.value.metadata;
      state = payload.value.status?.state;
      break;
    case 'artifactUpdate':
      taskId = payload.value.taskId;
      metadata = payload.value.metadata;
      break;
    default:
      return {};
  }
  const generation = metadata?.[GENERATION_METADATA_KEY];
  return { taskId, generation: typeof generation === 'number' ? generation : undefined, state };
}

/** The error and the causes under it, outermost first (a few levels: enough for undici's wrapping). */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e && typeof e === 'object' && chain.length < 8; e = (e as { cause?: unknown }).cause)
    chain.push(e);
  return chain;
}

/** A socket-level failure (reset, closed mid-body), as undici reports it. */
export function isNetworkError(error: unknown): boolean {
  return causeChain(error).some((e) => {
    const code = (e as { code?: unknown }).code;
    return (typeof code === 'string' && /^(UND_ERR_|E[A-Z]+)/.test(code)) || errorMessage(e) === 'terminated';
  });
}
