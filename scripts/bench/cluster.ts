/**
 * The cluster scenarios of issue 16, on a throwaway PostgreSQL (Debian's
 * postgresql package, as the tests use) and Debian's haproxy:
 * `npm run bench -- pgGreeting cluster replicaLoss cronLateness cancelPropagation resubscribeElsewhere
 * resubscribeLongAnswer`. Replicas are
 * bench node entries (the offline model) sharing one `storage.url`, a 3 s
 * lease and a 1 s heartbeat, each with its own data folder.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { StreamResponse } from '@a2a-js/sdk';
import { a2aClient, partsText, textRequest } from '../../test/support/a2aClient';
import { clusterUnavailable, freePort, offlineToolResult, startBalancer } from '../../test/support/cluster';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../../test/support/postgres';
import { processEnded, processesWith } from '../../test/support/processes';
import { waitFor } from '../../test/support/waitFor';
import {
  parentPid,
  processCpuMs,
  processThreadStats,
  processTreeCpuMs,
  startServer,
  type ServerProcess,
  type ThreadStats,
} from './proc';
import {
  alternate,
  baselineSpec,
  describeLoad,
  httpWindow,
  load,
  loadNotes,
  medians,
  nodeSpec,
  paired,
  pairedRatio,
  settings,
  type MeasuredLoad,
  type ScenarioResult,
} from './scenarios';
import { median, percentile } from './stats';

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 1_000;
/** One vault key for every replica of a run, as `lango config check` requires of a cluster. */
const MASTER_KEY = randomBytes(32).toString('hex');
const GREETING = { KIND: 'send', TEXT: 'hi' };
/**
 * The cluster comparison's warm-up per replica and measured window, longer
 * than the other scenarios' (BENCH_WARMUP, BENCH_DURATION): a replica of
 * three serves a third of the requests, so after the usual 2 s its compiler
 * threads were still busy in the window (754 µs per request on other threads
 * against 429 for one replica at 2 s; 231 against 84 at 10 s). Operators run
 * replicas for hours: the steady state is what this compares.
 */
const CLUSTER_WARMUP_SEC = Math.max(settings.warmupSec, 8);
const CLUSTER_WINDOW = { ...GREETING, DURATION: String(Math.max(settings.durationSec, 10)) };
/** How long the cron lateness scenario lets its every-2-seconds job run. */
const CRON_WINDOW_MS = 20_000;
const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/**
 * A replica's environment for the bench node entry: the shared database, its
 * id, the short lease (and `extra` configuration, e.g. a model).
 */
function replicaEnv(
  databaseUrl: string,
  replicaId: string,
  port?: number,
  extra: Record<string, unknown> = {},
): Record<string, string> {
  return {
    EXTRA_CONFIG: JSON.stringify({
      ...extra,
      storage: { url: databaseUrl },
      cluster: { replicaId, heartbeatInterval: `${HEARTBEAT_MS / 1000}s`, lease: `${LEASE_MS / 1000}s` },
      security: { masterKey: MASTER_KEY },
    }),
    ...(port ? { PORT: String(port) } : {}),
  };
}

/** Runs `use` with a throwaway PostgreSQL server, refusing with the reason on a machine without one. */
export async function withPostgres<T>(
  unavailable: string | undefined,
  use: (pg: TestPostgres) => Promise<T>,
  serverSettings?: Record<string, string>,
): Promise<T> {
  if (unavailable) throw new Error(unavailable);
  const pg = await startTestPostgres({ settings: serverSettings });
  try {
    return await use(pg);
  } finally {
    await pg.stop();
  }
}

/** Runs `use` with a fresh database on `pg`, dropped afterwards. */
export async function withDatabase<T>(pg: TestPostgres, use: (url: string) => Promise<T>): Promise<T> {
  const url = await pg.createDatabase();
  try {
    return await use(url);
  } finally {
    await pg.dropDatabase(url);
  }
}

/** Runs `use` with one connection to `url`. */
async function withClient<T>(url: string, use: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}

/** Starts a bench replica on the shared database; its `stop` also removes its data folder. */
export async function startReplica(
  databaseUrl: string,
  replicaId: string,
  port?: number,
  extra?: Record<string, unknown>,
): Promise<ServerProcess> {
  const spec = nodeSpec(replicaEnv(databaseUrl, replicaId, port, extra));
  const server = await startServer(spec);
  return {
    ...server,
    stop: async () => {
      await server.stop();
      fs.rmSync(spec.env!.DATA_DIR, { recursive: true, force: true });
    },
  };
}

/**
 * One measured load through haproxy in front of `count` replicas, with
 * haproxy's CPU per request beside the replicas', and the replicas' split:
 * event loop, other threads (GC, compiler, libuv) and preemptions, per request.
 */
interface BalancedLoad extends MeasuredLoad {
  /** The machine's 1-minute load average just before the measured window. */
  loadAverage: number;
  haproxyCpuUsPerReq: number;
  mainUsPerReq: number;
  otherThreadsUsPerReq: number;
  preemptionsPerReq: number;
  /** What the database did per request in the window (pg_stat_database, pg_stat_statements). */
  db: DatabaseTally;
  /** Each replica's own counters over the window (its /metrics), one line each. */
  replicas: string[];
  /** What the idle replicas cost the database after the window: transactions a second, and what they were. */
  idle: { transactionsPerSec: number; top: string };
}

/** The database's side of a measured window, per request. */
interface DatabaseTally {
  /** Committed transactions; PostgreSQL counts each statement outside BEGIN … COMMIT as one. */
  transactionsPerReq: number;
  /** Statements other than BEGIN and COMMIT. */
  statementsPerReq: number;
  notifiesPerReq: number;
  /** The PostgreSQL server's CPU (its backends and background processes, same cores), µs. */
  serverCpuUsPerReq: number;
  /** The most frequent statements: calls per request and the statement's first words. */
  top: Array<{ perReq: number; query: string }>;
}

/** The counters {@link DatabaseTally} is the difference of. */
interface DatabaseCounters {
  transactions: number;
  calls: Map<string, number>;
  /** CPU ms of each server process (backends and background workers) by pid. */
  cpuMs: Map<number, number>;
}

/** The store counters a replica's /metrics shows, summed over their series. */
interface ReplicaCounters {
  requests: number;
  groupCommits: number;
  statements: number;
  notifications: number;
}

/** Scrapes one replica's /metrics (the bench node is loopback without auth: its owner may look). */
async function replicaCounters(url: string): Promise<ReplicaCounters> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (series: RegExp) =>
    text
      .split('\n')
      .filter((line) => series.test(line))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return {
    requests: sum(/^lango_a2a_requests_total\{[^}]*method="SendMessage"/),
    groupCommits: sum(/^lango_store_write_duration_seconds_count\b/),
    statements: sum(/^lango_store_write_statements_total\b/),
    notifications: sum(/^lango_store_notifications_total\b/),
  };
}

/** Per replica over the window: its share of the requests, and its group commits, statements and notifications per request it served. */
function replicaTally(before: ReplicaCounters, after: ReplicaCounters): string {
  const requests = after.requests - before.requests;
  const per = (key: keyof ReplicaCounters) => fmt((after[key] - before[key]) / requests, 2);
  return `${requests} req: ${per('groupCommits')} commits, ${per('statements')} statements, ${per('notifications')} notifications`;
}

/** Reads this database's committed transactions and each statement's calls so far. */
async function databaseCounters(db: Client): Promise<DatabaseCounters> {
  const [{ rows: xact }, { rows: statements }] = [
    await db.query<{ n: string }>(
      `SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`,
    ),
    await db.query<{ query: string; calls: string }>(
      `SELECT query, calls::text FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    ),
  ];
  const calls = new Map<string, number>();
  for (const { query, calls: n } of statements) calls.set(query, (calls.get(query) ?? 0) + Number(n));
  const { rows: pids } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity');
  const cpuMs = new Map<number, number>();
  for (const { pid } of pids) {
    try {
      cpuMs.set(pid, processCpuMs(pid));
    } catch {
      // A backend that ended between the query and the read.
    }
  }
  return { transactions: Number(xact[0].n), calls, cpuMs };
}

function databaseTally(before: DatabaseCounters, after: DatabaseCounters, requests: number): DatabaseTally {
  const perQuery = [...after.calls].map(([query, n]) => ({ query, n: n - (before.calls.get(query) ?? 0) }));
  const counted = perQuery.filter(({ query }) => !/^(BEGIN|COMMIT)\b/i.test(query) && !query.includes('pg_stat_'));
  const sum = (xs: Array<{ n: number }>) => xs.reduce((total, x) => total + x.n, 0);
  // Processes alive at both ends of the window (the pools keep their connections through it).
  const serverCpuMs = [...after.cpuMs].reduce((total, [pid, ms]) => total + ms - (before.cpuMs.get(pid) ?? ms), 0);
  return {
    serverCpuUsPerReq: (serverCpuMs * 1000) / requests,
    transactionsPerReq: (after.transactions - before.transactions) / requests,
    statementsPerReq: sum(counted) / requests,
    notifiesPerReq: sum(counted.filter(({ query }) => query.includes('pg_notify'))) / requests,
    top: counted
      .filter(({ n }) => n > 0)
      .sort((a, b) => b.n - a.n)
      .slice(0, 8)
      .map(({ query, n }) => ({ perReq: n / requests, query: query.replace(/\s+/g, ' ').slice(0, 60) })),
  };
}

/** How long the replicas are left idle after the window, to count what they cost while nobody asks. */
const IDLE_WINDOW_MS = 5_000;

/** Counts the database's transactions and statements while the replicas idle for {@link IDLE_WINDOW_MS}. */
async function idleTally(db: Client): Promise<BalancedLoad['idle']> {
  const before = await databaseCounters(db);
  await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
  const after = await databaseCounters(db);
  const seconds = IDLE_WINDOW_MS / 1000;
  // Per second instead of per request: the tally's "per request" divides by what it is given.
  const tally = databaseTally(before, after, seconds);
  return {
    transactionsPerSec: tally.transactionsPerReq,
    top: tally.top.map(({ perReq, query }) => `${fmt(perReq, 1)}/s \`${query}\``).join(', '),
  };
}

async function balancedLoad(pg: TestPostgres, count: number): Promise<BalancedLoad> {
  return withDatabase(pg, async (databaseUrl) => {
    await withClient(databaseUrl, (db) => db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-bench-haproxy-'));
    const replicas: ServerProcess[] = [];
    try {
      const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
      // One at a time: replicas starting together only take turns at the migration lock.
      for (let i = 0; i < count; i++) replicas.push(await startReplica(databaseUrl, `bench-${i}`, ports[i]));
      const balancer = await startBalancer(dir, ports);
      try {
        // `load` reads cpuMs() right before and right after the measured window: haproxy's CPU is sampled then too.
        const haproxyMs: number[] = [];
        const threads: ThreadStats[] = [];
        const front: ServerProcess = {
          ...replicas[0],
          url: balancer.url,
          cpuMs: () => {
            haproxyMs.push(processCpuMs(balancer.pid));
            threads.push(
              replicas
                .map((r) => processThreadStats(r.pid))
                .reduce((a, b) => ({
                  mainMs: a.mainMs + b.mainMs,
                  otherMs: a.otherMs + b.otherMs,
                  preempted: a.preempted + b.preempted,
                })),
            );
            return replicas.reduce((sum, r) => sum + r.cpuMs(), 0);
          },
        };
        // Each replica compiles its own hot paths: each is warmed up on its own, directly, as long as the lone
        // replica is (the others idle meanwhile), so each reaches about the lone replica's JIT state before the window.
        for (const replica of replicas)
          await load({ ...replica, cpuMs: () => 0 }, { ...GREETING, DURATION: String(CLUSTER_WARMUP_SEC) }, 0);
        const scrape = () => Promise.all(replicas.map((r) => replicaCounters(r.url)));
        let loadAverage = NaN;
        const { result, before, after, scrapedBefore, scrapedAfter, idle } = await withClient(
          databaseUrl,
          async (stats) => {
            const [before, scrapedBefore] = [await databaseCounters(stats), await scrape()];
            loadAverage = os.loadavg()[0];
            const result = await load(front, CLUSTER_WINDOW, 0);
            const [after, scrapedAfter] = [await databaseCounters(stats), await scrape()];
            return { result, before, after, scrapedBefore, scrapedAfter, idle: await idleTally(stats) };
          },
        );
        const served = result.ok + result.failed;
        const perReq = (before: number, after: number, scale = 1000) =>
          served ? ((after - before) * scale) / served : NaN;
        return {
          ...result,
          loadAverage,
          haproxyCpuUsPerReq: perReq(haproxyMs[0], haproxyMs[1]),
          mainUsPerReq: perReq(threads[0].mainMs, threads[1].mainMs),
          otherThreadsUsPerReq: perReq(threads[0].otherMs, threads[1].otherMs),
          preemptionsPerReq: perReq(threads[0].preempted, threads[1].preempted, 1),
          db: databaseTally(before, after, served),
          replicas: scrapedBefore.map((counters, i) => replicaTally(counters, scrapedAfter[i])),
          idle,
        };
      } finally {
        await balancer.stop();
      }
    } finally {
      for (const replica of replicas) await replica.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * The same greeting load through the same haproxy in front of `count` bare-SDK
 * baselines (in-memory task store, no database): what `count` Node processes
 * on this machine's cores do to an A2A server that shares nothing, measured
 * beside the node's replicas.
 */
async function balancedBaselineLoad(count: number): Promise<MeasuredLoad> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-bench-haproxy-'));
  const servers: ServerProcess[] = [];
  try {
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    for (const port of ports) servers.push(await startServer(baselineSpec({ PORT: String(port), READYZ: '1' })));
    const balancer = await startBalancer(dir, ports);
    try {
      // Warmed as the node's replicas are: each on its own, directly, for the same time.
      for (const server of servers)
        await load({ ...server, cpuMs: () => 0 }, { ...GREETING, DURATION: String(CLUSTER_WARMUP_SEC) }, 0);
      const front = { ...servers[0], url: balancer.url, cpuMs: () => servers.reduce((sum, s) => sum + s.cpuMs(), 0) };
      return await load(front, CLUSTER_WINDOW, 0);
    } finally {
      await balancer.stop();
    }
  } finally {
    for (const server of servers) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The pid of the PostgreSQL server `url` is on: the parent of a backend serving it. */
async function postmasterPid(url: string): Promise<number> {
  return withClient(url, async (db) => {
    const { pid } = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0];
    // Read while the backend lives: its parent is the postmaster.
    return parentPid(pid);
  });
}

/** A greeting window, and in PostgreSQL mode the PostgreSQL server's CPU per request (same cores, not the node's). */
type PgGreetingLoad = MeasuredLoad & { databaseCpuUsPerReq?: number };

/**
 * SendMessage greeting on one replica in PostgreSQL mode against the same
 * node in SQLite mode, in paired windows (both servers up, each ratio the
 * median of its rounds' ratios), with the PostgreSQL server's own CPU per
 * send beside the node's: the two modes share the machine's cores with it.
 */
export async function pgGreeting(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (url) => {
      const postmaster = await postmasterPid(url);
      const greetingWindow = httpWindow<'sqlite' | 'postgres'>(GREETING);
      const runs = await paired<'sqlite' | 'postgres', PgGreetingLoad>(
        { sqlite: nodeSpec(), postgres: nodeSpec(replicaEnv(url, 'bench-0')) },
        async (side, server, durationSec) => {
          if (side === 'sqlite') return greetingWindow(side, server, durationSec);
          const before = processTreeCpuMs(postmaster);
          const result = await greetingWindow(side, server, durationSec);
          const served = result.ok + result.failed;
          return { ...result, databaseCpuUsPerReq: ((processTreeCpuMs(postmaster) - before) * 1000) / served };
        },
        Math.max(settings.runs, 5),
      );
      const sqlite = medians(runs.sqlite);
      const postgres = medians(runs.postgres);
      const databaseCpu = median(runs.postgres.map((r) => r.databaseCpuUsPerReq!));
      const failures = [...runs.sqlite, ...runs.postgres].reduce((sum, r) => sum + r.failed, 0);
      const ratio = pairedRatio(runs.postgres, runs.sqlite, (r) => r.okPerSec);
      return {
        id: 'pgGreeting',
        title: '`SendMessage` greeting (offline model) on one replica in PostgreSQL mode vs SQLite mode',
        target: '≥ 0.8 × SQLite mode req/s (issue 36; 0.7 × in issue 16)',
        baseline: `SQLite mode: ${describeLoad(sqlite)}`,
        node: `PostgreSQL mode: ${describeLoad(postgres)}`,
        ratio: `${fmt(ratio, 2)} × req/s, ${fmt(
          pairedRatio(runs.postgres, runs.sqlite, (r) => r.cpuUsPerReq),
          2,
        )} × CPU/req, medians of paired windows`,
        met: ratio >= 0.8 && failures === 0,
        notes: [
          ...loadNotes(runs),
          `CPU/req is the node process only. PostgreSQL's own CPU (every process of the server, fsync off as in the tests, on the same cores): ${fmt(databaseCpu)} µs per send, so a send costs the machine ${fmt(postgres.cpu + databaseCpu)} µs in PostgreSQL mode against ${fmt(sqlite.cpu)} µs in SQLite mode (${fmt((postgres.cpu + databaseCpu) / sqlite.cpu, 2)} ×)`,
          `both servers up throughout, ${runs.sqlite.length} rounds of one ${settings.durationSec} s window each, the side going first rotating; ratios are medians of each round's pair`,
        ],
      };
    }),
  );
}

/** Greeting req/s through haproxy: three replicas against one, on this machine's cores. */
export async function cluster(): Promise<ScenarioResult> {
  return withPostgres(
    clusterUnavailable(),
    async (pg) => {
      const runs = await alternate({
        one: () => balancedLoad(pg, 1),
        three: () => balancedLoad(pg, 3),
      });
      const sdk = await alternate({
        sdkOne: () => balancedBaselineLoad(1),
        sdkThree: () => balancedBaselineLoad(3),
      });
      const one = medians(runs.one);
      const three = medians(runs.three);
      const sdkRatio = medians(sdk.sdkThree).rps / medians(sdk.sdkOne).rps;
      const failures = [...runs.one, ...runs.three].reduce((sum, r) => sum + r.failed, 0);
      const perReq = (r: BalancedLoad[], figure: keyof BalancedLoad, digits = 0) =>
        fmt(median(r.map((x) => Number(x[figure]))), digits);
      const split = (r: BalancedLoad[]) =>
        `event loop ${perReq(r, 'mainUsPerReq')} µs, other threads ${perReq(r, 'otherThreadsUsPerReq')} µs, ${perReq(r, 'preemptionsPerReq', 1)} preemptions`;
      const dbFigure = (r: BalancedLoad[], figure: Exclude<keyof DatabaseTally, 'top'>) =>
        fmt(median(r.map((x) => x.db[figure])), 2);
      const tally = (r: BalancedLoad[]) =>
        `${dbFigure(r, 'transactionsPerReq')} transactions, ${dbFigure(r, 'statementsPerReq')} statements, ${dbFigure(r, 'notifiesPerReq')} NOTIFYs, PostgreSQL's CPU ${fmt(median(r.map((x) => x.db.serverCpuUsPerReq)))} µs`;
      // The last run's: enough to see which statements grow with the replicas.
      const topStatements = (r: BalancedLoad[]) =>
        r
          .at(-1)!
          .db.top.map(({ perReq: n, query }) => `${fmt(n, 3)} × \`${query}\``)
          .join(', ');
      const ratio = three.rps / one.rps;
      return {
        id: 'cluster',
        title: `\`SendMessage\` greeting through haproxy: three replicas vs one (${os.cpus().length} cores; PostgreSQL, haproxy and the load client on the same machine)`,
        target: 'three replicas not slower than one',
        baseline: `one replica: ${describeLoad(one)}`,
        node: `three replicas: ${describeLoad(three)}`,
        ratio: `${fmt(ratio, 2)} × req/s, ${fmt(three.cpu / one.cpu, 2)} × CPU/req (bare SDK: ${fmt(sdkRatio, 2)} × req/s)`,
        met: ratio >= 1 && failures === 0,
        notes: [
          ...loadNotes(runs),
          `the same load through the same haproxy in front of bare-SDK baselines (in-memory task store, no database; sides alternate by round): three ${describeLoad(medians(sdk.sdkThree))} against one ${describeLoad(medians(sdk.sdkOne))}, ${fmt(sdkRatio, 2)} × req/s: what three Node processes on these cores cost a server that shares nothing`,
          ...loadNotes(sdk),
          `CPU/req is the replicas' summed; haproxy's own: ${perReq(runs.one, 'haproxyCpuUsPerReq')} µs/req (one), ${perReq(runs.three, 'haproxyCpuUsPerReq')} µs/req (three)`,
          `replicas' CPU per request: one ${split(runs.one)}; three ${split(runs.three)} (preemptions: the kernel taking a core from a replica thread that still wanted it; more processes than cores)`,
          `database per request: one ${tally(runs.one)}; three ${tally(runs.three)}`,
          `each replica (last run), per request it served: one ${runs.one.at(-1)!.replicas.join('; ')}; three ${runs.three.at(-1)!.replicas.join('; ')}`,
          `idle for ${IDLE_WINDOW_MS / 1000} s after the window (heartbeat ${HEARTBEAT_MS / 1000} s): one ${fmt(median(runs.one.map((r) => r.idle.transactionsPerSec)), 1)} transactions/s, three ${fmt(median(runs.three.map((r) => r.idle.transactionsPerSec)), 1)}; last run's statements: one ${runs.one.at(-1)!.idle.top}; three ${runs.three.at(-1)!.idle.top}`,
          `most frequent statements per request: one ${topStatements(runs.one)}; three ${topStatements(runs.three)}`,
          `warm-up ${CLUSTER_WARMUP_SEC} s per replica, each on its own and directly (one and three alike), then a ${CLUSTER_WINDOW.DURATION} s window: each replica JIT-compiles its own hot paths from about as many warm-up requests; sides alternate by round`,
          `load average (1 min) before each window: one ${runs.one.map((r) => fmt(r.loadAverage, 2)).join(', ')}; three ${runs.three.map((r) => fmt(r.loadAverage, 2)).join(', ')}`,
        ],
      };
    },
    { shared_preload_libraries: 'pg_stat_statements' },
  );
}

/**
 * Replica-loss detection: a background job running a 30 s command on a
 * victim replica, the victim killed -9, the time until a surviving replica
 * reports the job failed "replica lost". Each run a new victim; one survivor.
 */
export async function replicaLoss(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const survivor = await startReplica(databaseUrl, 'survivor');
      const detected: number[] = [];
      try {
        for (let run = 0; run < settings.runs; run++) {
          const victim = await startReplica(databaseUrl, `victim-${run}`);
          try {
            const submitted = await offlineToolResult(
              victim.url,
              'bg_submit {"prompt": "exec_shell {\\"command\\": \\"sleep 30\\"}", "label": "victim"}',
            );
            const job = `bg_result {"id": "${String(submitted.id)}"}`;
            await waitFor(
              async () => (await offlineToolResult(survivor.url, job)).status === 'running',
              15_000,
              'the job to run on the victim',
            );
            process.kill(victim.pid, 'SIGKILL');
            const killedAt = performance.now();
            await waitFor(
              async () => {
                const found = await offlineToolResult(survivor.url, job);
                if (found.status === 'failed' && found.result !== 'replica lost')
                  throw new Error(`failed for another reason: ${String(found.result)}`);
                return found.status === 'failed';
              },
              LEASE_MS + 15_000,
              'the survivor to report the job lost',
            );
            detected.push(performance.now() - killedAt);
          } finally {
            await victim.stop();
          }
        }
      } finally {
        await survivor.stop();
      }
      const bound = LEASE_MS + 2 * HEARTBEAT_MS;
      return {
        id: 'replicaLoss',
        title: `replica-loss detection: kill -9 of a replica running a background job → "replica lost" seen on another (lease ${LEASE_MS / 1000} s, heartbeat ${HEARTBEAT_MS / 1000} s)`,
        target: `≤ lease + 2 heartbeats (${bound} ms)`,
        baseline: '—',
        node: `median ${fmt(median(detected))} ms, max ${fmt(Math.max(...detected))} ms`,
        ratio: `${fmt(Math.max(...detected) / LEASE_MS, 2)} × lease (max)`,
        met: Math.max(...detected) <= bound,
        notes: [`per run: ${detected.map((ms) => fmt(ms)).join(', ')} ms (polled every 20 ms through the survivor)`],
      };
    }),
  );
}

/**
 * Cron lateness: an every-2-seconds cron job on three replicas for 20 s; the
 * delay from each scheduled time to its run's start, and how many scheduled
 * times ran more than once.
 */
export async function cronLateness(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const replicas: ServerProcess[] = [];
      try {
        for (let i = 0; i < 3; i++) replicas.push(await startReplica(databaseUrl, `bench-${i}`));
        await offlineToolResult(
          replicas[0].url,
          'cron_add {"name": "often", "schedule": "*/2 * * * * *", "prompt": "hi"}',
        );
        await new Promise((resolve) => setTimeout(resolve, CRON_WINDOW_MS));
      } finally {
        for (const replica of replicas) await replica.stop();
      }
      const db = new Client({ connectionString: databaseUrl });
      await db.connect();
      const { rows } = await db
        .query<{ scheduled_for: string; started_at: string }>(
          `SELECT scheduled_for, started_at FROM cron_runs WHERE job_name = 'often' AND trigger = 'schedule'`,
        )
        .finally(() => db.end());
      const late = rows.map((r) => Date.parse(r.started_at) - Date.parse(r.scheduled_for)).sort((a, b) => a - b);
      const twice = rows.length - new Set(rows.map((r) => r.scheduled_for)).size;
      return {
        id: 'cronLateness',
        title: `cron lateness: an every-2-seconds job on three replicas for ${CRON_WINDOW_MS / 1000} s, scheduled time → run started`,
        target: 'each scheduled time run once; lateness reported',
        baseline: '—',
        node: `p50 ${fmt(percentile(late, 50))} ms, p99 ${fmt(percentile(late, 99))} ms, max ${fmt(late.at(-1) ?? NaN)} ms over ${rows.length} runs`,
        ratio: `${twice} scheduled times run twice`,
        met: twice === 0 && rows.length > 0,
        notes: [`lateness per run: ${late.join(', ')} ms`],
      };
    }),
  );
}

/** How many cancels the cancel propagation scenario times (BENCH_CANCEL_TRIES). */
const CANCEL_TRIES = Number(process.env.BENCH_CANCEL_TRIES ?? 20);

/** One JSON-RPC call to a replica, resolving with its `result` (or throwing its error). */
async function rpcResult(url: string, method: string, params: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomBytes(4).toString('hex'), method, params }),
  });
  const body = (await res.json()) as { result?: Record<string, unknown>; error?: { message: string } };
  if (!body.result) throw new Error(`${method}: ${body.error?.message ?? res.status}`);
  return body.result;
}

/**
 * Opens a `SendStreamingMessage` of `text` on `url`; resolves with the task
 * id its first event names and a promise of the stream's end (read to the end
 * meanwhile, as a client would).
 */
async function openStream(url: string, text: string): Promise<{ taskId: string; ended: Promise<void> }> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: randomBytes(8).toString('hex'), role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
  if (!res.body) throw new Error(`no stream: ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before its first event: ${buffered}`);
    buffered += decoder.decode(value, { stream: true });
    const line = buffered.split('\n').find((l) => l.startsWith('data:') && l.includes('"result"'));
    if (!line) continue;
    const result = (JSON.parse(line.slice(5)) as { result: Record<string, { id?: string; taskId?: string }> }).result;
    const first = result.task ?? result.statusUpdate;
    const taskId = first?.id ?? first?.taskId;
    if (!taskId) throw new Error(`no task id in the first event: ${line}`);
    const ended = (async () => {
      while (!(await reader.read()).done);
    })();
    return { taskId, ended };
  }
}

/**
 * Cancel propagation: a streamed turn on replica A runs a long command; a
 * `CancelTask` for it is sent to replica C; the time from sending it until
 * the command's process is gone (the cancel's NOTIFY reached A, A aborted the
 * turn and killed the sandbox), polled every millisecond from /proc.
 */
export async function cancelPropagation(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const runner = await startReplica(databaseUrl, 'runner');
      const canceller = await startReplica(databaseUrl, 'canceller').catch(async (err: unknown) => {
        await runner.stop();
        throw err;
      });
      const gone: number[] = [];
      try {
        // Try 0 warms up (each replica's first cancel opens connections and compiles its path) and is not counted.
        for (let n = 0; n <= CANCEL_TRIES; n++) {
          // An unusual length per try names its process (the exec timeout is 30 s).
          const command = `sleep 28.${n}`;
          const { taskId, ended } = await openStream(runner.url, `exec_shell {"command": "${command}"}`);
          const pid = await waitFor(() => processesWith(command)[0], 15_000, `"${command}" to run`);
          const sentAt = performance.now();
          const canceled = rpcResult(canceller.url, 'CancelTask', { id: taskId });
          await new Promise<void>((resolve, reject) => {
            const poll = () => {
              if (processEnded(pid)) return resolve();
              if (performance.now() - sentAt > 10_000) return reject(new Error(`"${command}" outlived its cancel`));
              setTimeout(poll, 1);
            };
            poll();
          });
          if (n > 0) gone.push(performance.now() - sentAt);
          const state = ((await canceled).status as { state?: string } | undefined)?.state;
          if (state !== 'TASK_STATE_CANCELED') throw new Error(`CancelTask answered ${String(state)}`);
          await ended;
        }
      } finally {
        await canceller.stop();
        await runner.stop();
      }
      const sorted = [...gone].sort((a, b) => a - b);
      const p99 = percentile(sorted, 99);
      return {
        id: 'cancelPropagation',
        title: `cancel propagation: \`CancelTask\` sent to replica C → the command a streamed turn runs on replica A gone (${CANCEL_TRIES} tries)`,
        target: 'p99 ≤ 100 ms',
        baseline: '—',
        node: `p50 ${fmt(percentile(sorted, 50), 1)} ms, p99 ${fmt(p99, 1)} ms, max ${fmt(sorted.at(-1) ?? NaN, 1)} ms`,
        ratio: `${fmt(p99 / 100, 2)} × target (p99)`,
        met: p99 <= 100,
        notes: [
          `per try: ${gone.map((ms) => fmt(ms, 1)).join(', ')} ms (process polled every 1 ms in /proc; one warm-up try before, not counted)`,
          'the cancel travels as a row and a NOTIFY on the shared database; A aborts the turn, whose sandbox is SIGKILLed',
        ],
      };
    }),
  );
}

/** A streamed task that runs about a second on the offline model (a confined command; no approval asked). */
const SLOW_STREAM = 'exec_shell {"command": "sleep 1"}';
/** How many tasks the resubscribe scenario follows. */
const RESUBSCRIBES = 20;

/** The state a stream response leaves the task in, if it carries one. */
function streamState(response: StreamResponse): number | undefined {
  const payload = response.payload;
  if (payload?.$case === 'task') return payload.value.status?.state;
  if (payload?.$case === 'statusUpdate') return payload.value.status?.state;
  return undefined;
}

/**
 * Resubscribe on another replica: a streamed task running on replica A,
 * `SubscribeToTask` sent to replica B while it runs. Measured: B's first
 * event (the task as it stands, folded from the shared events), and how long
 * after A's stream ended B's did (an event's way through PostgreSQL: group
 * commit, NOTIFY, B's read).
 */
export async function resubscribeElsewhere(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const a = await startReplica(databaseUrl, 'bench-a');
      const first: number[] = [];
      const behind: number[] = [];
      try {
        const b = await startReplica(databaseUrl, 'bench-b');
        try {
          const onA = await a2aClient(a.url, 'JSONRPC');
          const onB = await a2aClient(b.url, 'JSONRPC');
          for (let run = 0; run < RESUBSCRIBES; run++) {
            const stream = onA.sendMessageStream(textRequest(SLOW_STREAM));
            const opening = (await stream.next()).value as StreamResponse;
            const taskId = opening.payload?.$case === 'task' ? opening.payload.value.id : '';
            if (!taskId) throw new Error('the stream on A did not start with its task');
            const endedOnA = (async () => {
              let at = NaN;
              for await (const response of stream) if (response) at = performance.now();
              return at;
            })();
            const sent = performance.now();
            const resubscribed = onB.resubscribeTask({ tenant: '', id: taskId });
            let lastState: number | undefined;
            let firstAt = NaN;
            let endedAt = NaN;
            for await (const response of resubscribed) {
              if (Number.isNaN(firstAt)) firstAt = performance.now();
              endedAt = performance.now();
              lastState = streamState(response) ?? lastState;
            }
            if (lastState !== 3 /* TASK_STATE_COMPLETED */)
              throw new Error(`the resubscribed stream on B ended in state ${String(lastState)}, not completed`);
            first.push(firstAt - sent);
            behind.push(endedAt - (await endedOnA));
          }
        } finally {
          await b.stop();
        }
      } finally {
        await a.stop();
      }
      const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
      const firstSorted = sorted(first);
      const behindSorted = sorted(behind);
      return {
        id: 'resubscribeElsewhere',
        title: `resubscribe on another replica: \`SubscribeToTask\` on B for a stream running on A (${RESUBSCRIBES} tasks, offline model, a 1 s command each)`,
        target: 'reported (no target)',
        baseline: '—',
        node: `first event on B p50 ${fmt(percentile(firstSorted, 50), 1)} ms, p99 ${fmt(percentile(firstSorted, 99), 1)} ms; B's stream ended p50 ${fmt(percentile(behindSorted, 50), 1)} ms, max ${fmt(behindSorted.at(-1) ?? NaN, 1)} ms after A's`,
        ratio: '—',
        met: true,
        notes: [
          'first event: the task as it stands, folded from the events table; the end: the closing event through group commit, NOTIFY and B’s read',
        ],
      };
    }),
  );
}

/** How many chunks the long answer of {@link resubscribeLongAnswer} streams, one a millisecond. */
const LONG_ANSWER_CHUNKS = 10_000;
/** After how many chunks streamed on A a subscriber comes on B: early in the answer, and later. */
const RESUBSCRIBE_AT = [200, 2_000, 8_000] as const;
/** How many long answers the scenario streams (BENCH_LONG_ANSWERS). */
const LONG_ANSWERS = Number(process.env.BENCH_LONG_ANSWERS ?? 3);

/** The answer text a stream carries: each artifact chunk appended (or starting the artifact over). */
function streamedAnswer(responses: readonly StreamResponse[]): string {
  let text = '';
  for (const { payload } of responses) {
    if (payload?.$case === 'task') text = payload.value.artifacts.map((a) => partsText(a.parts)).join('');
    if (payload?.$case === 'artifactUpdate') {
      const chunk = partsText(payload.value.artifact?.parts);
      text = payload.value.append ? text + chunk : chunk;
    }
  }
  return text;
}

/**
 * Resubscribe on another replica to a long answer: replica A streams a
 * 10,000-chunk answer from the scripted model (one chunk a millisecond, each
 * chunk one row of the events table); a `SubscribeToTask` is sent to replica
 * B once A's caller has seen 200 chunks, another at 2,000 and one at 8,000.
 * Measured: each subscriber's first event (the task as it stands on B); each
 * must end with exactly A's answer (no chunk lost or repeated).
 */
export async function resubscribeLongAnswer(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const model = await startServer({
        script: 'scriptedModel.js',
        env: { CHUNKS: String(LONG_ANSWER_CHUNKS), FIRST_MS: '0', INTERVAL_MS: '1' },
      });
      const first = new Map<number, number[]>(RESUBSCRIBE_AT.map((at) => [at, []]));
      try {
        const extra = {
          agent: { provider: 'openai', baseUrl: model.url, apiKey: 'bench-key', model: 'scripted', multiAgent: false },
        };
        const a = await startReplica(databaseUrl, 'bench-a', undefined, extra);
        try {
          const b = await startReplica(databaseUrl, 'bench-b', undefined, extra);
          try {
            const onA = await a2aClient(a.url, 'JSONRPC');
            const onB = await a2aClient(b.url, 'JSONRPC');
            // Run 0 warms up both replicas' paths and is not counted.
            for (let run = 0; run <= LONG_ANSWERS; run++) {
              const seenOnA: StreamResponse[] = [];
              const followers: Array<Promise<StreamResponse[]>> = [];
              let chunks = 0;
              let taskId = '';
              for await (const response of onA.sendMessageStream(textRequest('a long answer, please'))) {
                seenOnA.push(response);
                if (!taskId && response.payload?.$case === 'task') taskId = response.payload.value.id;
                if (response.payload?.$case !== 'artifactUpdate') continue;
                chunks += 1;
                const at = RESUBSCRIBE_AT.find((n) => n === chunks);
                if (at === undefined) continue;
                const sent = performance.now();
                followers.push(
                  (async () => {
                    const seen: StreamResponse[] = [];
                    for await (const r of onB.resubscribeTask({ tenant: '', id: taskId })) {
                      if (seen.length === 0 && run > 0) first.get(at)!.push(performance.now() - sent);
                      seen.push(r);
                    }
                    return seen;
                  })(),
                );
              }
              if (chunks < LONG_ANSWER_CHUNKS)
                throw new Error(`A streamed ${chunks} chunks, not ${LONG_ANSWER_CHUNKS}`);
              const answer = streamedAnswer(seenOnA);
              for (const seen of await Promise.all(followers)) {
                if (streamState(seen.at(-1)!) !== 3 /* TASK_STATE_COMPLETED */)
                  throw new Error('a subscriber on B did not see the task complete');
                if (streamedAnswer(seen) !== answer)
                  throw new Error('a subscriber on B rebuilt another answer than A streamed');
              }
            }
          } finally {
            await b.stop();
          }
        } finally {
          await a.stop();
        }
      } finally {
        await model.stop();
      }
      const figures = RESUBSCRIBE_AT.map((at) => {
        const sorted = [...first.get(at)!].sort((x, y) => x - y);
        return { at, min: sorted[0] ?? NaN, p50: percentile(sorted, 50), max: sorted.at(-1) ?? NaN, all: sorted };
      });
      const early = figures[0];
      const late = figures.at(-1)!;
      const describe = (f: (typeof figures)[number]) =>
        `after ${f.at} chunks: first event min ${fmt(f.min, 1)} ms, p50 ${fmt(f.p50, 1)} ms, max ${fmt(f.max, 1)} ms`;
      return {
        id: 'resubscribeLongAnswer',
        title: `resubscribe on another replica to a long answer: \`SubscribeToTask\` on B while A streams a ${LONG_ANSWER_CHUNKS}-chunk answer, after ${RESUBSCRIBE_AT.join(', ')} chunks (${LONG_ANSWERS} answers)`,
        // The first event is the whole answer so far: it grows with the answer; what is read to build it should not.
        target: 'reported (no target): compare runs before and after a change',
        baseline: describe(early),
        node: describe(late),
        ratio: `${fmt(late.p50 / early.p50, 2)} × p50, ${fmt(late.min / early.min, 2)} × min (late vs early)`,
        met: undefined,
        notes: [
          ...figures.map((f) => `after ${f.at} chunks, per answer: ${f.all.map((ms) => fmt(ms, 1)).join(', ')} ms`),
          'every subscriber on B ended with exactly the answer A streamed; one warm-up answer before, not counted',
        ],
      };
    }),
  );
}
