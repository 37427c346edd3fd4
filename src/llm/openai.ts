import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
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
  /** Per-request timeout. */
  timeoutMs: number;
  /** Retries of connection errors, 408/409/429 and 5xx (the `openai` client's default is 2). */
  maxRetries?: number;
  /** The `fetch` the client uses: the composition root passes the outbound address policy's (src/net/endpoint.ts). */
  fetch?: typeof fetch;
}

/**
 * A {@link Model} over the `openai` package's Chat Completions API with
 * streaming: tools offered as functions, streamed tool-call fragments joined
 * into whole calls, text streamed as it arrives, usage reported at the end.
 * @example
 * const model = createOpenAIModel({ apiKey, baseURL: 'http://127.0.0.1:8080/v1', model: 'gpt-4o-mini', logger, timeoutMs: 120_000 });
 */
export function createOpenAIModel(options: OpenAIModelOptions): Model {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries ?? 2,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const logger = options.logger.child({ component: 'llm', provider: 'openai', model: options.model });
  const endpoint = options.baseURL ?? 'https://api.openai.com/v1';

  async function* stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
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
        { signal: request.signal },
      );
      for await (const chunk of chunks) {
        if (chunk.usage) {
          yield { type: 'usage', inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
        }
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (delta.content) yield { type: 'text_delta', delta: delta.content };
        // Tool calls arrive in fragments keyed by index: the first carries id and name, later ones more argument text.
        for (const part of delta.tool_calls ?? []) {
          const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
          if (part.id) call.id = part.id;
          if (part.function?.name) call.name += part.function.name;
          if (part.function?.arguments) call.arguments += part.function.arguments;
          calls.set(part.index, call);
        }
      }
    } catch (err) {
      if (request.signal.aborted) throw new AbortError('the model call was cancelled');
      const message = describeError(err, endpoint, options.apiKey);
      logger.warn('model request failed', { error: message });
      throw new ModelRequestError(message);
    }
    // The `openai` stream ends quietly when its request is aborted mid-answer: a cut answer is no answer.
    if (request.signal.aborted) throw new AbortError('the model call was cancelled');
    const ordered = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
    for (const call of ordered) {
      if (!call.name) throw new ModelRequestError('the model streamed a tool call without a function name');
      yield { type: 'tool_call', call };
    }
  }

  return { name: `openai:${options.model}`, stream };
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

/** A readable one-line reason for a failed request, with the API key (and anything key-shaped) masked. */
function describeError(err: unknown, endpoint: string, apiKey: string): string {
  let text: string;
  if (err instanceof OpenAI.APIConnectionTimeoutError) text = `the model endpoint ${endpoint} did not answer in time`;
  else if (err instanceof OpenAI.APIConnectionError)
    text = `cannot reach the model endpoint ${endpoint}: ${causeOf(err)}`;
  else if (err instanceof OpenAI.APIError && err.status !== undefined) {
    const detail = (err.error as { message?: unknown } | undefined)?.message;
    text = `the model endpoint answered HTTP ${err.status}: ${typeof detail === 'string' && detail ? detail : err.message}`;
  } else text = errorMessage(err);
  if (apiKey) text = text.split(apiKey).join('[REDACTED]');
  return text.replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, 'sk-[REDACTED]');
}

function causeOf(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : err.message;
}
