import OpenAI from 'openai';
import type { Model, ModelEvent, ModelRequest, ModelToolCall } from '../../src/llm/model';
import { chunkEvents, toChatMessages, toolCallEvents } from '../../src/llm/openai';

/**
 * The same {@link Model} over the `openai` package's own streaming client:
 * the reference the node's Chat Completions client (`src/llm/openai.ts`) is
 * held to, event for event, on the same wire (test/llm/chatParity.test.ts):
 * the package sends the request and reads the server-sent events, the node's
 * `chunkEvents` says what each chunk means.
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
    // The package reads the stream; what a chunk means is the node's one reading of it.
    for await (const chunk of chunks) yield* chunkEvents(chunk, calls);
    yield* toolCallEvents(calls);
  }
  return { name: `openai-package:${options.model}`, stream };
}
