// @reactive-agents/a2a's client (an independent, Effect-based A2A v0.3
// client) talking to a lango node, run as a child process by
// test/interop/reactiveAgents.test.ts (the package is ESM).
// Usage: node reactiveClient.mjs <baseUrl> <message>...
// Prints {"card": ...} for the discovered card, then per message
// {"message", "task"} (the task as message/send returned it) and
// {"message", "polled"} (the same task through tasks/get), or {"message", "error"}.
import { randomUUID } from 'node:crypto';
import { Effect } from 'effect';
import { A2AClient, createA2AClient, discoverAgent } from '@reactive-agents/a2a';

const [baseUrl, ...messages] = process.argv.slice(2);
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const card = await Effect.runPromise(discoverAgent(baseUrl));
print({
  card: {
    name: card.name,
    url: card.url,
    protocolVersion: card.protocolVersion,
    streaming: card.capabilities?.streaming,
  },
});

const program = Effect.gen(function* () {
  const client = yield* A2AClient;
  for (const text of messages) {
    const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
    const outcome = yield* Effect.either(client.sendMessage({ message, configuration: { blocking: true } }));
    if (outcome._tag === 'Left') {
      print({ message: text, error: { tag: outcome.left._tag, code: outcome.left.code, text: outcome.left.message } });
      continue;
    }
    const task = outcome.right;
    print({ message: text, task });
    if (task.kind === 'task') print({ message: text, polled: yield* client.getTask({ id: task.id }) });
  }
});
await Effect.runPromise(program.pipe(Effect.provide(createA2AClient({ baseUrl: card.url }))));
