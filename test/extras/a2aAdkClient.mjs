// Google ADK-JS's RemoteA2AAgent talking to a lango node, run as a child
// process by test/a2a/adk.test.ts (ADK ships ESM that jest's CommonJS mode
// cannot load). No model is involved: the remote agent is the root agent.
// Usage: node a2aAdkClient.mjs <cardUrl> <message>...   Prints one JSON line per message.
import { InMemoryRunner } from '@google/adk';
import { RemoteA2AAgent } from '@google/adk/a2a';

const [cardUrl, ...messages] = process.argv.slice(2);
const agent = new RemoteA2AAgent({ name: 'lango_node', description: 'the lango node under test', agentCard: cardUrl });
const runner = new InMemoryRunner({ agent, appName: 'adk-test' });
const session = await runner.sessionService.createSession({ appName: 'adk-test', userId: 'tester' });
for (const text of messages) {
  const events = [];
  for await (const event of runner.runAsync({
    userId: 'tester',
    sessionId: session.id,
    newMessage: { role: 'user', parts: [{ text }] },
  })) {
    events.push({
      author: event.author,
      text: (event.content?.parts ?? []).map((p) => p.text ?? '').join(''),
      errorCode: event.errorCode,
      errorMessage: event.errorMessage,
      partial: event.partial,
      turnComplete: event.turnComplete,
      // What came over the wire, as ADK recorded it.
      kind: event.customMetadata?.['a2a:response']?.kind,
      state: event.customMetadata?.['a2a:response']?.status?.state,
      contextId: event.customMetadata?.['a2a:context_id'],
    });
  }
  process.stdout.write(`${JSON.stringify({ message: text, events })}\n`);
}
