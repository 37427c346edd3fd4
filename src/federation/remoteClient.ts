import { randomUUID } from 'node:crypto';
import { Role, TaskState, type AgentCard, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type AgentCardResolver,
  type Client,
} from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { RemoteAgentError } from '../errors';
import { ACCOUNT_METADATA_KEY } from '../protocol/accounting';
import type { RemoteOutcome } from '../agent/agent';
import type { Logger } from '../log/logger';
import { isInterrupted } from '../protocol/taskStates';
import type { PeerSessionState } from './peerContext';

/**
 * The SDK client side of a remote call: building a client for a pinned
 * card (v1.0, or the SDK's v0.3 compat transports when the card's
 * interfaces are v0.3), the outgoing message, and reading text out of
 * tasks, artifacts and messages.
 */

/**
 * Builds an SDK client for an already validated and pinned card; `polling`
 * for peers that do not stream. `fetchImpl` is the peer's bounded fetch
 * (see peerFetch.ts), which finds each call's bound by the call's signal:
 * every byte the client reads passes through it.
 */
export async function createPeerClient(
  card: AgentCard,
  options: { fetchImpl: typeof fetch; polling: boolean },
): Promise<Client> {
  const { fetchImpl } = options;
  // The card was normalized and pinned by the loader: the resolver must not re-interpret it.
  const cardResolver: AgentCardResolver = {
    resolve: () => Promise.reject(new RemoteAgentError('cards are loaded by the federation, not the client')),
    normalizeAgentCard: (c: unknown) => c as AgentCard,
  };
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
    ],
    cardResolver,
    clientConfig: { polling: options.polling },
  });
  return factory.createFromAgentCard(card);
}

/**
 * A user message carrying `text`, continuing `taskId`/`contextId` when set,
 * preceded by `context` (conversation lines the peer has not seen) as a
 * first text part, so the peer can resolve references ("there", "that
 * file"). The heading says which: the whole transcript for a new remote
 * context, only what happened since the peer's last reply when it continues.
 */
export function userMessage(
  text: string,
  metadata: Record<string, unknown>,
  ids: { taskId?: string; contextId?: string },
  context: string[] = [],
): Message {
  const heading = ids.contextId
    ? 'Conversation since your last reply (context, oldest first):'
    : 'Conversation so far (context, oldest first):';
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts:
      context.length > 0
        ? [textPart(`${heading}\n${context.join('\n')}\n\nRequest:`), textPart(text)]
        : [textPart(text)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** The text parts of a message or artifact, joined; data parts as JSON. */
export function partsText(parts: Part[] | undefined): string {
  return (parts ?? [])
    .map((p) => {
      switch (p.content?.$case) {
        case 'text':
          return p.content.value;
        case 'data':
          return JSON.stringify(p.content.value);
        case 'url':
          return p.content.value;
        default:
          return '';
      }
    })
    .filter(Boolean)
    .join('\n');
}

/** Collects artifact text by artifact id, honouring `append` chunks, and keeps count of its size. */
export class ArtifactText {
  private readonly byId = new Map<string, { text: string; bytes: number }>();
  private total = 0;

  add(artifact: Artifact | undefined, append = false): void {
    if (!artifact) return;
    const text = partsText(artifact.parts);
    const bytes = Buffer.byteLength(text);
    const before = this.byId.get(artifact.artifactId);
    if (append && before) {
      this.byId.set(artifact.artifactId, { text: before.text + text, bytes: before.bytes + bytes });
    } else {
      this.total -= before?.bytes ?? 0;
      this.byId.set(artifact.artifactId, { text, bytes });
    }
    this.total += bytes;
  }

  addAll(artifacts: Artifact[] | undefined): void {
    for (const a of artifacts ?? []) this.add(a);
  }

  /** UTF-8 bytes held, for the answer cap. */
  get bytes(): number {
    return this.total;
  }

  text(): string {
    return [...this.byId.values()]
      .map((a) => a.text)
      .filter(Boolean)
      .join('\n');
  }
}

/** How a remote task ended, in the words we log and show. */
export function stateName(state: TaskState | undefined): string {
  switch (state) {
    case TaskState.TASK_STATE_SUBMITTED:
      return 'submitted';
    case TaskState.TASK_STATE_WORKING:
      return 'working';
    case TaskState.TASK_STATE_COMPLETED:
      return 'completed';
    case TaskState.TASK_STATE_FAILED:
      return 'failed';
    case TaskState.TASK_STATE_CANCELED:
      return 'canceled';
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return 'input-required';
    case TaskState.TASK_STATE_REJECTED:
      return 'rejected';
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return 'auth-required';
    default:
      return 'unknown';
  }
}

/** True when the error is the peer speaking A2A (it is alive), false for transport failures. */
export function isProtocolError(error: unknown): boolean {
  // A2AError's instanceof checks a realm-wide brand, so it also holds for errors from another bundle.
  const cause = error && typeof error === 'object' ? (error as { cause?: unknown }).cause : undefined;
  return error instanceof A2AError || cause instanceof A2AError;
}

/** The task a send returned, or `undefined` for a direct message reply. */
export function asTask(result: Message | Task): Task | undefined {
  return 'status' in result && 'id' in result ? (result as Task) : undefined;
}

/** The remote task as far as we know it. */
export interface SettledTask {
  id?: string;
  contextId?: string;
  state: TaskState | undefined;
  /** Text of the latest status message (or direct reply). */
  text: string;
  artifacts: ArtifactText;
  /** The peer's account of its turn (`protocol/accounting.ts`), as it sent it: read when the task settles. */
  account?: unknown;
}

/** What a call knows of the remote task from a snapshot of it. */
export function fromTask(task: Task, artifacts: ArtifactText): SettledTask {
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
export function accountIn(metadata: Record<string, unknown> | undefined): unknown {
  return metadata?.[ACCOUNT_METADATA_KEY];
}

/**
 * Maps the settled task to an outcome of the call to `peerName`, and keeps
 * (an interrupted task, continued by the session's next message) or drops
 * the remote ids in `session`.
 */
export function outcomeOf(
  task: SettledTask,
  session: PeerSessionState,
  call: { peerName: string; redact: (text: string) => string; log: Logger },
): RemoteOutcome {
  const { redact, log: callLog } = call;
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
        text: redact(task.text) || text || `The remote agent ${call.peerName} needs authorization.`,
      };
    default:
      return {
        status: 'failed',
        reason: `remote agent ${call.peerName} ended the task as ${state}${text ? `: ${text}` : ''}`,
      };
  }
}
