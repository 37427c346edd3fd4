import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult } from './loadClient';
import { runClient, startServer, type ServerProcess, type ServerSpec } from './proc';
import { summarizeProfile, type ProfileSummary } from './profile';
import { median } from './stats';

/** Tunables, from the environment so a quick run is possible (`BENCH_RUNS=1`). */
export const settings = {
  runs: Number(process.env.BENCH_RUNS ?? 3),
  durationSec: Number(process.env.BENCH_DURATION ?? 5),
  warmupSec: Number(process.env.BENCH_WARMUP ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  memoryTasks: Number(process.env.BENCH_MEMORY_TASKS ?? 100_000),
  cardTimeoutMs: Number(process.env.BENCH_CARD_TIMEOUT_MS ?? 5_000),
  profileMisses: process.env.BENCH_PROFILE !== '0',
};

/** One scenario's outcome, as docs/benchmarks.md shows it. */
export interface ScenarioResult {
  id: string;
  title: string;
  target: string;
  baseline: string;
  node: string;
  ratio: string;
  /** undefined: not measured (see note). */
  met: boolean | undefined;
  /** Per-run figures and remarks. */
  notes: string[];
  profile?: ProfileSummary;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${Math.round(bytes / MIB)} MiB`;
const signed = (bytes: number) => `${bytes < 0 ? '−' : '+'}${mib(Math.abs(bytes))}`;
const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function baselineSpec(env: Record<string, string> = {}, nodeArgs: string[] = []): ServerSpec {
  return { script: 'sdkBaseline.js', env: { MODE: 'task', ...env }, nodeArgs };
}

function nodeSpec(env: Record<string, string> = {}, nodeArgs: string[] = []): ServerSpec {
  return { script: 'nodeEntry.js', env: { DATA_DIR: tempDir('lango-bench-'), ...env }, nodeArgs };
}

async function withServer<T>(spec: ServerSpec, use: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await startServer(spec);
  try {
    return await use(server);
  } finally {
    await server.stop();
    const dataDir = spec.env?.DATA_DIR;
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function load(server: ServerProcess, env: Record<string, string>): Promise<LoadResult> {
  return runClient<LoadResult>('loadClient.js', {
    URL: `${server.url}${env.TARGET_PATH ?? '/'}`,
    C: String(settings.connections),
    DURATION: String(settings.durationSec),
    WARMUP: String(settings.warmupSec),
    ...env,
  });
}

/** Alternates baseline and node runs (B N B N …) on fresh servers so drift hits both alike. */
async function alternate<T>(baseline: () => Promise<T>, node: () => Promise<T>): Promise<{ baseline: T[]; node: T[] }> {
  const out = { baseline: [] as T[], node: [] as T[] };
  for (let i = 0; i < settings.runs; i++) {
    out.baseline.push(await baseline());
    out.node.push(await node());
  }
  return out;
}

/** One extra profiled node run (`--cpu-prof`) to say where the time goes when a target is missed. */
async function profileNode(spec: ServerSpec, loadEnv: Record<string, string>): Promise<ProfileSummary | undefined> {
  if (!settings.profileMisses) return undefined;
  const dir = tempDir('lango-prof-');
  await withServer({ ...spec, nodeArgs: [...(spec.nodeArgs ?? []), '--cpu-prof', `--cpu-prof-dir=${dir}`] }, (server) =>
    load(server, loadEnv),
  );
  const summary = summarizeProfile(dir);
  if (summary) {
    const keep = path.resolve('scripts/bench/.build/profiles');
    fs.mkdirSync(keep, { recursive: true });
    const target = path.join(keep, path.basename(summary.file));
    fs.copyFileSync(summary.file, target);
    summary.file = path.relative(process.cwd(), target);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return summary;
}

function loadNotes(runs: { baseline: LoadResult[]; node: LoadResult[] }): string[] {
  const line = (who: string, r: LoadResult[]) =>
    `${who} runs: ${r.map((x) => `${x.okPerSec} ok/s p50 ${x.p50} p99 ${x.p99} ms (${x.ok} ok, ${x.failed} failed)`).join('; ')}`;
  const notes = [line('baseline', runs.baseline), line('node', runs.node)];
  const failed = [...runs.baseline, ...runs.node].find((r) => r.sample);
  if (failed?.sample) notes.push(`first failed body: ${failed.sample}`);
  return notes;
}

async function throughput(options: {
  id: string;
  title: string;
  target: string;
  baselineEnv?: Record<string, string>;
  nodeEnv?: Record<string, string>;
  loadEnv: Record<string, string>;
  minRatio: number;
  maxP99Ratio?: number;
  /** One more node run with these load settings, reported as a note (not judged). */
  extraNodeRun?: { label: string; loadEnv: Record<string, string> };
}): Promise<ScenarioResult> {
  const runs = await alternate(
    () => withServer(baselineSpec(options.baselineEnv), (s) => load(s, options.loadEnv)),
    () => withServer(nodeSpec(options.nodeEnv), (s) => load(s, options.loadEnv)),
  );
  const b = {
    rps: median(runs.baseline.map((r) => r.okPerSec)),
    p99: median(runs.baseline.map((r) => r.p99)),
    p50: median(runs.baseline.map((r) => r.p50)),
  };
  const n = {
    rps: median(runs.node.map((r) => r.okPerSec)),
    p99: median(runs.node.map((r) => r.p99)),
    p50: median(runs.node.map((r) => r.p50)),
  };
  const failures = [...runs.node, ...runs.baseline].reduce((sum, r) => sum + r.failed, 0);
  const ratio = n.rps / b.rps;
  const p99Ratio = n.p99 / b.p99;
  let met = ratio >= options.minRatio && failures === 0;
  let ratioText = `${fmt(ratio, 2)} × req/s`;
  if (options.maxP99Ratio !== undefined) {
    met = met && p99Ratio <= options.maxP99Ratio;
    ratioText += `, ${fmt(p99Ratio, 2)} × p99`;
  }
  const result: ScenarioResult = {
    id: options.id,
    title: options.title,
    target: options.target,
    baseline: `${fmt(b.rps)} req/s, p50 ${fmt(b.p50)} / p99 ${fmt(b.p99)} ms`,
    node: `${fmt(n.rps)} req/s, p50 ${fmt(n.p50)} / p99 ${fmt(n.p99)} ms`,
    ratio: ratioText,
    met,
    notes: loadNotes(runs),
  };
  if (options.extraNodeRun) {
    const extra = await withServer(nodeSpec(options.nodeEnv), (s) => load(s, options.extraNodeRun!.loadEnv));
    result.notes.push(
      `${options.extraNodeRun.label}: node ${extra.okPerSec} ok/s, p50 ${extra.p50} / p99 ${extra.p99} ms (${extra.ok} ok, ${extra.failed} failed; one run, not judged)`,
    );
  }
  if (!met) result.profile = await profileNode(nodeSpec(options.nodeEnv), options.loadEnv);
  return result;
}

/** SendMessage greeting answered by the orchestrator on the offline model, task persisted in SQLite. */
export function greeting(): Promise<ScenarioResult> {
  return throughput({
    id: 'greeting',
    title: '`SendMessage`, greeting answered by the orchestrator (offline model), task persisted',
    target: '≥ 0.8 × baseline req/s, p99 ≤ 1.5 ×',
    loadEnv: { KIND: 'send', TEXT: 'hi' },
    minRatio: 0.8,
    maxP99Ratio: 1.5,
  });
}

/** SendMessage delegated orchestrator → vault, which runs crypto_hash once (instant scripted model). */
export function delegated(): Promise<ScenarioResult> {
  return throughput({
    id: 'delegated',
    title:
      '`SendMessage` delegated to a specialist running one tool (instant scripted model: orchestrator → vault → `crypto_hash`)',
    target: '≥ 0.5 × baseline req/s',
    nodeEnv: { MODEL: 'instant' },
    loadEnv: { KIND: 'send', TEXT: 'hash hello' },
    minRatio: 0.5,
  });
}

/** Agent card GET, node vs the SDK's agentCardHandler. */
export function card(): Promise<ScenarioResult> {
  return throughput({
    id: 'card',
    title: 'agent card GET (`/.well-known/agent-card.json`, `A2A-Version: 1.0`)',
    target: '≥ 1.0 × the SDK card handler',
    loadEnv: { KIND: 'card', TARGET_PATH: '/.well-known/agent-card.json' },
    minRatio: 1.0,
    extraNodeRun: {
      label: 'same GET without A2A-Version (a v0.3 client: the card goes through the SDK legacyAgentCardRouter)',
      loadEnv: { KIND: 'card', TARGET_PATH: '/.well-known/agent-card.json', A2A_VERSION: '' },
    },
  });
}

interface StreamResult {
  ok: number;
  failed: number;
  streamsPerSec: number;
  ttfeP50: number;
  ttfeP99: number;
}

/** SendStreamingMessage, 200 streams at concurrency 20: time to first event. */
export async function streaming(): Promise<ScenarioResult> {
  const stream = (s: ServerProcess) =>
    runClient<StreamResult>('streamClient.js', { URL: `${s.url}/`, N: '200', C: '20', TEXT: 'hi' });
  const runs = await alternate(
    () => withServer(baselineSpec(), stream),
    () => withServer(nodeSpec(), stream),
  );
  const b = median(runs.baseline.map((r) => r.ttfeP50));
  const n = median(runs.node.map((r) => r.ttfeP50));
  const failures = [...runs.baseline, ...runs.node].reduce((sum, r) => sum + r.failed, 0);
  const line = (who: string, r: StreamResult[]) =>
    `${who} runs: ${r.map((x) => `first event p50 ${x.ttfeP50} / p99 ${x.ttfeP99} ms, ${x.streamsPerSec} streams/s (${x.ok} ok, ${x.failed} failed)`).join('; ')}`;
  const met = n <= b && failures === 0;
  const result: ScenarioResult = {
    id: 'streaming',
    title: '`SendStreamingMessage`, 200 streams, concurrency 20 (greeting)',
    target: 'first-event p50 ≤ baseline',
    baseline: `first event p50 ${fmt(b, 1)} ms, ${fmt(median(runs.baseline.map((r) => r.streamsPerSec)))} streams/s`,
    node: `first event p50 ${fmt(n, 1)} ms, ${fmt(median(runs.node.map((r) => r.streamsPerSec)))} streams/s`,
    ratio: `${fmt(n / b, 2)} × first-event p50`,
    met,
    notes: [line('baseline', runs.baseline), line('node', runs.node)],
  };
  return result;
}

/** RSS after GC after 1k tasks and after `memoryTasks` tasks, node and baseline, one run each. */
export async function memory(): Promise<ScenarioResult> {
  const total = settings.memoryTasks;
  const measure = (spec: ServerSpec) =>
    withServer({ ...spec, nodeArgs: ['--expose-gc'] }, async (s) => {
      const idle = await s.memory();
      const first = await runClient<LoadResult>('loadClient.js', {
        URL: `${s.url}/`,
        KIND: 'send',
        TEXT: 'hi',
        C: '50',
        AMOUNT: '1000',
      });
      const afterFirst = await s.memory();
      const rest = await runClient<LoadResult>(
        'loadClient.js',
        { URL: `${s.url}/`, KIND: 'send', TEXT: 'hi', C: '50', AMOUNT: String(total - 1000) },
        1_800_000,
      );
      const afterAll = await s.memory();
      return {
        idle,
        afterFirst,
        afterAll,
        ok: first.ok + rest.ok,
        failed: first.failed + rest.failed,
        seconds: first.durationSec + rest.durationSec,
      };
    });
  const baseline = await measure(baselineSpec());
  const node = await measure(nodeSpec());
  const growth = node.afterAll.rss - node.afterFirst.rss;
  const baseGrowth = baseline.afterAll.rss - baseline.afterFirst.rss;
  const describe = (m: typeof node) =>
    `RSS idle ${mib(m.idle.rss)}, after 1k ${mib(m.afterFirst.rss)}, after ${total / 1000}k ${mib(m.afterAll.rss)} (heap ${mib(m.afterAll.heapUsed)})`;
  return {
    id: 'memory',
    title: `memory after ${total.toLocaleString('en-US')} tasks (greetings, c=50), RSS after full GC`,
    target: 'RSS within +64 MiB of the node after 1k tasks',
    baseline: describe(baseline),
    node: describe(node),
    ratio: `node ${signed(growth)} vs baseline ${signed(baseGrowth)}`,
    met: growth <= 64 * MIB && node.failed === 0,
    notes: [
      `one run each (100k tasks take minutes); baseline ${baseline.ok} ok / ${baseline.failed} failed in ${fmt(baseline.seconds)} s, node ${node.ok} ok / ${node.failed} failed in ${fmt(node.seconds)} s`,
    ],
  };
}

/** The remote agents `GET /agents` lists as healthy (skipped and open peers are listed too, with their state). */
async function remoteAgentCount(url: string): Promise<number> {
  const res = await fetch(`${url}/agents`);
  const doc = (await res.json()) as { agents?: Array<{ kind: string; health?: { state?: string } }> };
  return (doc.agents ?? []).filter((a) => a.kind === 'remote' && a.health?.state === 'healthy').length;
}

/** Start-up with 50 remote peers: 35 good, 10 refusing connections, 5 never answering. */
export async function startup(): Promise<ScenarioResult> {
  const timeout = settings.cardTimeoutMs;
  return withServer({ script: 'peerFarm.js', env: { GOOD: '35', SILENT: '5', REFUSING: '10' } }, async (farm) => {
    const urls = [
      ...(farm.ready.good as string[]),
      ...(farm.ready.refusing as string[]),
      ...(farm.ready.silent as string[]),
    ];
    const remoteAgents = urls.map((base, i) => ({
      name: `peer${i}`,
      agentCardUrl: `${base}/.well-known/agent-card.json`,
    }));
    const extra = JSON.stringify({ a2a: { remoteAgents, cardFetchTimeoutMs: timeout } });
    const plain: ServerProcess[] = [];
    const peered: Array<{ startupMs: number; spawnMs: number; remote: number }> = [];
    for (let i = 0; i < settings.runs; i++) {
      plain.push(await withServer(nodeSpec(), async (s) => s));
      peered.push(
        await withServer(nodeSpec({ EXTRA_CONFIG: extra }), async (s) => ({
          startupMs: s.startupMs ?? NaN,
          spawnMs: s.spawnToReadyMs,
          remote: await remoteAgentCount(s.url),
        })),
      );
    }
    const spawnMs = median(peered.map((p) => p.spawnMs));
    const createMs = median(peered.map((p) => p.startupMs));
    const plainSpawn = median(plain.map((p) => p.spawnToReadyMs));
    const plainCreate = median(plain.map((p) => p.startupMs ?? NaN));
    const remote = median(peered.map((p) => p.remote));
    const wired = remote > 0;
    return {
      id: 'startup',
      title: 'start-up with 50 remote peers (35 good, 10 refusing connections, 5 never answering)',
      target: `≤ 1.2 × one card-fetch timeout (${timeout} ms → ${1.2 * timeout} ms)`,
      baseline: `one card-fetch timeout: ${timeout} ms; the node without peers: createApp → listening ${fmt(plainCreate)} ms (spawn → listening ${fmt(plainSpawn)} ms)`,
      node: `createApp → listening ${fmt(createMs)} ms (spawn → listening ${fmt(spawnMs)} ms), ${remote} healthy remote agents (35 expected)`,
      ratio: `${fmt(createMs / timeout, 2)} × timeout`,
      met: wired ? createMs <= 1.2 * timeout && remote === 35 : undefined,
      notes: [
        'judged on createApp → listening, measured inside the node process (it includes loading all 50 peers);',
        'spawn → listening adds Node start-up and module loading, which do not depend on peers (see the node without peers)',
        `runs: ${peered.map((p) => `createApp → listening ${fmt(p.startupMs)} ms, spawn → listening ${fmt(p.spawnMs)} ms`).join('; ')}`,
        ...(wired
          ? []
          : [
              'not measured: the node listed no remote agents — federation (`a2a.remoteAgents`) is not wired into createApp',
            ]),
      ],
    };
  });
}

interface LatencyResult {
  ok: number;
  failed: number;
  p50: number;
  p99: number;
  sample?: string;
}

/** One delegation hop: node A (instant model, transfers to remote agent `b`) → B, vs calling B directly. */
export async function hop(): Promise<ScenarioResult> {
  const latency = (url: string, text: string) =>
    runClient<LatencyResult>('latencyClient.js', { URL: `${url}/`, N: '300', WARMUP: '30', TEXT: text });
  return withServer(baselineSpec({ MODE: 'message' }), async (b) => {
    const extra = JSON.stringify({
      a2a: { remoteAgents: [{ name: 'b', agentCardUrl: `${b.url}/.well-known/agent-card.json` }] },
    });
    const direct: LatencyResult[] = [];
    const viaA: LatencyResult[] = [];
    const alone: LatencyResult[] = [];
    let remote = 0;
    for (let i = 0; i < settings.runs; i++) {
      direct.push(await latency(b.url, 'ask b'));
      viaA.push(
        await withServer(nodeSpec({ MODEL: 'instant', INSTANT_AGENT: 'b', EXTRA_CONFIG: extra }), async (a) => {
          remote = await remoteAgentCount(a.url);
          return latency(a.url, 'ask b');
        }),
      );
      alone.push(await withServer(nodeSpec(), (a) => latency(a.url, 'hi')));
    }
    const d = median(direct.map((r) => r.p50));
    const a = median(viaA.map((r) => r.p50));
    const own = median(alone.map((r) => r.p50));
    const failed = viaA.reduce((sum, r) => sum + r.failed, 0);
    const wired = remote > 0;
    const failedSample = viaA.find((r) => r.sample)?.sample;
    return {
      id: 'hop',
      title: 'one delegation hop node A → B (B = bare SDK agent answering a Message), sequential requests',
      target: 'p50 overhead ≤ 5 ms',
      baseline: `B directly: p50 ${fmt(d, 2)} ms`,
      node: `A → B: p50 ${fmt(a, 2)} ms (${failed} failed); A alone answering a greeting: p50 ${fmt(own, 2)} ms`,
      ratio: `+${fmt(a - d, 2)} ms`,
      met: wired ? a - d <= 5 && failed === 0 : undefined,
      notes: [
        `p50 per run: B directly ${direct.map((r) => r.p50).join(', ')} ms; A → B ${viaA.map((r) => r.p50).join(', ')} ms; A alone (greeting) ${alone.map((r) => r.p50).join(', ')} ms`,
        `the overhead includes A's own turn (orchestrator, session and task written to SQLite): A → B minus A alone minus B directly ≈ ${fmt(a - own - d, 2)} ms is the hop itself`,
        ...(failedSample ? [`first failed body via A: ${failedSample}`] : []),
        ...(wired
          ? []
          : [
              'not measured: node A listed no remote agent — federation (`a2a.remoteAgents`) is not wired into createApp',
            ]),
      ],
    };
  });
}
