// An A2A peer built with @reactive-agents/a2a (an independent, Effect-based
// implementation of A2A v0.3), run as a child process by
// test/interop/reactiveAgents.test.ts: the package is ESM and its HTTP
// server is written for Bun (`Bun.serve`). On Node the server runs unchanged
// over `nodeBunServe`, a stand-in for the part of Bun.serve it uses (a fetch
// handler taking a WHATWG Request). The "model" is scripted: it answers
// `reactive: <text>`, fails when the text says "fail".
// Prints one JSON line {"url": ...} when it listens, then one {"seen": ...}
// line per JSON-RPC request it received. Stops on stdin EOF.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { Effect, Layer } from 'effect';
import { A2AHttpServer, A2AServerLive, createA2AHttpServer, generateAgentCard } from '@reactive-agents/a2a';

/** Bun.serve's fetch-handler contract over node:http, on 127.0.0.1. */
function nodeBunServe({ port, fetch: handler }) {
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const url = `http://${req.headers.host}${req.url}`;
    if (body.length) {
      try {
        const rpc = JSON.parse(body.toString('utf8'));
        process.stdout.write(
          `${JSON.stringify({ seen: { method: rpc.method, params: rpc.params, headers: req.headers } })}\n`,
        );
      } catch {
        // not JSON: the server answers it
      }
    }
    const request = new globalThis.Request(url, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
      body: body.length ? body : undefined,
    });
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  server.listen(port, '127.0.0.1');
  return { server, stop: () => server.close() };
}

const servers = [];
globalThis.Bun = {
  serve(options) {
    const s = nodeBunServe(options);
    servers.push(s.server);
    return s;
  },
};

const card = generateAgentCard({
  name: process.argv[2] ?? 'reactive',
  description: 'A Reactive Agents peer that echoes',
  url: 'http://127.0.0.1:0/',
  capabilities: { streaming: process.argv[3] === 'streaming' },
  skills: [{ id: 'echo', name: 'echo', description: 'Echoes text', tags: ['echo'] }],
});

const executor = (text) =>
  text.includes('fail') ? Effect.fail(new Error('the scripted model refused')) : Effect.succeed(`reactive: ${text}`);

const program = Effect.gen(function* () {
  const server = yield* A2AHttpServer;
  yield* server.start();
});
await Effect.runPromise(
  program.pipe(Effect.provide(createA2AHttpServer(0, executor).pipe(Layer.provide(A2AServerLive(card))))),
);
const server = servers[0];
await new Promise((resolve) => (server.listening ? resolve() : server.once('listening', resolve)));
const { port } = server.address();
// The card is served by reference: it names where the server really listens.
card.url = `http://127.0.0.1:${port}/`;
process.stdout.write(`${JSON.stringify({ url: card.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
