import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnCli, type CliProcess } from './cliProcess';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from './postgres';
import { waitFor } from './waitFor';

/** Debian's haproxy (listed in .ci/apt-packages); `LANGO_HAPROXY` overrides. */
export const HAPROXY = process.env.LANGO_HAPROXY ?? '/usr/sbin/haproxy';

/** The response header haproxy adds naming the replica (its `server` name, `r<i>`) that answered. */
export const SERVED_BY = 'x-lango-replica';

/** Why haproxy cannot be run here, or `undefined` when it can. */
export function haproxyUnavailable(): string | undefined {
  return fs.existsSync(HAPROXY)
    ? undefined
    : `no haproxy at ${HAPROXY} (install Debian's haproxy, or set LANGO_HAPROXY)`;
}

/** Why the cluster tests cannot run here (no PostgreSQL or no haproxy), or `undefined` when they can. */
export function clusterUnavailable(): string | undefined {
  return postgresUnavailable() ?? haproxyUnavailable();
}

/**
 * The haproxy configuration the cluster tests run (and README "Running a
 * cluster" shows): round robin over the replicas, a replica taken out when
 * `/readyz` fails twice 500 ms apart and back after one pass, no retries and
 * no redispatch (a request sent to a replica that dies fails, as it would for
 * a client; nothing hides it), SSE streams and long turns kept open, and the
 * answering replica named in a response header.
 */
export function haproxyConfig(options: {
  bindPort: number;
  replicaPorts: readonly number[];
  statsSocket?: string;
}): string {
  return [
    'global',
    '  maxconn 4096',
    ...(options.statsSocket ? [`  stats socket ${options.statsSocket} mode 600 level admin`] : []),
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 5m',
    '  timeout server 5m',
    '  timeout tunnel 1h',
    // A replica busy with a queue of requests answers /readyz late, not never: without this the check's answer
    // had only `inter` (500 ms), and a loaded lone replica was taken out of rotation (503 to every caller).
    '  timeout check 3s',
    '  retries 0',
    '  option http-keep-alive',
    'frontend lango',
    `  bind 127.0.0.1:${options.bindPort}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    // haproxy's default check: `GET /readyz HTTP/1.0` with no Host, which the node's probes answer as they are.
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  default-server inter 500ms fall 2 rise 1',
    `  http-response set-header ${SERVED_BY} %s`,
    ...options.replicaPorts.map((port, i) => `  server r${i} 127.0.0.1:${port} check`),
    '',
  ].join('\n');
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** How to start a cluster. */
export interface ClusterOptions {
  /** How many `lango serve` replicas (default 3). */
  replicas?: number;
  /** `cluster.lease` (default `3s`); the heartbeat is a third of it. */
  lease?: string;
  heartbeatInterval?: string;
  /** YAML appended to every replica's lango.config.yaml (e.g. `agent:` for a scripted model server). */
  extraConfig?: string;
  /** Extra environment of every replica. */
  env?: NodeJS.ProcessEnv;
  /** An already running server to create the database on (else one is started and stopped with the cluster). */
  postgres?: TestPostgres;
}

/** A running cluster: PostgreSQL, N replicas, haproxy in front. */
export interface TestCluster {
  /** haproxy's frontend, `http://127.0.0.1:<port>`. */
  readonly balancerUrl: string;
  /** The one database every replica's `storage.url` names. */
  readonly databaseUrl: string;
  /** The shared workspace (`tools.fs.root` of every replica). */
  readonly workspace: string;
  readonly size: number;
  /** Replica `i`'s own URL (bypassing haproxy). */
  replicaUrl(i: number): string;
  /** Replica `i`'s `cluster.replicaId` (`replica-<i>`). */
  replicaId(i: number): string;
  /** The process of replica `i` while it runs. */
  replica(i: number): CliProcess | undefined;
  /** Signals replica `i` (default SIGKILL) and waits for it to exit. */
  killReplica(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts replica `i` again on its port (after {@link killReplica}), resolving once it answers /readyz. */
  startReplica(i: number): Promise<void>;
  /** haproxy's view of each replica (`UP`, `DOWN`, `DRAIN`, …), by server name `r<i>`. */
  balancerStatus(): Promise<Record<string, string>>;
  /**
   * Sets replica `i`'s admin state in haproxy: `drain` sends it no new
   * requests (those in flight finish), `ready` takes it back.
   */
  setBalancerState(i: number, state: 'drain' | 'ready'): Promise<void>;
  /** How many requests replica `i` is answering through haproxy now. */
  inFlight(i: number): Promise<number>;
  /** Ends haproxy, every replica and (if the cluster started it) PostgreSQL; removes the temp folders. */
  stop(): Promise<void>;
}

/** Compiles dist when a source is newer than the last build (the replicas run `dist/cli/main.js`). */
function buildIfStale(): void {
  const root = path.resolve(__dirname, '../..');
  const built = spawnSync(process.execPath, [path.join(root, 'scripts/build-if-stale.js')], {
    cwd: root,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (built.status !== 0) throw new Error(`build failed: ${built.stderr || built.stdout}`);
}

/** One command on haproxy's admin socket, resolving with its answer. */
function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const conn = net.createConnection(socket);
    let out = '';
    conn.on('data', (chunk: Buffer) => (out += chunk.toString()));
    conn.on('end', () => resolve(out));
    conn.on('error', reject);
    conn.end(`${command}\n`);
  });
}

/** One column of haproxy's `show stat` CSV for each replica server, by server name `r<i>`. */
async function haproxyStat(socket: string, column: 'status' | 'scur'): Promise<Record<string, string>> {
  const csv = await haproxyCommand(socket, 'show stat');
  const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
  const columns = header.split(',');
  const sv = columns.indexOf('svname');
  const wanted = columns.indexOf(column);
  return Object.fromEntries(
    rows
      .map((row) => row.split(','))
      .filter((cells) => /^r\d+$/.test(cells[sv]))
      .map((cells) => [cells[sv], cells[wanted]]),
  );
}

/** A running haproxy in front of replicas on loopback ports. */
export interface Balancer {
  /** Its frontend, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly pid: number;
  /** Its view of each replica (`UP`, `DOWN`, `DRAIN`, …), by server name `r<i>`. */
  status(): Promise<Record<string, string>>;
  /** Sets replica `i`'s admin state: `drain` sends it no new requests (those in flight finish), `ready` takes it back. */
  setState(i: number, state: 'drain' | 'ready'): Promise<void>;
  /** How many requests replica `i` is answering now (haproxy's current sessions to it). */
  inFlight(i: number): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts haproxy with {@link haproxyConfig} over `replicaPorts` (its config
 * and admin socket in `dir`) and resolves once it sees every replica up.
 */
export async function startBalancer(dir: string, replicaPorts: readonly number[]): Promise<Balancer> {
  const bindPort = await freePort();
  const statsSocket = path.join(dir, 'haproxy.sock');
  const configFile = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(configFile, haproxyConfig({ bindPort, replicaPorts, statsSocket }));
  const haproxy = spawn(HAPROXY, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000));
  haproxy.stdout.on('data', keep);
  haproxy.stderr.on('data', keep);
  const exited = new Promise((resolve) => haproxy.once('exit', resolve));
  const stop = async () => {
    if (haproxy.exitCode === null && haproxy.signalCode === null) haproxy.kill('SIGKILL');
    await exited;
  };
  const status = () => haproxyStat(statsSocket, 'status');
  let seen = 'nothing yet';
  try {
    await waitFor(
      async () => {
        if (haproxy.exitCode !== null) throw new Error(`haproxy exited ${haproxy.exitCode}: ${log}`);
        const now = await status().catch((err: Error) => ({ error: err.message }) as Record<string, string>);
        seen = JSON.stringify(now);
        return Object.keys(now).length === replicaPorts.length && Object.values(now).every((s) => s === 'UP');
      },
      30_000,
      'haproxy to see every replica up',
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message} (last seen ${seen}; haproxy said: ${log})`, { cause: err });
  }
  return {
    url: `http://127.0.0.1:${bindPort}`,
    pid: haproxy.pid!,
    status,
    inFlight: async (i) => Number((await haproxyStat(statsSocket, 'scur'))[`r${i}`]),
    async setState(i, state) {
      const answer = await haproxyCommand(statsSocket, `set server replicas/r${i} state ${state}`);
      if (answer.trim()) throw new Error(`haproxy refused the state ${state} for r${i}: ${answer.trim()}`);
    },
    stop,
  };
}

/**
 * Starts PostgreSQL (unless given), a fresh database, `size` replicas of
 * `lango serve` from dist (built if stale), each in its own folder with its
 * own `dataDir`, one shared workspace, one `storage.url`, replica ids
 * `replica-<i>`, a short lease, the offline model (or `extraConfig`'s), one
 * master key in every replica's environment; then haproxy in front. Resolves
 * once haproxy sees every replica up. On any failure everything started is
 * stopped.
 * @example
 * const cluster = await startCluster({ replicas: 3 });
 * try { ... await fetch(cluster.balancerUrl) ... } finally { await cluster.stop(); }
 */
export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const size = options.replicas ?? 3;
  const lease = options.lease ?? '3s';
  const heartbeat = options.heartbeatInterval ?? '1s';
  buildIfStale();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cluster-'));
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(workspace);
  const masterKey = randomBytes(32).toString('hex');
  const ownPostgres = options.postgres ? undefined : await startTestPostgres();
  const pg = options.postgres ?? ownPostgres!;
  const replicas: (CliProcess | undefined)[] = [];
  let balancer: Balancer | undefined;
  const stopAll = async () => {
    await balancer?.stop();
    await Promise.all(replicas.map((r) => r?.stop()));
    await ownPostgres?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    const databaseUrl = await pg.createDatabase();
    const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
    const dirs = ports.map((_, i) => {
      const dir = path.join(root, `replica-${i}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(
        path.join(dir, 'lango.config.yaml'),
        [
          'server:',
          '  host: 127.0.0.1',
          'storage:',
          `  url: ${databaseUrl}`,
          'cluster:',
          `  replicaId: replica-${i}`,
          `  heartbeatInterval: ${heartbeat}`,
          `  lease: ${lease}`,
          'tools:',
          '  browser:',
          '    enabled: false',
          '  fs:',
          `    root: ${workspace}`,
          options.extraConfig ?? '',
        ].join('\n'),
      );
      return dir;
    });
    const env = { LANGO_MASTER_KEY: masterKey, LOG_LEVEL: 'warn', ...options.env };
    const startReplica = async (i: number) => {
      const replica = spawnCli(['serve'], dirs[i], { ...env, PORT: String(ports[i]) });
      replicas[i] = replica;
      await waitFor(
        async () => {
          if (replica.child.exitCode !== null)
            throw new Error(`replica ${i} exited ${replica.child.exitCode}:\n${replica.stderr()}`);
          const res = await fetch(`http://127.0.0.1:${ports[i]}/readyz`).catch(() => undefined);
          return res?.status === 200;
        },
        60_000,
        `replica ${i} to answer /readyz`,
      );
    };
    // Migrated once before the replicas start, as README "Running a cluster" does for an upgrade.
    const migrate = spawnCli(['migrate'], dirs[0], env);
    const migrated = await migrate.exited;
    if (migrated !== 0) throw new Error(`lango migrate exited ${migrated}: ${migrate.stderr()}`);
    // One at a time: starting three Node processes at once on two cores only makes each slower.
    for (let i = 0; i < size; i++) await startReplica(i);

    balancer = await startBalancer(root, ports);
    const running = balancer;
    return {
      balancerUrl: balancer.url,
      databaseUrl,
      workspace,
      size,
      replicaUrl: (i) => `http://127.0.0.1:${ports[i]}`,
      replicaId: (i) => `replica-${i}`,
      replica: (i) => replicas[i],
      async killReplica(i, signal = 'SIGKILL') {
        const replica = replicas[i];
        if (!replica) return;
        if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill(signal);
        await replica.exited;
        replicas[i] = undefined;
      },
      startReplica,
      balancerStatus: () => running.status(),
      setBalancerState: (i, state) => running.setState(i, state),
      inFlight: (i) => running.inFlight(i),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** One A2A v1.0 JSON-RPC call's answer and the replica haproxy says served it. */
export interface RpcAnswer {
  status: number;
  servedBy: string | null;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

/** One A2A v1.0 JSON-RPC call to `url` (a replica or the balancer). */
export async function rpc(url: string, method: string, params: unknown): Promise<RpcAnswer> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
  });
  return { status: res.status, servedBy: res.headers.get(SERVED_BY), body: (await res.json()) as RpcAnswer['body'] };
}

/** `SendMessage` of one text part (blocking), with `contextId` when given. */
export function sendText(url: string, text: string, contextId?: string): Promise<RpcAnswer> {
  return rpc(url, 'SendMessage', {
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...(contextId ? { contextId } : {}) },
  });
}

/** The answer text of a `SendMessage` result (a task's artifacts or a message's parts). */
export function answerOf(answer: RpcAnswer): string {
  if (answer.body.error) throw new Error(`JSON-RPC error ${answer.body.error.code}: ${answer.body.error.message}`);
  const result = answer.body.result as {
    task?: { artifacts?: { parts?: { text?: string }[] }[] };
    message?: { parts?: { text?: string }[] };
  };
  const parts = result.task
    ? (result.task.artifacts ?? []).flatMap((a) => a.parts ?? [])
    : (result.message?.parts ?? []);
  return parts.map((p) => p.text ?? '').join('');
}

/**
 * What a tool answered when the offline model ran `text` (a tool name and its
 * JSON arguments) on the node at `url`: the JSON value its answer quotes.
 */
export async function offlineToolResult(url: string, text: string): Promise<Record<string, unknown>> {
  const answer = answerOf(await sendText(url, text));
  const start = answer.search(/[[{]/);
  if (start < 0) throw new Error(`no tool result in: ${answer}`);
  return JSON.parse(answer.slice(start)) as Record<string, unknown>;
}
