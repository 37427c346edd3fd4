import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult } from './loadClient';
import { BENCH_DIR, runClient, startServer, type ServerProcess, type ServerSpec } from './proc';
import { summarizeProfile, type ProfileSummary } from './profile';
import { median } from './stats';

/**
 * Where the ADK side finds @google/adk: the test extras (test/extras/package.json, `npm run test:extras`), kept
 * out of the node's install; its compiled script runs from scripts/bench/.build/scripts/bench.
 */
const ADK_MODULES = path.resolve(BENCH_DIR, '../../../../../test/extras/node_modules');

/** Tunables, from the environment so a quick run is possible (`BENCH_RUNS=1`). */
export const settings = {
  runs: Number(process.env.BENCH_RUNS ?? 3),
  durationSec: Number(process.env.BENCH_DURATION ?? 5),
  warmupSec: Number(process.env.BENCH_WARMUP ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  memoryTasks: Number(process.env.BENCH_MEMORY_TASKS ?? 100_000),
  cardTimeoutMs: Number(process.env.BENCH_CARD_TIMEOUT_MS ?? 5_000),
  profileMisses: process.env.BENCH_PROFILE !== '0',
  concurrentStreams: Number(process.env.BENCH_CONCURRENT_STREAMS ?? 2_000),
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

export function baselineSpec(env: Record<string, string> = {}, nodeArgs: string[] = []): ServerSpec {
  return { script: 'sdkBaseline.js', env: { MODE: 'task', ...env }, nodeArgs };
}

export function nodeSpec(env: Record<string, string> = {}, nodeArgs: string[] = []): ServerSpec {
  return { script: 'nodeEntry.js', env: { DATA_DIR: tempDir('lango-bench-'), ...env }, nodeArgs };
}

export async function withServer<T>(spec: ServerSpec, use: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await startServer(spec);
  try {
    return await use(server);
  } finally {
    await server.stop();
    const dataDir = spec.env?.DATA_DIR;
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One load run's client figures plus the server's CPU time per request served in the measured window. */
export interface MeasuredLoad extends LoadResult {
  /** Server process CPU (user + system) over the measured window ÷ requests answered in it, in µs. */
  cpuUsPerReq: number;
}

/**
 * Warm-up (unmeasured) then the measured window, as two client processes so
 * the server's CPU time can be read between them from /proc. `warmupSec`
 * defaults to BENCH_WARMUP.
 */
export async function load(
  server: ServerProcess,
  env: Record<string, string>,
  warmupSec = settings.warmupSec,
): Promise<MeasuredLoad> {
  const clientEnv = {
    URL: `${server.url}${env.TARGET_PATH ?? '/'}`,
    C: String(settings.connections),
    DURATION: String(settings.durationSec),
    ...env,
    WARMUP: '0',
  };
  if (warmupSec > 0 && !env.AMOUNT)
    await runClient<LoadResult>('loadClient.js', { ...clientEnv, DURATION: String(warmupSec) });
  const cpuBefore = server.cpuMs();
  const result = await runClient<LoadResult>('loadClient.js', clientEnv);
  const served = result.ok + result.failed;
  return { ...result, cpuUsPerReq: served ? ((server.cpuMs() - cpuBefore) * 1000) / served : NaN };
}

/**
 * Runs every side once per round, `settings.runs` rounds, each on a fresh
 * server, rotating which side goes first (B N, N B, B N …) so drift and
 * warm caches hit all sides alike; callers take medians.
 */
export async function alternate<K extends string, T>(sides: Record<K, () => Promise<T>>): Promise<Record<K, T[]>> {
  const names = Object.keys(sides) as K[];
  const out = Object.fromEntries(names.map((n) => [n, [] as T[]])) as Record<K, T[]>;
  for (let round = 0; round < settings.runs; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length];
      out[name].push(await sides[name]());
    }
  }
  return out;
}

/** One measured window of `durationSec` on a side's server (no warm-up of its own). */
export type Window<K extends string, T extends MeasuredLoad = MeasuredLoad> = (
  side: K,
  server: ServerProcess,
  durationSec: number,
) => Promise<T>;

/** A window of HTTP load on the server: the same load settings for every side, or each side's own. */
export function httpWindow<K extends string>(
  loadEnv: Record<string, string> | ((side: K, server: ServerProcess) => Record<string, string>),
): Window<K> {
  return (side, server, durationSec) =>
    load(
      server,
      { ...(typeof loadEnv === 'function' ? loadEnv(side, server) : loadEnv), DURATION: String(durationSec) },
      0,
    );
}

/**
 * Paired windows: every side's server started once and kept up, then `settings.runs` rounds of one measured
 * window per side, the side that goes first rotating, after one warm-up window each. Both servers stay up (the
 * machine holds the same processes throughout) and neighbouring windows share the machine's minute, so a ratio
 * taken per round (see {@link pairedRatio}) cancels most of the drift between fresh-server runs. `window` measures
 * one side's window ({@link httpWindow} for HTTP load).
 */
export async function paired<K extends string, T extends MeasuredLoad = MeasuredLoad>(
  sides: Record<K, ServerSpec>,
  window: Window<K, T>,
  rounds = settings.runs,
): Promise<Record<K, T[]>> {
  const names = Object.keys(sides) as K[];
  const servers: Partial<Record<K, ServerProcess>> = {};
  try {
    for (const name of names) servers[name] = await startServer(sides[name]);
    for (const name of names) await window(name, servers[name]!, settings.warmupSec);
    const out = Object.fromEntries(names.map((n) => [n, [] as T[]])) as Record<K, T[]>;
    for (let round = 0; round < rounds; round++)
      for (let i = 0; i < names.length; i++) {
        const name = names[(round + i) % names.length];
        out[name].push(await window(name, servers[name]!, settings.durationSec));
      }
    return out;
  } finally {
    for (const name of names) {
      await servers[name]?.stop();
      const dataDir = sides[name].env?.DATA_DIR;
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

/** The median over rounds of one side's figure ÷ another's in the same round (paired windows). */
export function pairedRatio(a: MeasuredLoad[], b: MeasuredLoad[], figure: (r: MeasuredLoad) => number): number {
  return median(a.map((r, i) => figure(r) / figure(b[i])));
}

/**
 * One extra profiled node run (`--cpu-prof`) to say where the time goes when
 * a target is missed: `run` gets the node arguments that write the profile and
 * resolves to the node's spawn → ready milliseconds, left out of the summary
 * (module loading would otherwise crowd out the request path).
 */
async function profileNode(run: (nodeArgs: string[]) => Promise<number>): Promise<ProfileSummary | undefined> {
  if (!settings.profileMisses) return undefined;
  const dir = tempDir('lango-prof-');
  const startupMs = await run(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const summary = summarizeProfile(dir, startupMs);
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

export function loadNotes(runs: Record<string, MeasuredLoad[]>): string[] {
  const line = (who: string, r: MeasuredLoad[]) =>
    `${who} runs: ${r.map((x) => `${x.okPerSec} ok/s, ${fmt(x.cpuUsPerReq)} µs CPU/req, p50 ${x.p50} p99 ${x.p99} ms (${x.ok} ok, ${x.failed} failed)`).join('; ')}`;
  const notes = Object.entries(runs).map(([who, r]) => line(who, r));
  const failed = Object.values(runs)
    .flat()
    .find((r) => r.sample);
  if (failed?.sample) notes.push(`first failed body: ${failed.sample}`);
  return notes;
}

/** Medians of one side's load runs. */
export function medians(runs: MeasuredLoad[]): { rps: number; p50: number; p99: number; cpu: number } {
  return {
    rps: median(runs.map((r) => r.okPerSec)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpu: median(runs.map((r) => r.cpuUsPerReq)),
  };
}

export const describeLoad = (m: ReturnType<typeof medians>) =>
  `${fmt(m.rps)} req/s, ${fmt(m.cpu)} µs CPU/req, p50 ${fmt(m.p50)} / p99 ${fmt(m.p99)} ms`;

async function throughput(options: {
  id: string;
  title: string;
  target: string;
  baselineEnv?: Record<string, string>;
  nodeEnv?: Record<string, string>;
  loadEnv: Record<string, string>;
  minRatio: number;
  /** One more node run with these load settings, reported as a note (not judged). */
  extraNodeRun?: { label: string; loadEnv: Record<string, string> };
}): Promise<ScenarioResult> {
  const runs = await alternate({
    baseline: () => withServer(baselineSpec(options.baselineEnv), (s) => load(s, options.loadEnv)),
    node: () => withServer(nodeSpec(options.nodeEnv), (s) => load(s, options.loadEnv)),
  });
  const b = medians(runs.baseline);
  const n = medians(runs.node);
  const failures = [...runs.node, ...runs.baseline].reduce((sum, r) => sum + r.failed, 0);
  const ratio = n.rps / b.rps;
  const met = ratio >= options.minRatio && failures === 0;
  const ratioText = `${fmt(ratio, 2)} × req/s, ${fmt(n.cpu / b.cpu, 2)} × CPU/req`;
  const result: ScenarioResult = {
    id: options.id,
    title: options.title,
    target: options.target,
    baseline: describeLoad(b),
    node: describeLoad(n),
    ratio: ratioText,
    met,
    notes: loadNotes(runs),
  };
  if (options.extraNodeRun) {
    const extra = await withServer(nodeSpec(options.nodeEnv), (s) => load(s, options.extraNodeRun!.loadEnv));
    result.notes.push(
      `${options.extraNodeRun.label}: node ${extra.okPerSec} ok/s, ${fmt(extra.cpuUsPerReq)} µs CPU/req, p50 ${extra.p50} / p99 ${extra.p99} ms (${extra.ok} ok, ${extra.failed} failed; one run, not judged)`,
    );
  }
  if (!met)
    result.profile = await profileNode((nodeArgs) =>
      withServer(nodeSpec(options.nodeEnv, nodeArgs), async (server) => {
        await load(server, options.loadEnv);
        return server.spawnToReadyMs;
      }),
    );
  return result;
}

/** The raw floor (rawFloor.ts): a bare `node:http` server answering a fixed completed task. */
export const floorSpec = (): ServerSpec => ({ script: 'rawFloor.js' });

/** The ADK-JS server of the greeting, when the test extras hold @google/adk. */
function adkGreetingSpec(): ServerSpec | undefined {
  if (!fs.existsSync(path.join(ADK_MODULES, '@google/adk'))) return undefined;
  return { script: 'adkBaseline.js', env: { NODE_PATH: ADK_MODULES } };
}

/**
 * SendMessage greeting answered by the orchestrator on the offline model, task persisted in SQLite, against three
 * sides in one run (issue 35): the bare SDK, ADK-JS's `toA2a` (v0.3, the only protocol it speaks) and the raw floor.
 * Judged on the node's CPU per request ÷ the floor's (≤ 5×) while its req/s stays ≥ 1.3× the SDK's and ≥ 2× ADK's.
 * In paired windows (every server up, windows alternated, each ratio the median of its rounds' ratios): with a
 * fresh server per side and round, the same tree read 1.02× to 1.42× the SDK from one run to the next here.
 */
export async function greeting(): Promise<ScenarioResult> {
  const loadEnv = { KIND: 'send', TEXT: 'hi' };
  const adk = adkGreetingSpec();
  const runs: Record<string, MeasuredLoad[]> = await paired<string>(
    { baseline: baselineSpec(), floor: floorSpec(), node: nodeSpec(), ...(adk ? { adk } : {}) },
    httpWindow((side, server) =>
      side === 'adk' ? { ...loadEnv, PROTOCOL: 'v03', TARGET_PATH: String(server.ready.rpcPath) } : loadEnv,
    ),
    Math.max(settings.runs, 5),
  );
  const b = medians(runs.baseline);
  const f = medians(runs.floor);
  const n = medians(runs.node);
  const a = runs.adk ? medians(runs.adk) : undefined;
  const failures = Object.values(runs)
    .flat()
    .reduce((sum, r) => sum + r.failed, 0);
  const ratio = (side: MeasuredLoad[], figure: (r: MeasuredLoad) => number) => pairedRatio(runs.node, side, figure);
  const rps = (r: MeasuredLoad) => r.okPerSec;
  const cpu = (r: MeasuredLoad) => r.cpuUsPerReq;
  const floorCpu = ratio(runs.floor, cpu);
  const sdk = ratio(runs.baseline, rps);
  const sdkP99 = ratio(runs.baseline, (r) => r.p99);
  const adkRatio = runs.adk ? ratio(runs.adk, rps) : NaN;
  const met = floorCpu <= 5 && sdk >= 1.3 && (a ? adkRatio >= 2 : true) && sdkP99 <= 1.5 && failures === 0;
  const result: ScenarioResult = {
    id: 'greeting',
    title: '`SendMessage`, greeting answered by the orchestrator (offline model), task persisted',
    target: "CPU/req ≤ 5 × the raw floor's, ≥ 1.3 × the bare SDK's req/s and ≥ 2 × ADK-JS's, p99 ≤ 1.5 × the SDK's",
    baseline: `SDK: ${describeLoad(b)}; raw floor: ${describeLoad(f)}${a ? `; ADK-JS (v0.3): ${describeLoad(a)}` : ''}`,
    node: describeLoad(n),
    ratio: `${fmt(floorCpu, 2)} × the floor's CPU/req; ${fmt(sdk, 2)} × SDK req/s (${fmt(ratio(runs.baseline, cpu), 2)} × CPU/req, ${fmt(sdkP99, 2)} × p99)${runs.adk ? `; ${fmt(adkRatio, 2)} × ADK req/s (${fmt(ratio(runs.adk, cpu), 2)} × CPU/req)` : ''}; medians of paired windows`,
    met,
    notes: [
      ...loadNotes(runs),
      'raw floor: scripts/bench/rawFloor.ts, a bare `node:http` server that parses the JSON-RPC request and answers a fixed completed task (no store, no agent)',
      ...(a ? [] : ['ADK-JS side not run: @google/adk is missing (npm run test:extras)']),
    ],
  };
  if (!met)
    result.profile = await profileNode((nodeArgs) =>
      withServer(nodeSpec({}, nodeArgs), async (server) => {
        await load(server, loadEnv);
        return server.spawnToReadyMs;
      }),
    );
  return result;
}

/** Metrics, timelines and the console switched off: what observability costs the request path. */
const OBSERVE_OFF = JSON.stringify({ observability: { metrics: false, timeline: { enabled: false }, console: false } });

/**
 * The greeting on a default node (Prometheus metrics, task timelines, the
 * console served; no OTLP endpoint, no console open) against the same node
 * with all of them off, in paired windows (both servers up, windows
 * alternated, the ratio taken per round; issue 35): what watching costs when
 * nobody looks.
 */
export async function observeOff(): Promise<ScenarioResult> {
  const runs = await paired(
    {
      'observability off': nodeSpec({ EXTRA_CONFIG: OBSERVE_OFF }),
      'default node': nodeSpec(),
    },
    httpWindow({ KIND: 'send', TEXT: 'hi' }),
    Math.max(settings.runs, 5),
  );
  const off = medians(runs['observability off']);
  const on = medians(runs['default node']);
  const failures = Object.values(runs)
    .flat()
    .reduce((sum, r) => sum + r.failed, 0);
  const rps = pairedRatio(runs['default node'], runs['observability off'], (r) => r.okPerSec);
  // CPU per request is what a user pays; req/s on a shared machine follows whoever else is running.
  const cpu = pairedRatio(runs['observability off'], runs['default node'], (r) => r.cpuUsPerReq);
  return {
    id: 'observeOff',
    title: 'greeting with metrics, timelines and console on (default, unused) vs all off, paired windows',
    target: '≥ 0.95 × the node with observability off (CPU/req, off ÷ default, median of paired windows)',
    baseline: `off: ${describeLoad(off)}`,
    node: `default: ${describeLoad(on)}`,
    ratio: `${fmt(cpu, 2)} × (off ÷ default CPU/req), ${fmt(rps, 2)} × req/s, paired medians`,
    met: cpu >= 0.95 && failures === 0,
    notes: [
      ...loadNotes(runs),
      `both servers up throughout, ${runs['default node'].length} rounds of one ${settings.durationSec} s window each, alternating which goes first; ratios are medians of each round's pair`,
    ],
  };
}

/** SendMessage delegated orchestrator → vault, which runs crypto_hash once (instant scripted model). */
export function delegated(): Promise<ScenarioResult> {
  return throughput({
    id: 'delegated',
    title:
      '`SendMessage` delegated to a specialist running one tool (instant scripted model: orchestrator → vault → `crypto_hash`)',
    target: '≥ 0.9 × baseline req/s',
    nodeEnv: { MODEL: 'instant' },
    loadEnv: { KIND: 'send', TEXT: 'hash hello' },
    minRatio: 0.9,
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
  /** Added by the parent: server CPU over the run ÷ streams. */
  cpuUsPerStream: number;
}

/** SendStreamingMessage, 200 streams at concurrency 20: time to first event. */
export async function streaming(): Promise<ScenarioResult> {
  const stream = async (s: ServerProcess): Promise<StreamResult> => {
    const cpuBefore = s.cpuMs();
    const r = await runClient<StreamResult>('streamClient.js', { URL: `${s.url}/`, N: '200', C: '20', TEXT: 'hi' });
    return { ...r, cpuUsPerStream: ((s.cpuMs() - cpuBefore) * 1000) / Math.max(1, r.ok + r.failed) };
  };
  const runs = await alternate({
    baseline: () => withServer(baselineSpec(), stream),
    node: () => withServer(nodeSpec(), stream),
  });
  const b = median(runs.baseline.map((r) => r.ttfeP50));
  const n = median(runs.node.map((r) => r.ttfeP50));
  const failures = [...runs.baseline, ...runs.node].reduce((sum, r) => sum + r.failed, 0);
  const line = (who: string, r: StreamResult[]) =>
    `${who} runs: ${r.map((x) => `first event p50 ${x.ttfeP50} / p99 ${x.ttfeP99} ms, ${x.streamsPerSec} streams/s, ${fmt(x.cpuUsPerStream)} µs CPU/stream (${x.ok} ok, ${x.failed} failed)`).join('; ')}`;
  const cpu = (r: StreamResult[]) => `${fmt(median(r.map((x) => x.cpuUsPerStream)))} µs CPU/stream`;
  const met = n <= b && failures === 0;
  const result: ScenarioResult = {
    id: 'streaming',
    title: '`SendStreamingMessage`, 200 streams, concurrency 20 (greeting)',
    target: 'first-event p50 ≤ baseline',
    baseline: `first event p50 ${fmt(b, 1)} ms, ${fmt(median(runs.baseline.map((r) => r.streamsPerSec)))} streams/s, ${cpu(runs.baseline)}`,
    node: `first event p50 ${fmt(n, 1)} ms, ${fmt(median(runs.node.map((r) => r.streamsPerSec)))} streams/s, ${cpu(runs.node)}`,
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
      const cpuBefore = s.cpuMs();
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
      const cpuMs = s.cpuMs() - cpuBefore;
      const afterAll = await s.memory();
      return {
        cpuUsPerReq: (cpuMs * 1000) / Math.max(1, first.ok + first.failed + rest.ok + rest.failed),
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
    `RSS idle ${mib(m.idle.rss)}, after 1k ${mib(m.afterFirst.rss)}, after ${total / 1000}k ${mib(m.afterAll.rss)} (heap ${mib(m.afterAll.heapUsed)}); ${fmt(m.cpuUsPerReq)} µs CPU/req`;
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
  /** Added by the parent: the answering server's CPU per request. */
  cpuUsPerReq: number;
}

/** One delegation hop: node A (instant model, transfers to remote agent `b`) → B, vs calling B directly. */
export async function hop(): Promise<ScenarioResult> {
  /** Sequential requests against `server`; its CPU time over all of them (warm-up included) ÷ their number. */
  const latency = async (server: ServerProcess, text: string): Promise<LatencyResult> => {
    const cpuBefore = server.cpuMs();
    const r = await runClient<LatencyResult>('latencyClient.js', {
      URL: `${server.url}/`,
      N: '300',
      WARMUP: '30',
      TEXT: text,
    });
    return { ...r, cpuUsPerReq: ((server.cpuMs() - cpuBefore) * 1000) / 330 };
  };
  return withServer(baselineSpec({ MODE: 'message' }), async (b) => {
    const extra = JSON.stringify({
      a2a: { remoteAgents: [{ name: 'b', agentCardUrl: `${b.url}/.well-known/agent-card.json` }] },
    });
    const direct: LatencyResult[] = [];
    const viaA: LatencyResult[] = [];
    const alone: LatencyResult[] = [];
    let remote = 0;
    for (let i = 0; i < settings.runs; i++) {
      direct.push(await latency(b, 'ask b'));
      viaA.push(
        await withServer(nodeSpec({ MODEL: 'instant', INSTANT_AGENT: 'b', EXTRA_CONFIG: extra }), async (a) => {
          remote = await remoteAgentCount(a.url);
          return latency(a, 'ask b');
        }),
      );
      alone.push(await withServer(nodeSpec(), (a) => latency(a, 'hi')));
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
      target: 'p50 overhead ≤ 3 ms over A alone + B directly',
      baseline: `B directly: p50 ${fmt(d, 2)} ms, B ${fmt(median(direct.map((r) => r.cpuUsPerReq)))} µs CPU/req`,
      node: `A → B: p50 ${fmt(a, 2)} ms (${failed} failed), A ${fmt(median(viaA.map((r) => r.cpuUsPerReq)))} µs CPU/req; A alone answering a greeting: p50 ${fmt(own, 2)} ms, ${fmt(median(alone.map((r) => r.cpuUsPerReq)))} µs CPU/req`,
      ratio: `+${fmt(a - own - d, 2)} ms (A → B minus A alone minus B directly; +${fmt(a - d, 2)} ms over B directly)`,
      met: wired ? a - own - d <= 3 && failed === 0 : undefined,
      notes: [
        `p50 per run: B directly ${direct.map((r) => r.p50).join(', ')} ms; A → B ${viaA.map((r) => r.p50).join(', ')} ms; A alone (greeting) ${alone.map((r) => r.p50).join(', ')} ms`,
        `judged on the hop itself: A's own turn (orchestrator, session and task written to SQLite) is A alone's, B's answer is B directly's`,
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

/**
 * The greeting against the second baseline, Google ADK-JS's A2A server
 * (`toA2a`, instant scripted model). ADK speaks only v0.3 JSON-RPC, so the
 * node runs twice per round: over its own v1.0 `SendMessage` (judged: the
 * greeting scenario's request) and over the same v0.3 `message/send` ADK gets.
 */
export async function adk(): Promise<ScenarioResult> {
  if (!fs.existsSync(path.join(ADK_MODULES, '@google/adk')))
    throw new Error('@google/adk is missing: npm run test:extras');
  const greetingLoad = { KIND: 'send', TEXT: 'hi' };
  const runs = await alternate({
    adk: () =>
      withServer({ script: 'adkBaseline.js', env: { NODE_PATH: ADK_MODULES } }, (s) =>
        load(s, { ...greetingLoad, PROTOCOL: 'v03', TARGET_PATH: String(s.ready.rpcPath) }),
      ),
    'node v1.0': () => withServer(nodeSpec(), (s) => load(s, greetingLoad)),
    'node v0.3': () => withServer(nodeSpec(), (s) => load(s, { ...greetingLoad, PROTOCOL: 'v03' })),
  });
  const a = medians(runs.adk);
  const n = medians(runs['node v1.0']);
  const legacy = medians(runs['node v0.3']);
  const failures = Object.values(runs)
    .flat()
    .reduce((sum, r) => sum + r.failed, 0);
  return {
    id: 'adk',
    title: 'greeting vs Google ADK-JS `toA2a` (instant scripted model, in-memory sessions and tasks)',
    target: '≥ 1.3 × ADK req/s',
    baseline: `ADK (v0.3 \`message/send\`): ${describeLoad(a)}`,
    node: `v1.0 \`SendMessage\`: ${describeLoad(n)}; v0.3 \`message/send\`: ${describeLoad(legacy)}`,
    ratio: `${fmt(n.rps / a.rps, 2)} × req/s (v1.0), ${fmt(legacy.rps / a.rps, 2)} × (v0.3); ${fmt(n.cpu / a.cpu, 2)} × CPU/req (v1.0)`,
    met: n.rps >= 1.3 * a.rps && failures === 0,
    notes: [
      ...loadNotes(runs),
      "judged on the node's v1.0 request (the greeting scenario's); ADK bundles @a2a-js/sdk 0.3 and answers only v0.3, which the node serves through the SDK's legacy adapter",
      "ADK's log level is set to ERROR: by default it logs a warning per request on stdout",
    ],
  };
}

/** The scripted streaming model (scriptedModel.ts) and a node that calls it with its Chat Completions client. */
async function withStreamingNode<T>(
  model: Record<string, string>,
  use: (node: ServerProcess, modelUrl: string) => Promise<T>,
  nodeArgs: string[] = [],
): Promise<T> {
  return withServer({ script: 'scriptedModel.js', env: model }, (m) => {
    const extra = JSON.stringify({
      agent: { provider: 'openai', baseUrl: m.url, apiKey: 'bench-key', model: 'scripted' },
    });
    return withServer(nodeSpec({ EXTRA_CONFIG: extra }, nodeArgs), (node) => use(node, m.url));
  });
}

interface ChunkRun {
  ok: number;
  failed: number;
  chunksExpected: number;
  chunksSeen: number;
  events: Record<string, number>;
  stampCarriers: Record<string, number>;
  streamedShare: number;
  firstP50: number;
  firstP99: number;
  laterP50: number;
  laterP99: number;
  allP50: number;
  allP99: number;
  maxOpen: number;
  wallMs: number;
  sample?: string;
  /** Added by the parent from /proc: the server's CPU per stream, and its RSS before and at the peak of the run. */
  cpuUsPerStream: number;
  rssBefore: number;
  rssPeak: number;
  /** Chat completions the scripted model served during the run (node side only). */
  modelCalls?: number;
}

/** How many chat completions the scripted model has served. */
async function modelCallCount(modelUrl: string): Promise<number> {
  const res = await fetch(`${modelUrl}/stats`);
  return ((await res.json()) as { requests: number }).requests;
}

/**
 * Runs chunkClient.js against `server`, reading the server's CPU time and
 * sampling its RSS while it runs; with `modelUrl`, counts the model calls too.
 */
async function chunkRun(server: ServerProcess, env: Record<string, string>, modelUrl?: string): Promise<ChunkRun> {
  const callsBefore = modelUrl ? await modelCallCount(modelUrl) : 0;
  const rssBefore = server.rssBytes();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, server.rssBytes());
    } catch {
      // the server exited: the client's result says so
    }
  }, 50);
  const cpuBefore = server.cpuMs();
  try {
    const r = await runClient<Omit<ChunkRun, 'cpuUsPerStream' | 'rssBefore' | 'rssPeak'>>('chunkClient.js', {
      URL: `${server.url}/`,
      ...env,
    });
    const cpuUsPerStream = ((server.cpuMs() - cpuBefore) * 1000) / Math.max(1, r.ok + r.failed);
    const modelCalls = modelUrl ? (await modelCallCount(modelUrl)) - callsBefore : undefined;
    return { ...r, cpuUsPerStream, rssBefore, rssPeak, ...(modelCalls === undefined ? {} : { modelCalls }) };
  } finally {
    clearInterval(sampler);
  }
}

/** Whether the stamps came one per event, as the model wrote them (not the whole answer at the end). */
const isStreamed = (r: ChunkRun) => r.streamedShare >= 0.9;

function chunkCarriers(r: ChunkRun): string {
  const events = Object.entries(r.events)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const carriers = Object.entries(r.stampCarriers)
    .map(([k, v]) => `${v} in ${k}`)
    .join(', ');
  const calls = r.modelCalls === undefined ? '' : `; ${r.modelCalls} model calls for ${r.ok + r.failed} tasks`;
  return `events ${events}; chunks first seen ${carriers || 'nowhere'}${calls}`;
}

/**
 * 2,000 streamed tasks open at once (started over one second), the model
 * streaming 20 chunks over 4 s each: the node's RSS per task in flight, every
 * chunk delivered, delivery latency per chunk. Judged against the bare SDK
 * relaying the same scripted model through the `openai` package; the SDK
 * streaming the same stamps from its executor (no model hop, no store) is
 * reported beside it.
 */
export async function concurrentStreams(): Promise<ScenarioResult> {
  const n = settings.concurrentStreams;
  const script = { CHUNKS: '20', FIRST_MS: '200', INTERVAL_MS: '200' };
  const client = { N: String(n), RAMP_MS: '1000', CHUNKS: '20' };
  const warm = { N: '50', CHUNKS: '20' };
  const runs = await alternate({
    baseline: () =>
      withServer(baselineSpec({ MODE: 'chunks', ...script }), async (s) => {
        await chunkRun(s, warm);
        return chunkRun(s, client);
      }),
    relay: () =>
      withServer({ script: 'scriptedModel.js', env: script }, (m) =>
        withServer(baselineSpec({ MODE: 'relay', MODEL_URL: m.url }), async (s) => {
          await chunkRun(s, warm, m.url);
          return chunkRun(s, client, m.url);
        }),
      ),
    node: () =>
      withStreamingNode(script, async (s, modelUrl) => {
        await chunkRun(s, warm, modelUrl);
        return chunkRun(s, client, modelUrl);
      }),
  });
  const perTask = (r: ChunkRun) => (r.rssPeak - r.rssBefore) / Math.max(1, r.maxOpen);
  const kib = (bytes: number) => `${fmt(bytes / 1024)} KiB`;
  const summary = (rs: ChunkRun[]) => {
    const delivered = rs.reduce((sum, r) => sum + r.chunksSeen, 0);
    const expected = rs.reduce((sum, r) => sum + r.chunksExpected, 0);
    return {
      perTask: median(rs.map(perTask)),
      p50: median(rs.map((r) => r.allP50)),
      p99: median(rs.map((r) => r.allP99)),
      cpu: median(rs.map((r) => r.cpuUsPerStream)),
      failed: rs.reduce((sum, r) => sum + r.failed, 0),
      delivered,
      expected,
      streamed: rs.every(isStreamed),
      open: median(rs.map((r) => r.maxOpen)),
    };
  };
  const b = summary(runs.baseline);
  const relay = summary(runs.relay);
  const s = summary(runs.node);
  // Streams open at once below 90% of n: the machine could not start them within one stream's 4 s.
  const concurrent = (x: typeof s) => x.open >= 0.9 * n;
  const describe = (x: typeof s) =>
    `${kib(x.perTask)} RSS per task in flight (${fmt(x.open)} open at most), ${x.delivered}/${x.expected} chunks delivered, delivery p50 ${fmt(x.p50, 1)} / p99 ${fmt(x.p99, 1)} ms, ${fmt(x.cpu)} µs CPU/stream${x.streamed ? '' : ' — not streamed'}`;
  const line = (who: string, rs: ChunkRun[]) =>
    `${who} runs: ${rs.map((r) => `${r.ok} ok / ${r.failed} failed, ${r.maxOpen} open at most, RSS ${mib(r.rssBefore)} → peak ${mib(r.rssPeak)} (${kib(perTask(r))}/task), delivery first chunk p50 ${r.firstP50} / p99 ${r.firstP99} ms, later p50 ${r.laterP50} / p99 ${r.laterP99} ms, ${fmt(r.cpuUsPerStream)} µs CPU/stream, ${fmt(r.wallMs / 1000, 1)} s`).join('; ')}`;
  const sample = [...runs.node, ...runs.baseline].find((r) => r.sample)?.sample;
  // Issue 35: judged as a user would choose, against the SDK relaying the same scripted model through the `openai`
  // package: per stream, CPU and RSS at most 1.0 × its; the SDK streaming its own chunks (no model) stays beside.
  const met =
    s.streamed && s.cpu <= relay.cpu && s.perTask <= relay.perTask && s.delivered === s.expected && s.failed === 0;
  const profile = met
    ? undefined
    : await profileNode((nodeArgs) =>
        withStreamingNode(
          script,
          async (node, modelUrl) => {
            await chunkRun(node, client, modelUrl);
            return node.spawnToReadyMs;
          },
          nodeArgs,
        ),
      );
  return {
    id: 'concurrentStreams',
    title: `${n.toLocaleString('en-US')} concurrent \`SendStreamingMessage\` tasks, scripted model streaming 20 chunks over 4 s (node: the openai package's client → scripted OpenAI-compatible server)`,
    target:
      'CPU per stream and RSS per task in flight ≤ 1.0 × the bare SDK relaying the same scripted model through the `openai` package, every chunk delivered',
    baseline: `the bare SDK relaying the scripted model with the real \`openai\` client: ${describe(relay)}`,
    node: describe(s),
    ratio: `${fmt(s.cpu / relay.cpu, 2)} × CPU/stream, ${fmt(s.perTask / relay.perTask, 2)} × RSS/task, ${fmt(s.open)} vs ${fmt(relay.open)} streams open at most, +${fmt(s.p99 - relay.p99, 1)} ms delivery p99 (against the SDK streaming its own chunks, no model: ${fmt(s.cpu / b.cpu, 2)} × CPU/stream, ${fmt(s.perTask / b.perTask, 2)} × RSS/task, +${fmt(s.p99 - b.p99, 1)} ms p99)`,
    met,
    ...(profile ? { profile } : {}),
    notes: [
      `the bare SDK relaying the model: an executor that publishes each text delta of the \`openai\` client as a chunk, in-memory store; the SDK streaming its own chunks (no model call): ${describe(b)}`,
      line('baseline', runs.baseline),
      line('relay', runs.relay),
      line('node', runs.node),
      `node events seen (last run): ${chunkCarriers(runs.node.at(-1)!)}`,
      "RSS per task: the server's peak RSS while the streams are open (sampled every 50 ms from /proc, no GC forced) minus its RSS after a 50-stream warm-up, ÷ the streams open at once; delivery: arrival at the client minus the stamp the model wrote into the token (one wall clock, both processes on this machine)",
      ...(s.streamed
        ? []
        : [
            "not streamed: the node sent the model's tokens together at the end of each task, not as they came, so the delivery figures are the task's length, not a relay delay",
          ]),
      ...(concurrent(s)
        ? []
        : [
            `not ${n} at once: at most ${fmt(s.open)} node streams were open together (baseline ${fmt(b.open)}); the client lets 256 requests wait for response headers at a time (a larger burst overflows the listen backlog and comes back as ECONNRESET), and the server accepted them more slowly than one stream lasts`,
          ]),
      ...(sample ? [`first failed stream: ${sample}`] : []),
    ],
  };
}

/**
 * First-chunk latency: the model waits 300 ms, then streams 10 chunks 20 ms
 * apart; when does each chunk reach a streaming client, against when the model
 * wrote it. 40 streams, 4 at a time. The SDK baseline's executor writes the
 * same stamps itself (what the SDK's own relay costs); the model leg alone
 * (modelProbe.ts: the node's model client, the openai package's, reading the scripted model, no node)
 * says how much of the node's figure is the model client's.
 */
export async function firstChunk(): Promise<ScenarioResult> {
  const script = { CHUNKS: '10', FIRST_MS: '300', INTERVAL_MS: '20' };
  const client = { N: '40', C: '4', CHUNKS: '10' };
  const warm = { N: '8', C: '4', CHUNKS: '10' };
  const runs = await alternate({
    baseline: () =>
      withServer(baselineSpec({ MODE: 'chunks', ...script }), async (s) => {
        await chunkRun(s, warm);
        return chunkRun(s, client);
      }),
    node: () =>
      withStreamingNode(script, async (s, modelUrl) => {
        await chunkRun(s, warm, modelUrl);
        return chunkRun(s, client, modelUrl);
      }),
  });
  const summary = (rs: ChunkRun[]) => ({
    first: median(rs.map((r) => r.firstP50)),
    later: median(rs.map((r) => r.laterP50)),
    cpu: median(rs.map((r) => r.cpuUsPerStream)),
    failed: rs.reduce((sum, r) => sum + r.failed, 0),
    streamed: rs.every(isStreamed),
  });
  const b = summary(runs.baseline);
  const s = summary(runs.node);
  const modelLeg: Array<{ firstP50: number; laterP50: number; failed: number }> = [];
  for (let round = 0; round < settings.runs; round++)
    modelLeg.push(
      await withServer({ script: 'scriptedModel.js', env: script }, (m) =>
        runClient('modelProbe.js', { BASE_URL: m.url, ...client }),
      ),
    );
  const describe = (x: typeof b) =>
    `first chunk +${fmt(x.first, 2)} ms p50, later chunks +${fmt(x.later, 2)} ms p50, ${fmt(x.cpu)} µs CPU/stream`;
  const line = (who: string, rs: ChunkRun[]) =>
    `${who} runs: ${rs.map((r) => `first +${r.firstP50} / p99 +${r.firstP99} ms, later +${r.laterP50} / p99 +${r.laterP99} ms, ${r.chunksSeen}/${r.chunksExpected} chunks, ${r.ok} ok / ${r.failed} failed, ${fmt(r.cpuUsPerStream)} µs CPU/stream`).join('; ')}`;
  const sample = [...runs.node, ...runs.baseline].find((r) => r.sample)?.sample;
  const met = s.streamed && s.first <= 5 && s.later <= 2 && s.failed === 0;
  const profile = met
    ? undefined
    : await profileNode((nodeArgs) =>
        withStreamingNode(
          script,
          async (node, modelUrl) => {
            await chunkRun(node, client, modelUrl);
            return node.spawnToReadyMs;
          },
          nodeArgs,
        ),
      );
  return {
    id: 'firstChunk',
    title:
      'first answer chunk: scripted streaming model waits 300 ms, then 10 chunks 20 ms apart; 40 streams, 4 at a time',
    target: "first chunk ≤ +5 ms p50 after the model's first token, each later chunk ≤ +2 ms p50",
    baseline: `SDK executor writing the chunks itself: ${describe(b)}; the model leg alone (the node's model client over the openai package, no node): first +${fmt(median(modelLeg.map((r) => r.firstP50)), 2)} ms, later +${fmt(median(modelLeg.map((r) => r.laterP50)), 2)} ms p50`,
    node: s.streamed
      ? describe(s)
      : `not streamed: the answer arrives whole at the end (first chunk +${fmt(s.first)} ms p50), ${fmt(s.cpu)} µs CPU/stream`,
    ratio: s.streamed
      ? `+${fmt(s.first - b.first, 2)} ms / +${fmt(s.later - b.later, 2)} ms over the SDK's own relay`
      : 'n/a',
    met,
    ...(profile ? { profile } : {}),
    notes: [
      line('baseline', runs.baseline),
      line('node', runs.node),
      `model leg alone runs: ${modelLeg.map((r) => `first +${r.firstP50} / later +${r.laterP50} ms p50 (${r.failed} failed)`).join('; ')}`,
      `node events seen (last run): ${chunkCarriers(runs.node.at(-1)!)}`,
      ...(sample ? [`first failed stream: ${sample}`] : []),
    ],
  };
}
