import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { errorMessage, AbortError, LangoError } from '../errors';
import type { Logger } from '../log/logger';
import type { Model, ModelEvent, ModelMessage, ModelRequest, ModelToolCall } from './model';

/** A model endpoint failed or could not be reached; the message is safe to show (no key, no stack). */
export class ModelRequestError extends LangoError {}

/** What {@link createOpenAIModel} needs. */
export interface OpenAIModelOptions {
  apiKey: string;
  /** Any OpenAI-compatible Chat Completions endpoint, e.g. `http://127.0.0.1:11434/v1`; OpenAI's when unset. */
  baseURL?: string;
  model: string;
  logger: Logger;
  /** How long the endpoint has to start answering (the answer itself streams as long as it takes). */
  timeoutMs: number;
  /** Retries of connection errors, timeouts, 408/409/429 and 5xx before the answer starts (2 when unset). */
  maxRetries?: number;
  /** The `fetch` the client uses: the composition root passes the outbound address policy's (src/net/endpoint.ts). */
  fetch?: typeof fetch;
}

/** OpenAI's own endpoint, used when `baseURL` is unset (given explicitly: the client would read OPENAI_BASE_URL). */
const OPENAI_ENDPOINT = 'https://api.openai.com/v1';

/**
 * A {@link Model} over the `openai` package's Chat Completions client with
 * streaming: tools offered as functions, streamed tool-call fragments joined
 * into whole calls, text streamed as it arrives, usage reported at the end.
 * The package sends the request (over the given `fetch`), retries it
 * (connection errors, timeouts, 408, 409, 429 and 5xx, before the answer
 * starts, after `retry-after` or an exponential backoff), bounds the wait for
 * the answer's start by `timeoutMs`, and reads the server-sent events,
 * failing on an error event mid-answer. Every setting is passed here, so the
 * client reads no environment variable.
 * @example
 * const model = createOpenAIModel({ apiKey, baseURL: 'http://127.0.0.1:8080/v1', model: 'gpt-4o-mini', logger, timeoutMs: 120_000 });
 */
export function createOpenAIModel(options: OpenAIModelOptions): Model {
  const logger = options.logger.child({ component: 'llm', provider: 'openai', model: options.model });
  const endpoint = options.baseURL ?? OPENAI_ENDPOINT;
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: endpoint,
    organization: null,
    project: null,
    webhookSecret: null,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries ?? 2,
    // The package's own diagnostics (a chunk it cannot parse) go to the node's logger, never the console.
    logger: packageLogger(logger),
    logLevel: 'warn',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function* stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    if (request.signal.aborted) throw new AbortError('the model call was cancelled');
    // One controller per call, tied to the turn's signal by a listener removed when the answer ends: the
    // package adds a listener per attempt to the signal it is given and never removes it, and a turn's
    // signal outlives its model calls.
    const call = new AbortController();
    const cancel = () => call.abort(request.signal.reason);
    request.signal.addEventListener('abort', cancel, { once: true });
    // By the index the model gives each call (a Map, not an array: the index is the model's to choose).
    const calls = new Map<number, ModelToolCall>();
    try {
      const chunks = await client.chat.completions.create(
        {
          model: options.model,
          stream: true,
          stream_options: { include_usage: true },
          messages: toChatMessages(request),
          ...(request.tools.length ? { tools: request.tools.map(toChatTool) } : {}),
        },
        { signal: call.signal },
      );
      for await (const chunk of chunks) yield* chunkEvents(chunk, calls);
    } catch (err) {
      if (request.signal.aborted) throw new AbortError('the model call was cancelled');
      const message = describeError(err, endpoint, options.apiKey);
      logger.warn('model request failed', { error: message });
      throw new ModelRequestError(message);
    } finally {
      request.signal.removeEventListener('abort', cancel);
      // An answer left early (the caller stopped reading) is not read any further.
      call.abort();
    }
    // The package's stream ends quietly when its request is aborted mid-answer: a cut answer is no answer.
    if (request.signal.aborted) throw new AbortError('the model call was cancelled');
    yield* toolCallEvents(calls);
  }

  return {
    name: `openai:${options.model}`,
    stream,
    withModel: (model) => createOpenAIModel({ ...options, model }),
  };
}

/** The node's logger in the shape the `openai` client logs through (a message, then any values). */
function packageLogger(logger: Logger): NonNullable<ConstructorParameters<typeof OpenAI>[0]>['logger'] {
  const meta = (rest: unknown[]) => ({ detail: rest.map((value) => String(value).slice(0, 300)) });
  return {
    error: (message, ...rest) => logger.warn(`openai client: ${message}`, meta(rest)),
    warn: (message, ...rest) => logger.warn(`openai client: ${message}`, meta(rest)),
    info: (message, ...rest) => logger.debug(`openai client: ${message}`, meta(rest)),
    debug: (message, ...rest) => logger.debug(`openai client: ${message}`, meta(rest)),
  };
}

/** A readable one-line reason for a failed request, with the API key (and anything key-shaped) masked. */
function describeError(err: unknown, endpoint: string, apiKey: string): string {
  let text: string;
  if (err instanceof OpenAI.APIConnectionTimeoutError) text = `the model endpoint ${endpoint} did not answer in time`;
  else if (err instanceof OpenAI.APIConnectionError)
    text = `cannot reach the model endpoint ${endpoint}: ${causeOf(err)}`;
  else if (err instanceof OpenAI.APIError) {
    const detail = (err.error as { message?: unknown } | undefined)?.message;
    const reason = typeof detail === 'string' && detail ? detail : err.message;
    // No status: the answer had started, and an error event (or an error chunk) ended it.
    text =
      err.status === undefined
        ? `the model endpoint reported an error mid-answer: ${reason}`
        : `the model endpoint answered HTTP ${err.status}: ${reason}`;
  } else if (err instanceof ModelRequestError) return err.message;
  else text = `the model endpoint's answer broke off: ${errorMessage(err)}`;
  if (apiKey) text = text.split(apiKey).join('[REDACTED]');
  return text.replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, 'sk-[REDACTED]');
}

/** What one chunk adds: usage, a text delta; tool-call fragments are joined into `calls` (keyed by index). */
export function* chunkEvents(chunk: ChatCompletionChunk, calls: Map<number, ModelToolCall>): Generator<ModelEvent> {
  if (chunk.usage) {
    yield { type: 'usage', inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
  }
  const delta = chunk.choices?.[0]?.delta;
  if (!delta) return;
  if (delta.content) yield { type: 'text_delta', delta: delta.content };
  // Tool calls arrive in fragments keyed by index: the first carries id and name, later ones more argument text.
  for (const part of delta.tool_calls ?? []) {
    let call = calls.get(part.index);
    if (!call) calls.set(part.index, (call = { id: '', name: '', arguments: '' }));
    if (part.id) call.id = part.id;
    if (part.function?.name) call.name += part.function.name;
    if (part.function?.arguments) call.arguments += part.function.arguments;
  }
}

/** The tool calls joined from an answer's fragments, in the model's order (an id made up where it gave none). */
export function* toolCallEvents(calls: Map<number, ModelToolCall>): Generator<ModelEvent> {
  for (const [index, call] of [...calls.entries()].sort(([a], [b]) => a - b)) {
    if (!call.name) throw new ModelRequestError('the model streamed a tool call without a function name');
    yield { type: 'tool_call', call: { ...call, id: call.id || `call_${index}` } };
  }
}

/** The system prompt, then the conversation in Chat Completions form. */
export function toChatMessages(request: ModelRequest): ChatCompletionMessageParam[] {
  return [{ role: 'system', content: request.instruction }, ...request.messages.map(toChatMessage)];
}

function toChatMessage(message: ModelMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments || '{}' },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toChatTool(tool: ModelRequest['tools'][number]): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** The reason a fetch failed: undici's `fetch failed` names its cause. */
function causeOf(err: unknown): string {
  const cause = err instanceof Error ? (err as { cause?: unknown }).cause : undefined;
  return cause instanceof Error ? cause.message : errorMessage(err);
}
