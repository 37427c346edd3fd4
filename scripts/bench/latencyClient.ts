/**
 * Sequential latency client, run as its own process: N `SendMessage`
 * requests one after another (after WARMUP unmeasured ones), each timed with
 * performance.now(), so p50 is exact to a fraction of a millisecond. A
 * response counts only when its body is a completed task or a message.
 *   URL=http://127.0.0.1:4000/ N=300 WARMUP=30 TEXT=hi node latencyClient.js
 *   AUTHORIZATION='Bearer …' sends that header with every request (a node with `a2a.auth`).
 */
import { Agent, request } from 'undici';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { judgeResponse } from './judge';
import { percentile } from './stats';

const url = process.env.URL ?? 'http://127.0.0.1:4000/';
const total = Number(process.env.N ?? 300);
const warmup = Number(process.env.WARMUP ?? 30);
const text = process.env.TEXT ?? 'hi';
const dispatcher = new Agent({ connections: 1, keepAliveTimeout: 10_000 });

async function one(): Promise<{ ms: number; ok: boolean; body: string }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
  });
  const t0 = performance.now();
  const res = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      ...(process.env.AUTHORIZATION ? { authorization: process.env.AUTHORIZATION } : {}),
    },
    body,
    dispatcher,
  });
  const answer = await res.body.text();
  return { ms: performance.now() - t0, ok: judgeResponse('send', res.statusCode, answer), body: answer };
}

async function main(): Promise<void> {
  for (let i = 0; i < warmup; i++) await one();
  const times: number[] = [];
  let failed = 0;
  let sample: string | undefined;
  for (let i = 0; i < total; i++) {
    const r = await one();
    times.push(r.ms);
    if (!r.ok) {
      failed++;
      sample ??= r.body.slice(0, 300);
    }
  }
  times.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  process.stdout.write(
    `${JSON.stringify({ ok: total - failed, failed, p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), ...(sample ? { sample } : {}) })}\n`,
  );
  await dispatcher.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`latency client failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
