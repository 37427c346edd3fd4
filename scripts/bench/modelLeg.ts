/**
 * The model leg alone, in one process: K streamed completions at once from
 * the scripted model (scriptedModel.ts, its own process on 127.0.0.1) through
 * the node's production path — `createEndpointFetch` (pinned undici agent,
 * `request`, our body relay) and `createOpenAIModel` (the `openai` package's
 * client and the node's reading of its chunks) — with a prompt and tool specs
 * the size of the node's (~15 KB of JSON). The only work in this process is
 * the leg's, so its CPU over the chunks read is the leg's cost per chunk.
 * LEG=sdk reads the same completions as the bare SDK's relay does
 * (sdkBaseline.ts MODE=relay): the `openai` client on its default fetch.
 *
 * Prints one JSON line per round, then a summary: CPU µs per text chunk (user
 * and system apart) and, with HOLD=1, what each open stream holds (heap and
 * ArrayBuffer bytes after full GCs with all K open, less the same after a
 * warm-up with none open; the model slowed to one chunk per HOLD_INTERVAL_MS).
 * SNAPSHOT=<file> also writes heap snapshots while the K streams are open
 * and, to `<file>.idle`, before (for retainers in DevTools). Run with `--expose-gc` for HOLD; add
 * `--cpu-prof` for self time by layer. AGENT='{"keepAliveTimeout":30000}' tries
 * other undici agent settings on the same path.
 *   K=200 ROUNDS=3 CHUNKS=20 INTERVAL_MS=200 node --expose-gc modelLeg.js
 *   HOLD=1 K=300 node --expose-gc modelLeg.js
 *   LEG=sdk K=200 node --expose-gc modelLeg.js
 */
import v8 from 'node:v8';
import OpenAI from 'openai';
import { createOpenAIModel } from '../../src/llm/openai';
import type { ModelRequest, ModelToolSpec } from '../../src/llm/model';
import { silentLogger } from '../../src/log/logger';
import { createEndpointFetch } from '../../src/net/endpoint';
import { createOutboundFetch, createPinnedAgent } from '../../src/net/dispatcher';
import { createOutboundPolicy } from '../../src/net/policy';
import { startServer } from './proc';

const K = Number(process.env.K ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CHUNKS = Number(process.env.CHUNKS ?? 20);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 200);
const HOLD = process.env.HOLD === '1';
const HOLD_INTERVAL_MS = Number(process.env.HOLD_INTERVAL_MS ?? 1_500);
const WARM_UP = 50;
const LEG = process.env.LEG === 'sdk' ? 'sdk' : 'node';

/**
 * A system prompt and tool specs the size of the node's orchestrator's (~15 KB
 * of request JSON), built once as the node builds them once per agent tree.
 */
const INSTRUCTION = 'You are a helpful agent. Follow the routing table and the house rules below. '.repeat(130);
const TOOLS: ModelToolSpec[] = Array.from({ length: 12 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}: does one thing for the agent and answers in a sentence or two. `.repeat(3),
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: 'what to look up' }, limit: { type: 'integer' } },
    required: ['query'],
  },
}));

/** One call's request, with its own signal as each model call in the node has. */
function benchRequest(signal: AbortSignal): ModelRequest {
  return {
    agentName: 'bench',
    instruction: INSTRUCTION,
    messages: [{ role: 'user', content: 'tell me a story' }],
    tools: TOOLS,
    signal,
  };
}

/** One side of the leg: reads one completion to its end, resolving with the text chunks seen. */
type Leg = (signal: AbortSignal, onChunk?: () => void) => Promise<number>;

/** The node's model leg: `createOpenAIModel` over the address policy's fetch (or other agent settings). */
function nodeLeg(baseURL: string): Leg {
  const model = createOpenAIModel({
    apiKey: 'bench-key',
    baseURL,
    model: 'scripted',
    logger: silentLogger,
    timeoutMs: 120_000,
    maxRetries: 0,
    fetch: process.env.AGENT
      ? agentFetch(JSON.parse(process.env.AGENT))
      : createEndpointFetch({ baseUrl: baseURL, setting: 'agent.baseUrl' }),
  });
  return async (signal, onChunk) => {
    let seen = 0;
    for await (const event of model.stream(benchRequest(signal))) {
      if (event.type === 'text_delta') {
        seen++;
        onChunk?.();
      }
    }
    return seen;
  };
}

/** The bare SDK's relay: the `openai` client on its default fetch, the same request. */
function sdkLeg(baseURL: string): Leg {
  const client = new OpenAI({ baseURL, apiKey: 'bench-key', maxRetries: 0 });
  return async (signal, onChunk) => {
    const chunks = await client.chat.completions.create(
      {
        model: 'scripted',
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: INSTRUCTION },
          { role: 'user', content: 'tell me a story' },
        ],
        tools: TOOLS.map((t) => ({
          type: 'function' as const,
          function: { name: t.name, description: t.description, parameters: t.parameters },
        })),
      },
      { signal },
    );
    let seen = 0;
    for await (const chunk of chunks) {
      if (chunk.choices[0]?.delta?.content) {
        seen++;
        onChunk?.();
      }
    }
    return seen;
  };
}

async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('HOLD needs node --expose-gc');
  // ArrayBuffer backing stores are freed after the GC that found them dead: two, apart.
  gc();
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc();
  return process.memoryUsage();
}

async function main(): Promise<void> {
  const chunks = HOLD ? 4 : CHUNKS;
  const interval = HOLD ? HOLD_INTERVAL_MS : INTERVAL_MS;
  const scripted = await startServer({
    script: 'scriptedModel.js',
    env: { FIRST_MS: '0', CHUNKS: String(chunks), INTERVAL_MS: String(interval) },
  });
  try {
    const leg = (LEG === 'sdk' ? sdkLeg : nodeLeg)(scripted.url);
    await Promise.all(Array.from({ length: WARM_UP }, () => leg(new AbortController().signal)));
    if (HOLD) await holding(leg);
    else await rounds(leg);
  } finally {
    await scripted.stop();
  }
}

/** CPU per chunk over ROUNDS rounds of K streams at once. */
async function rounds(leg: Leg): Promise<void> {
  const perChunk: Array<{ user: number; system: number }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    const seen = await Promise.all(Array.from({ length: K }, () => leg(new AbortController().signal)));
    const used = process.cpuUsage(before);
    const total = seen.reduce((a, b) => a + b, 0);
    if (total !== K * CHUNKS) throw new Error(`round ${round}: ${total} of ${K * CHUNKS} chunks read`);
    const row = { user: used.user / total, system: used.system / total };
    perChunk.push(row);
    process.stdout.write(
      `${JSON.stringify({ leg: LEG, round, streams: K, chunks: total, usPerChunk: round2(row) })}\n`,
    );
  }
  const mid = (f: (r: { user: number; system: number }) => number) =>
    perChunk.map(f).sort((a, b) => a - b)[Math.floor(perChunk.length / 2)];
  const summary = { user: mid((r) => r.user), system: mid((r) => r.system), total: mid((r) => r.user + r.system) };
  process.stdout.write(
    `${JSON.stringify({ leg: LEG, streams: K, rounds: ROUNDS, medianUsPerChunk: round2(summary) })}\n`,
  );
}

/** Heap and ArrayBuffer bytes held per open stream: K open at once, less none open. */
async function holding(leg: Leg): Promise<void> {
  const idle = await settle();
  if (process.env.SNAPSHOT) v8.writeHeapSnapshot(`${process.env.SNAPSHOT}.idle`);
  const cancels = Array.from({ length: K }, () => new AbortController());
  let reached = 0;
  let allOpen!: () => void;
  const opened = new Promise<void>((resolve) => (allOpen = resolve));
  const streams = cancels.map((cancel) => {
    let seen = 0;
    return leg(cancel.signal, () => {
      if (++seen === 1 && ++reached === K) allOpen();
    }).catch(() => 0);
  });
  await opened;
  const open = await settle();
  if (process.env.SNAPSHOT) v8.writeHeapSnapshot(process.env.SNAPSHOT);
  const kib = (bytes: number) => Math.round((bytes / K / 1024) * 10) / 10;
  process.stdout.write(
    `${JSON.stringify({
      leg: LEG,
      streams: K,
      heapPerStreamKiB: kib(open.heapUsed - idle.heapUsed),
      arrayBuffersPerStreamKiB: kib(open.arrayBuffers - idle.arrayBuffers),
      externalPerStreamKiB: kib(open.external - idle.external),
    })}\n`,
  );
  for (const cancel of cancels) cancel.abort();
  await Promise.all(streams);
}

/** The endpoint fetch with other undici agent settings (AGENT='{"pipelining":0}'), to compare pools. */
function agentFetch(agent: Record<string, unknown>): typeof fetch {
  const policy = createOutboundPolicy({ setting: 'agent.baseUrl', allowAddresses: ['127.0.0.0/8'] });
  return createOutboundFetch({ dispatcher: createPinnedAgent({ policy, agent }) });
}

function round2(row: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Math.round(v * 100) / 100]));
}

main().catch((err: unknown) => {
  process.stderr.write(`model leg failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
