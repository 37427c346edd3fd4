import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Part, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { errorMessage, LangoError } from '../errors';
import { offersGeneration, resumableStream } from '../federation/streamResume';
import type { ChatEvent, ChatOutcome } from './chatEvents';

/** How long the CLI waits for the node to answer a plain HTTP request (card, catalog, health). */
const REQUEST_TIMEOUT_MS = 10_000;
/** How long a cancelled turn may take to be confirmed before the CLI stops waiting for it. */
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * Fetches JSON from the running node, with `headers` (the owner's
 * credential for its owner-only routes). @throws LangoError naming the URL
 * when it does not answer.
 */
export async function fetchNodeJson(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const url = new URL(pathname, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (err) {
    throw new LangoError(`the node at ${baseUrl} did not answer ${pathname}: ${errorMessage(err)}`, { cause: err });
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new LangoError(`the node at ${baseUrl} answered ${pathname} with HTTP ${response.status}, not JSON`);
  }
}

/**
 * A report from one of the node's owner-only routes (`/node/tools`, …), or
 * why the node would not give it (not the owner, or a node without them).
 */
export async function fetchNodeReport<T>(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string>,
): Promise<{ ok: true; report: T } | { ok: false; why: string }> {
  const { status, body } = await fetchNodeJson(baseUrl, pathname, headers);
  if (status === 200) return { ok: true, report: body as T };
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return { ok: false, why: `HTTP ${status}${typeof message === 'string' ? `: ${message}` : ''}` };
}

function textOf(parts: Part[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * A progress update's metadata (see `a2a/progress.ts`) as a chat event; a
 * progress line without known metadata is shown as a note.
 */
function progressEvent(metadata: Record<string, unknown> | undefined, text: string): ChatEvent | undefined {
  const agent = str(metadata?.agent) ?? '';
  switch (metadata?.event) {
    case 'tool_start':
      return { type: 'tool_call', agent, tool: str(metadata.tool) ?? '?', args: str(metadata.args) };
    case 'tool_end':
      return {
        type: 'tool_result',
        agent,
        tool: str(metadata.tool) ?? '?',
        ok: metadata.ok === true,
        summary: str(metadata.summary) ?? '',
      };
    case 'remote_call':
      return {
        type: 'remote_call',
        peer: agent,
        status: str(metadata.status) ?? '',
        endpoint: str(metadata.endpoint),
        detail: str(metadata.detail),
      };
    case 'transfer':
      return { type: 'transfer', from: str(metadata.from) ?? '', to: str(metadata.to) ?? '' };
    default:
      return text ? { type: 'note', agent: agent || 'node', text } : undefined;
  }
}

/** What one turn's stream has shown so far. */
interface TurnSeen {
  onEvent: (event: ChatEvent) => void;
  sawTask: (id: string) => void;
  /** The answer artifact, shown once when the task completes. */
  answer?: { agent: string; text: string };
}

/**
 * One conversation with the running node over A2A (streaming): the CLI's
 * owner session lives on the node, which runs every tool and creates every
 * job itself. A cancelled turn is cancelled on the node (CancelTask).
 */
export class NodeConversation {
  /** Set while the node waits for this conversation's answer (input-required): the next message continues it. */
  private pendingTaskId: string | undefined;

  private constructor(
    readonly url: string,
    private readonly client: Client,
    /** The A2A context: the caller's `--session`, else the one the node makes for the first message. */
    private contextId: string | undefined,
    /** The node's card offers the generation extension: a dropped stream is resumed where it stopped. */
    private readonly resumable: boolean,
  ) {}

  /** Connects to the node at `url` (fetches its card), continuing `contextId` when given. */
  static async connect(url: string, contextId?: string): Promise<NodeConversation> {
    try {
      const client = await new ClientFactory().createFromUrl(url);
      const card = await client.getAgentCard();
      return new NodeConversation(url, client, contextId, offersGeneration(card));
    } catch (err) {
      throw new LangoError(`cannot reach the node at ${url}: ${errorMessage(err)}`, { cause: err });
    }
  }

  /** Sends one message and relays the turn as chat events until it ends or `signal` cancels it. */
  async turn(text: string, signal: AbortSignal, onEvent: (event: ChatEvent) => void): Promise<ChatOutcome> {
    const request = new AbortController();
    let taskId: string | undefined;
    let cancelling: Promise<unknown> | undefined;
    const cancel = () => {
      if (!taskId) {
        request.abort();
        return;
      }
      const id = taskId;
      cancelling = this.client
        .cancelTask({ tenant: '', id, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) })
        .catch(() => undefined)
        .finally(() => request.abort());
    };
    if (signal.aborted) return 'cancelled';
    signal.addEventListener('abort', cancel, { once: true });
    const seen: TurnSeen = {
      onEvent,
      sawTask: (id) => {
        taskId = id;
        if (signal.aborted && !cancelling) cancel();
      },
    };
    // A dropped connection is taken up where it stopped (the node resumes from the last event), and said so.
    const onResume = ({ reason }: { reason: string }) =>
      onEvent({ type: 'note', agent: 'lango', text: `the connection to the node dropped (${reason}); resuming` });
    try {
      const stream = resumableStream(
        this.client,
        {
          tenant: '',
          message: {
            messageId: randomUUID(),
            contextId: this.contextId ?? '',
            taskId: this.pendingTaskId ?? '',
            role: Role.ROLE_USER,
            parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          },
          configuration: undefined,
          metadata: undefined,
        },
        { signal: request.signal },
        { resumable: this.resumable, onResume },
      );
      this.pendingTaskId = undefined;
      for await (const response of stream) {
        const outcome = this.relay(response, seen);
        if (outcome) return outcome;
      }
      if (signal.aborted) return this.cancelled(onEvent);
      onEvent({ type: 'failed', text: 'the node ended the stream before the turn ended' });
      return 'failed';
    } catch (err) {
      if (signal.aborted) {
        await cancelling;
        return this.cancelled(onEvent);
      }
      throw new LangoError(`the node at ${this.url} failed: ${errorMessage(err)}`, { cause: err });
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  private cancelled(onEvent: (event: ChatEvent) => void): ChatOutcome {
    onEvent({ type: 'cancelled' });
    return 'cancelled';
  }

  /** One stream response: events out, and the outcome once the task settles. */
  private relay(response: StreamResponse, seen: TurnSeen): ChatOutcome | undefined {
    const { onEvent, sawTask, answer } = seen;
    const payload = response.payload;
    switch (payload?.$case) {
      case 'task':
        this.contextId = payload.value.contextId;
        sawTask(payload.value.id);
        return undefined;
      case 'artifactUpdate': {
        const agent = str(payload.value.artifact?.metadata?.agent) ?? 'node';
        // The answer streams in chunks: `append` adds to it, anything else starts it over.
        const before = payload.value.append ? (seen.answer?.text ?? '') : '';
        seen.answer = { agent, text: before + textOf(payload.value.artifact?.parts) };
        return undefined;
      }
      case 'statusUpdate': {
        const status = payload.value.status;
        this.contextId = payload.value.contextId || this.contextId;
        sawTask(payload.value.taskId);
        const text = textOf(status?.message?.parts);
        const metadata = (status?.message?.metadata ?? payload.value.metadata) as Record<string, unknown> | undefined;
        const agent = str(metadata?.agent) ?? 'node';
        switch (status?.state) {
          case TaskState.TASK_STATE_COMPLETED:
            // The answer is the artifact's; a node that also repeats it in the closing status is shown it once.
            onEvent({ type: 'answer', agent: answer?.agent ?? agent, text: answer?.text || text });
            return 'completed';
          case TaskState.TASK_STATE_INPUT_REQUIRED:
            this.pendingTaskId = payload.value.taskId;
            onEvent({ type: 'question', agent, text });
            return 'input-required';
          case TaskState.TASK_STATE_FAILED:
          case TaskState.TASK_STATE_REJECTED:
            onEvent({ type: 'failed', text: text || 'the node could not answer' });
            return 'failed';
          case TaskState.TASK_STATE_CANCELED:
            return this.cancelled(onEvent);
          default: {
            const event = progressEvent(metadata, text);
            if (event) onEvent(event);
            return undefined;
          }
        }
      }
      case 'message':
        onEvent({ type: 'answer', agent: 'node', text: textOf(payload.value.parts) });
        return 'completed';
      default:
        return undefined;
    }
  }
}
