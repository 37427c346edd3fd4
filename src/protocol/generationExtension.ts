import type { AgentExtension, StreamResponse, Task } from '@a2a-js/sdk';
import { A2AError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { STATE_HEADERS_KEY, type ServerCallContext } from '@a2a-js/sdk/server';
import { GENERATION_EXTENSION, GENERATION_METADATA_KEY } from './generation';

/**
 * The node's generation extension (issue 27): the A2A 1.1 draft's task
 * `generation` (a2aproject/A2A commit 28491879: 1 when a task is created,
 * +1 per event, carried on the task and on every status and artifact event)
 * offered to v1.0 clients as an extension until 1.1 is released.
 *
 * A client activates it by naming {@link GENERATION_EXTENSION} in the
 * `A2A-Extensions` header; then, on that request only:
 * - every task and status/artifact event it receives carries the generation
 *   in its `metadata` under {@link GENERATION_METADATA_KEY} (v1.0 ProtoJSON
 *   has no `generation` field, and the extension guide puts extension data
 *   in `metadata`), and every SSE event an `id: <taskId>:<generation>`;
 * - `SubscribeToTask` with `Last-Event-ID` resumes after that event;
 * - `GetTask` with `A2A-Current-Generation: N` holds until the generation
 *   passes N (a long poll, at most `a2a.longPollTimeout`);
 * - `SendMessage` with `A2A-If-Generation-Match: N` is refused with
 *   {@link TaskGenerationMismatchError} when the task's generation is not N.
 * A client that does not activate it sees exactly what it saw before.
 * Requests carry these values as service parameters (HTTP headers, gRPC
 * metadata), the one carrier every binding hands the request handler.
 * Idempotent sends (`sendKeys.ts`) need no activation: the spec lets any
 * server detect a duplicate message.
 */
export { GENERATION_EXTENSION, GENERATION_METADATA_KEY };

/** The service parameters the extension reads (lower case: as Node and gRPC metadata hand them over). */
export const GENERATION_PARAMETERS = Object.freeze({
  /** GetTask: hold until the task's generation is greater than this. */
  currentGeneration: 'a2a-current-generation',
  /** SendMessage continuing a task: refuse unless the task's generation is this. */
  ifGenerationMatch: 'a2a-if-generation-match',
  /** SubscribeToTask: the `id` of the last SSE event received (`<taskId>:<generation>`). */
  lastEventId: 'last-event-id',
});

/** What the card's extension entry states: how long what the extension relies on is kept. */
export interface GenerationTerms {
  /** How long an ended task's events stay for resuming (`ENDED_TASK_EVENTS_KEPT_MS`). */
  eventsKeptAfterEndMs: number;
  /** `a2a.idempotencyWindow`. */
  idempotencyWindowMs: number;
  /** `a2a.longPollTimeout`. */
  longPollTimeoutMs: number;
}

/** The card's `capabilities.extensions` entry offering the extension, with its terms as params. */
export function generationExtension(terms: GenerationTerms): AgentExtension {
  return {
    uri: GENERATION_EXTENSION,
    description:
      'Task generation (A2A 1.1 draft): generations in metadata, resumable streams (Last-Event-ID), ' +
      'GetTask long poll (A2A-Current-Generation), SendMessage precondition (A2A-If-Generation-Match).',
    required: false,
    params: {
      metadataKey: GENERATION_METADATA_KEY,
      // A running task's events are all kept; an ended task's for this long after its end.
      eventsKeptAfterEndSeconds: terms.eventsKeptAfterEndMs / 1000,
      idempotencyWindowSeconds: terms.idempotencyWindowMs / 1000,
      longPollTimeoutSeconds: terms.longPollTimeoutMs / 1000,
    },
  };
}

/**
 * Whether the request activated the extension (the caller asked for it and
 * the card offers it: `TaskHandler` keeps only offered extensions); marks
 * it activated, so the answer's `A2A-Extensions` header names it.
 */
export function generationActivated(context: ServerCallContext): boolean {
  if (!context.requestedExtensions?.includes(GENERATION_EXTENSION)) return false;
  if (!context.activatedExtensions?.includes(GENERATION_EXTENSION)) context.addActivatedExtension(GENERATION_EXTENSION);
  return true;
}

/** A service parameter of the request (the first value of its header), if it carries one. */
export function serviceParameter(context: ServerCallContext, name: string): string | undefined {
  const headers = context.state.get(STATE_HEADERS_KEY) as Record<string, string | string[] | undefined> | undefined;
  const value = headers?.[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

/** A generation a client sent in `parameter`: a non-negative integer, else RequestMalformedError naming it. */
export function parseGeneration(text: string, parameter: string): number {
  const value = Number(text.trim());
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(value))
    throw new RequestMalformedError(`${parameter} must be a non-negative integer generation, not "${text}"`);
  return value;
}

/** The generation a request's `Last-Event-ID` names for `taskId` (`<taskId>:<generation>`); refuses another task's. */
export function lastEventGeneration(text: string, taskId: string): number {
  const colon = text.lastIndexOf(':');
  if (colon < 0 || text.slice(0, colon) !== taskId)
    throw new RequestMalformedError(`Last-Event-ID must be "${taskId}:<generation>" for this task, not "${text}"`);
  return parseGeneration(text.slice(colon + 1), 'Last-Event-ID');
}

/** The task with its generation in its metadata (a copy: the task itself is left as it is). */
export function withGeneration(task: Task, generation: number): Task {
  return { ...task, metadata: { ...task.metadata, [GENERATION_METADATA_KEY]: generation } };
}

/** The stream response with the task's generation after it in its metadata (a copy). */
export function responseWithGeneration(response: StreamResponse, generation: number): StreamResponse {
  const payload = response.payload;
  switch (payload?.$case) {
    case 'task':
      return { payload: { $case: 'task', value: withGeneration(payload.value, generation) } };
    case 'statusUpdate':
    case 'artifactUpdate': {
      const value = {
        ...payload.value,
        metadata: { ...payload.value.metadata, [GENERATION_METADATA_KEY]: generation },
      };
      return { payload: { ...payload, value } as typeof payload };
    }
    default:
      return response;
  }
}

/**
 * The SSE `id` of a stream response that carries a generation
 * (`<taskId>:<generation>`), or undefined: events of a request that did not
 * activate the extension carry none, and their frames no `id:` line.
 */
export function sseEventId(response: StreamResponse): string | undefined {
  const payload = response.payload;
  let taskId: string;
  let metadata: Record<string, unknown> | undefined;
  switch (payload?.$case) {
    case 'task':
      taskId = payload.value.id;
      metadata = payload.value.metadata;
      break;
    case 'statusUpdate':
    case 'artifactUpdate':
      taskId = payload.value.taskId;
      metadata = payload.value.metadata;
      break;
    default:
      return undefined;
  }
  const generation = metadata?.[GENERATION_METADATA_KEY];
  return typeof generation === 'number' ? `${taskId}:${generation}` : undefined;
}

/** The `google.rpc.ErrorInfo` reason of {@link TaskGenerationMismatchError}. */
export const TASK_GENERATION_MISMATCH = 'TASK_GENERATION_MISMATCH';

/**
 * The 1.1 draft's TaskGenerationMismatchError: a SendMessage's
 * `ifGenerationMatch` is not the task's generation. JSON-RPC -32010 (its
 * envelope code, carried as the SDK's JSON-RPC errors carry theirs);
 * HTTP+JSON 409 `ABORTED` and gRPC `ABORTED` by its reason
 * (`restResponses.ts`, the gRPC binding's error table).
 */
export class TaskGenerationMismatchError extends A2AError {
  override readonly reason = TASK_GENERATION_MISMATCH;
  readonly transport = 'jsonrpc';
  readonly envelopeCode = -32010;

  constructor(taskId: string, expected: number, current: number) {
    super({
      message: `Task generation mismatch: expected ${expected} but current generation is ${current}`,
      metadata: { taskId, expectedGeneration: String(expected), currentGeneration: String(current) },
    });
  }
}
