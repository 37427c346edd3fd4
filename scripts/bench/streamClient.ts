/**
 * Streaming client, run as its own process (adapted from
 * ../shared/bench-anchors/src/stream-bench.ts): N `SendStreamingMessage`
 * streams over undici with concurrency C; time to first SSE event and total
 * stream time per stream. A stream counts as ok only when it is an event
 * stream whose last event is a completed task. Prints one JSON line.
 *   URL=http://127.0.0.1:4000/ N=200 C=20 TEXT=hi node streamClient.js
 */
import { Agent, request } from 'undici';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { percentile } from './stats';

const url = process.env.URL ?? 'http://127.0.0.1:4000/';
const total = Number(process.env.N ?? 200);
const concurrency = Number(process.env.C ?? 20);
const text = process.env.TEXT ?? 'hi';
const dispatcher = new Agent({ connections: concurrency, pipelining: 1, keepAliveTimeout: 10_000 });
const headers = { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0' };

interface StreamRun {
  ttfe: number;
  total: number;
  events: number;
  ok: boolean;
}

async function one(i: number): Promise<StreamRun> {
  const t0 = performance.now();
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: i,
    method: 'SendStreamingMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
  });
  const res = await request(url, { method: 'POST', headers, body, dispatcher });
  let ttfe = -1;
  let events = 0;
  let buf = '';
  let last = '';
  for await (const chunk of res.body) {
    buf += (chunk as Buffer).toString('utf8');
    let idx: number;
    while ((idx = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      if (event.startsWith('data:')) {
        events++;
        last = event;
        if (ttfe < 0) ttfe = performance.now() - t0;
      }
    }
  }
  const ok =
    res.statusCode === 200 &&
    String(res.headers['content-type']).startsWith('text/event-stream') &&
    last.includes('TASK_STATE_COMPLETED');
  return { ttfe, total: performance.now() - t0, events, ok };
}

async function main(): Promise<void> {
  const results: StreamRun[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) results.push(await one(i));
    }),
  );
  const wall = performance.now() - t0;
  const ttfe = results.map((r) => r.ttfe).sort((a, b) => a - b);
  const times = results.map((r) => r.total).sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  const out = {
    ok: results.filter((r) => r.ok).length,
    failed: results.filter((r) => !r.ok).length,
    streamsPerSec: round((total / wall) * 1000),
    ttfeP50: round(percentile(ttfe, 50)),
    ttfeP99: round(percentile(ttfe, 99)),
    totalP50: round(percentile(times, 50)),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  await dispatcher.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`stream client failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
