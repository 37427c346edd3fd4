/**
 * A scripted OpenAI-compatible Chat Completions server for the streaming
 * scenarios, run as its own process: every `POST /v1/chat/completions` with
 * `stream: true` waits FIRST_MS, then streams CHUNKS text deltas INTERVAL_MS
 * apart, then `finish_reason: "stop"`, the usage chunk and `[DONE]`.
 *
 * Each delta is a stamp, `[[c<seq>@<ms>]] `, where `<ms>` is this process's
 * wall clock (`performance.timeOrigin + performance.now()`, sub-millisecond)
 * taken just before the delta is written. A client on the same machine finds
 * the stamps in the events it receives and subtracts: delivery latency from the
 * model's token to the caller, through the node.
 *
 * Prints `{"ready":true,"url":...}` (url: the `/v1` base) once listening;
 * `GET /v1/stats` answers how many completions were asked for and are open.
 *   FIRST_MS=0 CHUNKS=20 INTERVAL_MS=200 node scriptedModel.js
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { wallClockMs } from './stats';

const FIRST_MS = Number(process.env.FIRST_MS ?? 0);
const CHUNKS = Number(process.env.CHUNKS ?? 20);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 200);

let requests = 0;
let open = 0;

function chunk(id: string, delta: Record<string, unknown>, finish: string | null = null): string {
  const body = {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: 'scripted',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function stream(res: http.ServerResponse): void {
  const id = `chatcmpl-${++requests}`;
  open++;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk(id, { role: 'assistant', content: '' }));
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  const finish = () => {
    open--;
    clearTimeout(timer);
  };
  res.once('close', finish);
  const next = () => {
    if (res.destroyed) return;
    if (seq < CHUNKS) {
      res.write(chunk(id, { content: `[[c${seq}@${wallClockMs().toFixed(3)}]] ` }));
      seq++;
      timer = setTimeout(next, INTERVAL_MS);
      return;
    }
    res.write(chunk(id, {}, 'stop'));
    const usage = { prompt_tokens: 10, completion_tokens: CHUNKS, total_tokens: 10 + CHUNKS };
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  timer = setTimeout(next, FIRST_MS);
}

const server = http.createServer((req, res) => {
  const body: Buffer[] = [];
  req.on('data', (c: Buffer) => body.push(c));
  req.on('end', () => {
    if (req.method === 'GET' && req.url?.endsWith('/stats')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ requests, open }));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    let streamed: boolean;
    try {
      streamed = (JSON.parse(Buffer.concat(body).toString('utf8')) as { stream?: boolean }).stream === true;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'the body is not JSON' } }));
      return;
    }
    if (!streamed) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'this scripted model only streams' } }));
      return;
    }
    stream(res);
  });
});
// Thousands of streams at once: no per-server cap on connections or their idle time.
server.maxConnections = Infinity;
server.keepAliveTimeout = 30_000;

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${port}/v1`, pid: process.pid })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
