/**
 * The model leg alone, run as its own process: N chat completions streamed
 * from the scripted model (scriptedModel.ts) through the node's model client
 * (`createOpenAIModel` over `createEndpointFetch`), C at a time, each stamp's
 * arrival at the client minus the stamp. What is left of the node's
 * first-chunk latency after this is the node's own relay.
 * Prints one JSON line: `{ ok, failed, firstP50, firstP99, laterP50, laterP99 }`.
 *   BASE_URL=http://127.0.0.1:5000/v1 N=40 C=4 CHUNKS=10 node modelProbe.js
 */
import { createOpenAIModel } from '../../src/llm/openai';
import { silentLogger } from '../../src/log/logger';
import { createEndpointFetch } from '../../src/net/endpoint';
import { percentile, wallClockMs } from './stats';

const baseURL = process.env.BASE_URL ?? 'http://127.0.0.1:5000/v1';
const total = Number(process.env.N ?? 40);
const concurrency = Number(process.env.C ?? 4);
const chunks = Number(process.env.CHUNKS ?? 10);
const model = createOpenAIModel({
  apiKey: 'bench-key',
  baseURL,
  model: 'scripted',
  logger: silentLogger,
  timeoutMs: 120_000,
  maxRetries: 0,
  fetch: createEndpointFetch({ baseUrl: baseURL, setting: 'agent.baseUrl' }),
});
const STAMP = /\[\[c(\d+)@(\d+(?:\.\d+)?)\]\]/g;

async function one(first: number[], later: number[]): Promise<boolean> {
  const events = model.stream({
    agentName: 'bench',
    instruction: 'You tell stories.',
    messages: [{ role: 'user', content: 'tell me a story' }],
    tools: [],
    signal: new AbortController().signal,
  });
  let seen = 0;
  for await (const event of events) {
    if (event.type !== 'text_delta') continue;
    const arrived = wallClockMs();
    for (const m of event.delta.matchAll(STAMP)) {
      (m[1] === '0' ? first : later).push(arrived - Number(m[2]));
      seen++;
    }
  }
  return seen === chunks;
}

async function main(): Promise<void> {
  const first: number[] = [];
  const later: number[] = [];
  let ok = 0;
  let failed = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        if (await one(first, later).catch(() => false)) ok++;
        else failed++;
      }
    }),
  );
  first.sort((a, b) => a - b);
  later.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  const out = {
    ok,
    failed,
    firstP50: round(percentile(first, 50)),
    firstP99: round(percentile(first, 99)),
    laterP50: round(percentile(later, 50)),
    laterP99: round(percentile(later, 99)),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`model probe failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
