/**
 * CPU per streamed chunk on the node's own path, without the machine's
 * noise in the figure: the node runs in THIS process (`createApp`, its
 * Chat Completions client), the scripted model (scriptedModel.js) and the stream
 * client (chunkClient.js) each in their own, so `process.cpuUsage()` here is
 * the node's alone, user and system apart. Each round runs K streams twice,
 * once with CHUNKS chunks and once with none, and the difference ÷ (K ×
 * CHUNKS) is one chunk's cost, the per-stream cost (request, task, model
 * call, settle) taken out. With PROFILE=1 the chunked half of the last round
 * is sampled by V8's profiler (`node:inspector`) and its self time is shown
 * by layer (the file a function is in).
 *   npm run -s build && tsc -p scripts/bench/tsconfig.json
 *   K=200 CHUNKS=20 ROUNDS=3 PROFILE=1 node scripts/bench/.build/scripts/bench/chunkPath.js
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHook } from 'node:async_hooks';
import { Session, type Profiler } from 'node:inspector';
import { createApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { runClient, startServer } from './proc';

const K = Number(process.env.K ?? 200);
const CHUNKS = Number(process.env.CHUNKS ?? 20);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PROFILE = process.env.PROFILE === '1';
/** Counts the async resources the node makes (a promise hook: slower, so CPU figures of such a run mean little). */
const COUNT = process.env.COUNT === '1';

const made = new Map<string, number>();
/** With COUNT=stacks, promises by the code that made them (the first frames of its stack). */
const makers = new Map<string, number>();
if (COUNT)
  createHook({
    init: (_id, type) => {
      made.set(type, (made.get(type) ?? 0) + 1);
      if (process.env.COUNT_STACKS === '1' && type === 'PROMISE') {
        const frames = (new Error().stack ?? '').split('\n').slice(3, 6);
        const where = frames
          .map((f) =>
            f
              .trim()
              .replace(/^at /, '')
              .replace(/\(.*\/(node_modules|src)\//, '($1/'),
          )
          .join(' ← ');
        makers.set(where, (makers.get(where) ?? 0) + 1);
      }
    },
  }).enable();

interface Half {
  /** Async resources made (promises, timers, socket requests) by type, when COUNT=1. */
  made: Map<string, number>;
  userUs: number;
  systemUs: number;
  ok: number;
  failed: number;
  chunksSeen: number;
}

/** Runs K streams of `chunks` chunks against the node, the scripted model answering; the node's CPU over it. */
async function half(nodeUrl: string, chunks: number): Promise<Half> {
  made.clear();
  makers.clear();
  const before = process.cpuUsage();
  const r = await runClient<{ ok: number; failed: number; chunksSeen: number }>('chunkClient.js', {
    URL: `${nodeUrl}/`,
    N: String(K),
    CHUNKS: String(chunks),
    RAMP_MS: '200',
  });
  const used = process.cpuUsage(before);
  return {
    made: new Map(made),
    userUs: used.user,
    systemUs: used.system,
    ok: r.ok,
    failed: r.failed,
    chunksSeen: r.chunksSeen,
  };
}

/** Layers a profiled function is counted under, by the file it is in (first match wins). */
const LAYERS: Array<[string, RegExp]> = [
  ['openai (SSE decoder, stream)', /node_modules\/openai\//],
  ['undici (HTTP client)', /node_modules\/undici\//],
  ['@a2a-js/sdk', /node_modules\/@a2a-js\//],
  ['other packages', /node_modules\//],
  ['src/net (body relay, dispatcher)', /\/src\/net\//],
  ['src/llm (Chat Completions client)', /\/src\/llm\//],
  ['src/agent/modelCall', /\/src\/agent\/modelCall/],
  ['src/agent/runner', /\/src\/agent\/runner/],
  ['src/agent (other)', /\/src\/agent\//],
  ['src/a2a/executor', /\/src\/a2a\/tasks\/executor/],
  ['src/a2a/answerArtifact', /\/src\/a2a\/tasks\/answerArtifact/],
  ['src/a2a/liveTasks', /\/src\/a2a\/tasks\/(liveTasks|taskSubscription)/],
  [
    'src/a2a inbound (chain, bindings, event stream)',
    /\/src\/a2a\/(inbound|httpCall|requestBody|jsonRpcBinding|restBinding|eventStream)/,
  ],
  ['src/a2a/taskHandler', /\/src\/a2a\/tasks\/taskHandler/],
  ['src/a2a (other)', /\/src\/a2a\//],
  ['src/observe + src/log', /\/src\/(observe|log)\//],
  ['src/store', /\/src\/store\//],
  ['src (other)', /\/src\//],
  ['node: web streams', /node:internal\/webstreams/],
  ['node: streams', /node:internal\/streams/],
  ['node: http', /node:_http|node:internal\/http/],
  ['node: net / stream_base', /node:net|node:internal\/stream_base|node:internal\/net/],
  ['node: timers / microtasks / async hooks', /node:internal\/(timers|process\/task_queues|async_hooks)|node:timers/],
  ['node: other', /^node:/],
];

/** Self time by layer and by function of one profile, in µs; natives (writev, JSON, GC) by their own name. */
function selfTimes(profile: Profiler.Profile): { layers: Map<string, number>; functions: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const selfUs = new Map<number, number>();
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < (profile.samples ?? []).length; i++) {
    const id = profile.samples![i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i + 1] ?? 0));
  }
  const out = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const url = frame.url;
    const name = url
      ? (LAYERS.find(([, re]) => re.test(url))?.[0] ?? 'unattributed')
      : `native: ${frame.functionName || '(anonymous)'}`;
    out.set(name, (out.get(name) ?? 0) + us);
    // A native is named with its caller (`writev` under what).
    const caller = url ? undefined : byId.get(parentOf.get(id) ?? -1)?.callFrame;
    const where =
      `${frame.functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${frame.lineNumber + 1}` +
      (caller
        ? ` ← ${caller.functionName || '(anonymous)'} ${caller.url.replace(/^.*\/(node_modules|src)\//, '$1/')}`
        : '');
    functions.set(where, (functions.get(where) ?? 0) + us);
  }
  return { layers: out, functions };
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-chunkpath-'));
  const model = await startServer({
    script: 'scriptedModel.js',
    env: { CHUNKS: String(CHUNKS), FIRST_MS: '20', INTERVAL_MS: String(INTERVAL_MS) },
  });
  const none = await startServer({ script: 'scriptedModel.js', env: { CHUNKS: '0', FIRST_MS: '20' } });
  const config = (modelUrl: string, name: string) =>
    resolveConfig({
      server: { host: '127.0.0.1', port: 0 },
      dataDir: path.join(dataDir, name),
      logLevel: 'warn',
      tools: { browser: { enabled: false } },
      agent: { provider: 'openai', baseUrl: modelUrl, apiKey: 'bench-key', model: 'scripted' },
    });
  // Two nodes, one per model: the chunked and the chunkless half run the same node code.
  const chunked = await createApp(config(model.url, 'chunked'));
  const chunkless = await createApp(config(none.url, 'chunkless'));
  const chunkedUrl = await chunked.listen();
  const chunklessUrl = await chunkless.listen();
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
  /** Runs `work`, sampled by V8's profiler when `on`. */
  const profiled = async <T>(
    on: boolean,
    work: () => Promise<T>,
  ): Promise<{ result: T; profile?: Profiler.Profile }> => {
    if (!on) return { result: await work() };
    await post(session, 'Profiler.start');
    const result = await work();
    const { profile } = (await post(session, 'Profiler.stop')) as { profile: Profiler.Profile };
    return { result, profile };
  };
  try {
    await half(chunkedUrl, CHUNKS); // warm-up
    await half(chunklessUrl, 0);
    const perChunk: Array<{ user: number; system: number }> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const profiling = PROFILE && round === ROUNDS;
      const zero = await profiled(profiling, () => half(chunklessUrl, 0));
      const full = await profiled(profiling, () => half(chunkedUrl, CHUNKS));
      const chunks = K * CHUNKS;
      const user = (full.result.userUs - zero.result.userUs) / chunks;
      const system = (full.result.systemUs - zero.result.systemUs) / chunks;
      perChunk.push({ user, system });
      const f = full.result;
      process.stdout.write(
        `round ${round}: ${f.ok}/${K} ok (${f.failed} failed, ${f.chunksSeen}/${chunks} chunks); ` +
          `per stream with ${CHUNKS} chunks ${us((f.userUs + f.systemUs) / K)} µs ` +
          `(user ${us(f.userUs / K)}, system ${us(f.systemUs / K)}), with none ${us((zero.result.userUs + zero.result.systemUs) / K)} µs; ` +
          `per chunk ${us(user + system)} µs (user ${us(user)}, system ${us(system)}); load ${os.loadavg()[0]!.toFixed(2)}\n`,
      );
      if (full.profile && zero.profile) report(full.profile, zero.profile, chunks);
      if (COUNT) {
        const types = [...new Set([...full.result.made.keys(), ...zero.result.made.keys()])];
        const perChunkMade = types
          .map((t) => [t, ((full.result.made.get(t) ?? 0) - (zero.result.made.get(t) ?? 0)) / chunks] as const)
          .filter(([, n]) => Math.abs(n) >= 0.05)
          .map(([t, n]) => `${t} ${n.toFixed(2)}`);
        process.stdout.write(`  async resources made per chunk: ${perChunkMade.join(', ')}\n`);
        for (const [where, n] of [...makers].sort((a, b) => b[1] - a[1]).slice(0, 40))
          process.stdout.write(`  ${(n / chunks).toFixed(2).padStart(6)}  ${where}\n`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(
      `median per chunk: ${us(median(perChunk.map((c) => c.user + c.system)))} µs ` +
        `(user ${us(median(perChunk.map((c) => c.user)))}, system ${us(median(perChunk.map((c) => c.system)))})\n`,
    );
  } finally {
    session.disconnect();
    await chunked.close();
    await chunkless.close();
    await model.stop();
    await none.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Prints self time by layer (and the costliest functions) of the chunked
 * half minus the chunkless half, per chunk: what the chunks themselves cost.
 */
function report(full: Profiler.Profile, zero: Profiler.Profile, chunks: number): void {
  const a = selfTimes(full);
  const b = selfTimes(zero);
  const diff = (x: Map<string, number>, y: Map<string, number>) =>
    [...new Set([...x.keys(), ...y.keys()])]
      .filter((k) => !k.includes('(idle)'))
      .map((k) => [k, ((x.get(k) ?? 0) - (y.get(k) ?? 0)) / chunks] as const)
      .sort((p, q) => q[1] - p[1]);
  const byLayer = diff(a.layers, b.layers);
  const total = byLayer.reduce((sum, [, v]) => sum + v, 0);
  process.stdout.write(`profile, chunked − chunkless half, self time per chunk (total ${us(total)} µs):\n`);
  for (const [name, v] of byLayer)
    if (Math.abs(v) >= 0.5) process.stdout.write(`  ${name.padEnd(44)} ${us(v).padStart(6)} µs\n`);
  process.stdout.write('costliest functions per chunk:\n');
  for (const [name, v] of diff(a.functions, b.functions).slice(0, Number(process.env.TOP ?? 30)))
    process.stdout.write(`  ${us(v).padStart(6)} µs  ${name}\n`);
}

function us(x: number): string {
  return x.toFixed(1);
}

function post(session: Session, method: string, params?: object): Promise<unknown> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`chunkPath failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
