import OpenAI from 'openai';
import type { Model, ModelEvent, ModelRequest, ModelToolCall } from '../../src/llm/model';
import { toChatMessages } from '../../src/llm/openai';

/**
 * The same {@link Model} over the `openai` package's own streaming client:
 * the reference the node's Chat Completions client (`src/llm/openai.ts`) is
 * held to, event for event, on the same wire (test/llm/chatParity.test.ts).
 */
export function createOpenAIPackageModel(options: { apiKey: string; baseURL: string; model: string }): Model {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL, maxRetries: 0 });
  async function* stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const calls = new Map<number, ModelToolCall>();
    const chunks = await client.chat.completions.create(
      {
        model: options.model,
        stream: true,
        stream_options: { include_usage: true },
        messages: toChatMessages(request),
        ...(request.tools.length
          ? {
              tools: request.tools.map((t) => ({
                type: 'function' as const,
                function: { name: t.name, description: t.description, parameters: t.parameters },
              })),
            }
          : {}),
      },
      { signal: request.signal },
    );
    for await (const chunk of chunks) {
      if (chunk.usage)
        yield { type: 'usage', inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) yield { type: 'text_delta', delta: delta.content };
      for (const part of delta.tool_calls ?? []) {
        let call = calls.get(part.index);
        if (!call) calls.set(part.index, (call = { id: '', name: '', arguments: '' }));
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
    for (const [index, call] of [...calls.entries()].sort(([a], [b]) => a - b))
      yield { type: 'tool_call', call: { ...call, id: call.id || `call_${index}` } };
  }
  return { name: `openai-package:${options.model}`, stream };
}
