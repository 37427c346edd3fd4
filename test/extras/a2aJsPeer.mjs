// An A2A peer built with the community package `a2a-js` (0.2.0: an express
// server of its own with the data model of its types — `type` on parts, no
// `kind`, no messageId, no contextId, no protocolVersion in the card — and
// method names `message/send`, `tasks/get`, `message/sendStream`). Run as a
// child process by test/interop/a2aJs.test.ts (the package is ESM). The
// scripted "model" answers `a2a-js: <text>`; "later" leaves the task working
// until the next tasks/get.
// Prints {"url": ...} when it listens, then {"seen": ...} per request. Stops on stdin EOF.
import { randomUUID } from 'node:crypto';
import express from 'express';
import { A2AServer, DefaultA2ARequestHandler, InMemoryTaskStore } from 'a2a-js';

const textOf = (message) => (message?.parts ?? []).map((p) => p.text ?? '').join('');

class ScriptedExecutor {
  constructor(store) {
    this.store = store;
  }
  async onMessageSend(request) {
    const text = textOf(request.params.message);
    const id = randomUUID();
    const answer = { role: 'agent', parts: [{ type: 'text', text: `a2a-js: ${text}` }] };
    const task = text.includes('later')
      ? { id, status: { state: 'working' } }
      : {
          id,
          status: { state: 'completed', message: answer },
          artifacts: [{ name: 'answer', parts: answer.parts, index: 0 }],
        };
    if (text.includes('later')) this.pending = { id, answer };
    // The package's handler stores only results carrying a `taskId`, which a task has not: the executor stores its own.
    await this.store.save(task);
    return { jsonrpc: '2.0', id: request.id, result: task };
  }
  async *onMessageStream(request) {
    yield { jsonrpc: '2.0', id: request.id, error: { code: -32004, message: 'streaming is not supported' } };
  }
  async onCancel(request) {
    return { jsonrpc: '2.0', id: request.id, error: { code: -32004, message: 'cancel is not supported' } };
  }
  async *onResubscribe(request) {
    yield { jsonrpc: '2.0', id: request.id, error: { code: -32004, message: 'resubscribe is not supported' } };
  }
}

const store = new InMemoryTaskStore();
const executor = new ScriptedExecutor(store);
const handler = new DefaultA2ARequestHandler(executor, store);
const card = {
  name: process.argv[2] ?? 'a2ajs',
  description: 'An a2a-js peer that echoes',
  url: 'http://127.0.0.1:0/',
  version: '1.0.0',
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
  capabilities: { streaming: false },
  skills: [{ id: 'echo', name: 'echo', description: 'Echoes text', tags: ['echo'], examples: ['hi'] }],
  authentication: { schemes: ['public'] },
};
// Requests are recorded (and the "later" task completes when polled, as a
// background job would) in front of the package's own app.
const app = express();
app.use(express.json({ limit: '1mb' }));
app.use((req, _res, next) => {
  const rpc = req.body ?? {};
  if (req.method === 'POST') {
    process.stdout.write(
      `${JSON.stringify({ seen: { method: rpc.method, params: rpc.params, headers: req.headers } })}\n`,
    );
    if (rpc.method === 'tasks/get' && executor.pending?.id === rpc.params?.id) {
      const { id, answer } = executor.pending;
      executor.pending = undefined;
      store.save({
        id,
        status: { state: 'completed', message: answer },
        artifacts: [{ parts: answer.parts, index: 0 }],
      });
    }
  }
  next();
});
app.use(new A2AServer(card, handler).app());
const server = app.listen(0, '127.0.0.1', () => {
  card.url = `http://127.0.0.1:${server.address().port}/`;
  process.stdout.write(`${JSON.stringify({ url: card.url })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
