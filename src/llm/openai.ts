import { setTimeout as sleep } from 'node:timers/promises';
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

/** The longest wait between two tries, and the longest `retry-after` honoured. */
const MAX_RETRY_DELAY_MS = 8_000;
const MAX_RETRY_AFTER_MS = 60_000;
/** The most of an error answer read for its message. */
const MAX_ERROR_BYTES = 64 * 1024;

/**
 * A {@link Model} over an OpenAI-compatible Chat Completions endpoint with
 * streaming: tools offered as functions, streamed tool-call fragments joined
 * into whole calls, text streamed as it arrives, usage reported at the end.
 * The request and its server-sent events are handled here over the given
 * `fetch` (the `openai` package's client reads each chunk through three
 * async generators and a copy of its pending bytes, most of what a streamed
 * answer costs the node); it retries as that client does: connection errors,
 * timeouts, 408, 409, 429 and 5xx, before the answer starts, after
 * `retry-after` or an exponential backoff.
 * @example
 * const model = createOpenAIModel({ apiKey, baseURL: 'http://127.0.0.1:8080/v1', model: 'gpt-4o-mini', logger, timeoutMs: 120_000 });
 */
export function createOpenAIModel(options: OpenAIModelOptions): Model {
  const logger = options.logger.child({ component: 'llm', provider: 'openai', model: options.model });
  const endpoint = options.baseURL ?? 'https://api.openai.com/v1';
  const url = `${endpoint.replace(/\/+$/, '')}/chat/completions`;
  const send = options.fetch ?? fetch;
  const maxRetries = options.maxRetries ?? 2;
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    'content-type': 'application/json',
    accept: 'text/event-stream',
  };
  const fail = (text: string): ModelRequestError => {
    const message = redactKey(text, options.apiKey);
    logger.warn('model request failed', { error: message });
    return new ModelRequestError(message);
  };

  /** The endpoint's streaming answer, once its headers are in (tries again as the doc comment above says). */
  async function open(body: string, signal: AbortSignal): Promise<{ response: Response; detach: () => void }> {
    for (let attempt = 0; ; attempt++) {
      signal.throwIfAborted();
      const attemptAbort = new AbortController();
      const cancel = () => attemptAbort.abort(signal.reason);
      const detach = () => signal.removeEventListener('abort', cancel);
      signal.addEventListener('abort', cancel, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        attemptAbort.abort(new DOMException('the model endpoint did not answer in time', 'TimeoutError'));
      }, options.timeoutMs);
      let response: Response;
      try {
        response = await send(url, { method: 'POST', headers, body, signal: attemptAbort.signal });
      } catch (err) {
        detach();
        if (signal.aborted) throw err;
        if (attempt < maxRetries) {
          await sleep(backoffMs(attempt, undefined), undefined, { signal });
          continue;
        }
        throw fail(
          timedOut
            ? `the model endpoint ${endpoint} did not answer in time`
            : `cannot reach the model endpoint ${endpoint}: ${causeOf(err)}`,
        );
      } finally {
        clearTimeout(timer);
      }
      // From here the caller's signal ends the answer's body through this attempt's, until the answer ends (a
      // turn's signal outlives its model calls).
      if (response.ok && response.body) return { response, detach };
      detach();
      if (attempt < maxRetries && shouldRetry(response)) {
        await response.body?.cancel().catch(() => {});
        await sleep(backoffMs(attempt, response.headers), undefined, { signal });
        continue;
      }
      throw fail(`the model endpoint answered HTTP ${response.status}: ${await errorDetail(response)}`);
    }
  }

  async function* stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    // By the index the model gives each call (a Map, not an array: the index is the model's to choose).
    const calls = new Map<number, ModelToolCall>();
    const body = JSON.stringify({
      model: options.model,
      stream: true,
      stream_options: { include_usage: true },
      messages: toChatMessages(request),
      ...(request.tools.length ? { tools: request.tools.map(toChatTool) } : {}),
    });
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let detach: (() => void) | undefined;
    let finished = false;
    try {
      const opened = await open(body, request.signal);
      detach = opened.detach;
      reader = opened.response.body!.getReader();
      const decoder = new TextDecoder();
      let pending = '';
      /** The `data:` lines of the event being read, joined, and its `event:` name. */
      let data: string | undefined;
      let name = '';
      reading: for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += decoder.decode(value, { stream: true });
        let start = 0;
        for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
          const line = pending.charCodeAt(end - 1) === 13 ? pending.slice(start, end - 1) : pending.slice(start, end);
          start = end + 1;
          if (line === '') {
            // A blank line ends an event.
            if (data === undefined) continue;
            const event = data;
            const errorEvent = name === 'error';
            data = undefined;
            name = '';
            if (event === '[DONE]') break reading;
            yield* chunkEvents(parseChunk(event, errorEvent, fail), calls);
          } else if (line.startsWith('data:')) {
            const field = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
            data = data === undefined ? field : `${data}\n${field}`;
          } else if (line.startsWith('event:')) name = line.slice(line.charCodeAt(6) === 32 ? 7 : 6);
          // Other fields (`id:`, `retry:`) and comments carry nothing a completion needs.
        }
        pending = pending.slice(start);
      }
      finished = true;
    } catch (err) {
      if (request.signal.aborted) throw new AbortError('the model call was cancelled');
      if (err instanceof ModelRequestError) throw err;
      throw fail(`the model endpoint's answer broke off: ${errorMessage(err)}`);
    } finally {
      if (!finished) await reader?.cancel().catch(() => {});
      detach?.();
    }
    // A fetch body may end quietly when its request is aborted mid-answer: a cut answer is no answer.
    if (request.signal.aborted) throw new AbortError('the model call was cancelled');
    yield* toolCallEvents(calls);
  }

  return {
    name: `openai:${options.model}`,
    stream,
    withModel: (model) => createOpenAIModel({ ...options, model }),
  };
}

/** One streamed chunk; an `error` event, or a chunk that is an error, fails the call mid-answer. */
function parseChunk(data: string, errorEvent: boolean, fail: (text: string) => ModelRequestError): ChatCompletionChunk {
  let chunk: ChatCompletionChunk & { error?: { message?: unknown } };
  try {
    chunk = JSON.parse(data) as typeof chunk;
  } catch {
    if (errorEvent) throw fail(`the model endpoint reported an error mid-answer: ${data.slice(0, 300)}`);
    throw fail(`the model endpoint streamed an event that is not JSON: ${data.slice(0, 120)}`);
  }
  if (chunk.error || errorEvent) {
    const detail = typeof chunk.error?.message === 'string' ? chunk.error.message : data.slice(0, 300);
    throw fail(`the model endpoint reported an error mid-answer: ${detail}`);
  }
  return chunk;
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

/** Whether a failed answer is worth another try: the endpoint's `x-should-retry` if it says, else by status. */
function shouldRetry(response: Response): boolean {
  const told = response.headers.get('x-should-retry');
  if (told === 'true') return true;
  if (told === 'false') return false;
  const { status } = response;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** How long to wait before try `attempt + 1`: the endpoint's `retry-after(-ms)` when sensible, else 0.5 s doubling, jittered. */
function backoffMs(attempt: number, headers: Headers | undefined): number {
  const afterMs = Number(headers?.get('retry-after-ms'));
  if (afterMs > 0 && afterMs <= MAX_RETRY_AFTER_MS) return afterMs;
  const after = headers?.get('retry-after');
  if (after) {
    const ms = /^\d+(\.\d+)?$/.test(after) ? Number(after) * 1000 : Date.parse(after) - Date.now();
    if (ms > 0 && ms <= MAX_RETRY_AFTER_MS) return ms;
  }
  return Math.min(500 * 2 ** attempt, MAX_RETRY_DELAY_MS) * (1 - Math.random() * 0.25);
}

/** An error answer's message: the `error.message` of its JSON, else its text, else its status text. */
async function errorDetail(response: Response): Promise<string> {
  let text = '';
  try {
    text = (await response.text()).slice(0, MAX_ERROR_BYTES);
  } catch {
    // the body broke off: the status says enough
  }
  try {
    const detail = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof detail === 'string' && detail) return detail;
  } catch {
    // not JSON: its text is the message
  }
  return text.trim().slice(0, 300) || response.statusText || 'no detail';
}

/** The API key (and anything key-shaped) masked. */
function redactKey(text: string, apiKey: string): string {
  const masked = apiKey ? text.split(apiKey).join('[REDACTED]') : text;
  return masked.replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, 'sk-[REDACTED]');
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
