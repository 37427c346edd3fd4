// The Vercel AI SDK (`ai`) with a2a-ai-provider talking to a lango node:
// an A2A agent used as if it were a language model. Run as a child process
// by test/interop/aiSdk.test.ts (both packages are ESM).
// Usage: node aiSdkClient.mjs <cardUrl> <generate|stream> <message>...
// Prints one line per message: {"message", "text", "finishReason", "deltas"?}
// (all turns share one contextId, as the provider's README recommends).
import { randomUUID } from 'node:crypto';
import { a2a } from 'a2a-ai-provider';
import { generateText, streamText } from 'ai';

const [cardUrl, mode, ...messages] = process.argv.slice(2);
const contextId = randomUUID();
for (const prompt of messages) {
  const options = { model: a2a(cardUrl), prompt, providerOptions: { a2a: { contextId } } };
  if (mode === 'stream') {
    const deltas = [];
    const result = streamText({ ...options, onError: ({ error }) => deltas.push({ error: String(error) }) });
    for await (const delta of result.textStream) deltas.push(delta);
    const line = { message: prompt, text: await result.text, finishReason: await result.finishReason, deltas };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } else {
    const result = await generateText(options);
    process.stdout.write(
      `${JSON.stringify({ message: prompt, text: result.text, finishReason: result.finishReason })}\n`,
    );
  }
}
