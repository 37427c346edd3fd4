/**
 * The physical floor of the JSON-RPC greeting: a bare `node:http` server that
 * reads the request body, parses it as JSON-RPC, and answers a fixed completed
 * v1.0 task (the shape the node's greeting returns: the caller's message in its
 * history, one `result` artifact, TASK_STATE_COMPLETED), with fresh ids and a
 * timestamp per request. No framework, no store, no agent: what any A2A server
 * on Node pays to take a request and write an answer. Adapted from
 * ../shared/bench-anchors/src/raw-http.ts.
 *
 * Prints `{"ready":true,"url":...}` on stdout once listening; SIGUSR2 (with
 * --expose-gc) answers the memory probe.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerMemoryProbe } from './memoryStats';

const PORT = Number(process.env.PORT ?? 0);

interface Request {
  id?: unknown;
  method?: unknown;
  params?: { message?: { messageId?: string; contextId?: string; role?: string; parts?: unknown[] } };
}

function answer(request: Request): string {
  const message = request.params?.message;
  if (request.method !== 'SendMessage' || !message)
    return JSON.stringify({ jsonrpc: '2.0', id: request.id ?? null, error: { code: -32601, message: 'no' } });
  const taskId = randomUUID();
  const contextId = message.contextId ?? randomUUID();
  return JSON.stringify({
    jsonrpc: '2.0',
    id: request.id ?? null,
    result: {
      task: {
        id: taskId,
        contextId,
        status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() },
        artifacts: [{ artifactId: randomUUID(), name: 'result', parts: [{ text: 'hello' }] }],
        history: [{ ...message, taskId, contextId }],
      },
    },
  });
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.statusCode = 404;
    res.end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let request: Request;
    try {
      request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request;
    } catch {
      res.statusCode = 400;
      res.end();
      return;
    }
    const out = answer(request);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});

answerMemoryProbe();
server.listen(PORT, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${port}`, pid: process.pid })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
