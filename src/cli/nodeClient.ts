import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Part, type StreamResponse } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { errorMessage, LangoError } from '../errors';
import { offersGeneration, resumableStream } from '../federation/streamResume';
import type { ChatEvent, ChatOutcome } from './chatEvents';

/** How long a cancelled turn may take to be confirmed before the CLI stops waiting for it. */
const CANCEL_TIMEOUT_MS = 5_000;

/** `fetch` adding `headers` to requests for `baseUrl`'s origin only. */
function credentialedFetch(baseUrl: string, headers: Record<string, string>): typeof fetch {
  const origin = new URL(baseUrl).origin;
  if (Object.keys(headers).length === 0) return fetch;
  return (input, init) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    if (target.origin !== origin) return fetch(input, init);
    const merged = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetch(input, { ...init, headers: merged });
  };
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

  /**
   * Connects to the node at `url` (fetches its card), continuing `contextId`
   * when given; `headers` (the credential) go with every request to the
   * node's own origin, never to another host its card names.
   */
  static async connect(
    url: string,
    contextId?: string,
    headers: Record<string, string> = {},
  ): Promise<NodeConversation> {
    try {
      const fetchImpl = credentialedFetch(url, headers);
      const client = await new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }).createFromUrl(url);
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
