// The community package `a2a-js` (0.2.0) as a client of a lango node, run
// as a child process by test/interop/a2aJs.test.ts (the package is ESM). Its
// client speaks the method names of A2A before 0.2 for sending (`tasks/send`)
// and the current ones for reading and cancelling (`tasks/get`, `tasks/cancel`).
// Usage: node a2aJsClient.mjs <baseUrl> <taskId>
// Prints {"card"}, {"send"} (result or error) and {"get"} (result or error).
import { A2ACardResolver, A2AClient } from 'a2a-js';

const [baseUrl, taskId] = process.argv.slice(2);
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const attempt = async (call) => {
  try {
    return { result: await call() };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
};

const card = await new A2ACardResolver(baseUrl).getAgentCard();
print({ card: { name: card.name, url: card.url } });
const client = new A2AClient(card.url);
print({
  send: await attempt(() =>
    client.sendTask({ id: 'a2ajs-task', message: { role: 'user', parts: [{ type: 'text', text: 'hello' }] } }),
  ),
});
print({ get: await attempt(() => client.getTask({ id: taskId })) });
