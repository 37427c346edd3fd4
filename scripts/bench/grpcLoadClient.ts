/**
 * gRPC load client, run as its own process (as loadClient.ts is for HTTP):
 * C calls in flight at all times, spread over CHANNELS channels (HTTP/2
 * connections), each a `SendMessage` greeting on `lf.a2a.v1.A2AService` at
 * TARGET (`host:port`), with the SDK's own message codecs. WARMUP seconds
 * are discarded, then DURATION seconds measured. A call counts as a success
 * when it answers a completed task. Prints one JSON line: the same
 * `LoadResult` as loadClient.ts.
 *
 *   TARGET=127.0.0.1:50051 TEXT=hi C=50 CHANNELS=4 DURATION=5 WARMUP=2 node grpcLoadClient.js
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { SendMessageRequest, TaskState, type SendMessageResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { LoadResult } from './loadClient';

const target = process.env.TARGET ?? '127.0.0.1:50051';
const concurrency = Number(process.env.C ?? 50);
const channelCount = Number(process.env.CHANNELS ?? 4);
const duration = Number(process.env.DURATION ?? 5);
const warmup = Number(process.env.WARMUP ?? 2);
const text = process.env.TEXT ?? 'hi';

type SendMessage = (
  request: SendMessageRequest,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response?: SendMessageResponse) => void,
) => void;

const A2AClient = grpc.makeGenericClientConstructor(
  A2AService as unknown as grpc.ServiceDefinition,
  'A2AService',
) as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
) => grpc.Client & {
  sendMessage: SendMessage;
};
const clients = Array.from({ length: channelCount }, () => new A2AClient(target, grpc.credentials.createInsecure()));
const metadata = new grpc.Metadata();
metadata.set('a2a-version', '1.0');

function greeting(): SendMessageRequest {
  return SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } });
}

/** One call: its latency in ms, and whether it answered a completed task (or why not). */
function call(client: (typeof clients)[number]): Promise<{ ms: number; ok: boolean; why?: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    client.sendMessage(greeting(), metadata, (error, response) => {
      const ms = performance.now() - started;
      if (error) resolve({ ms, ok: false, why: `${error.code} ${error.details}` });
      else {
        const payload = response?.payload;
        const ok = payload?.$case === 'task' && payload.value.status?.state === TaskState.TASK_STATE_COMPLETED;
        resolve({ ms, ok, why: ok ? undefined : JSON.stringify(payload).slice(0, 300) });
      }
    });
  });
}

/** `concurrency` loops of calls until `seconds` have passed; every latency and outcome. */
async function drive(seconds: number) {
  const end = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  const counter = { ok: 0, failed: 0, sample: undefined as string | undefined };
  const loop = async (index: number) => {
    const client = clients[index % clients.length];
    while (performance.now() < end) {
      const outcome = await call(client);
      latencies.push(outcome.ms);
      if (outcome.ok) counter.ok++;
      else {
        counter.failed++;
        counter.sample ??= outcome.why;
      }
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
  return { latencies, counter, durationSec: (Date.now() - started) / 1000 };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]) : NaN;

async function main(): Promise<void> {
  if (warmup > 0) await drive(warmup);
  const { latencies, counter, durationSec } = await drive(duration);
  const sorted = latencies.sort((a, b) => a - b);
  const out: LoadResult = {
    ok: counter.ok,
    failed: counter.failed,
    okPerSec: Math.round(counter.ok / durationSec),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: counter.failed,
    durationSec: Math.round(durationSec * 10) / 10,
    ...(counter.sample ? { sample: counter.sample } : {}),
  };
  for (const client of clients) client.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`gRPC load client failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
