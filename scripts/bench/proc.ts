import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

/** Compiled bench scripts live next to this file. */
export const BENCH_DIR = __dirname;

/** A server started as its own child process. */
export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  /** Milliseconds the child reported from its start to listening (node entry only). */
  readonly startupMs?: number;
  /** Milliseconds from spawn to the ready line, measured by the parent. */
  readonly spawnToReadyMs: number;
  /** The whole ready line the child printed. */
  readonly ready: Record<string, unknown>;
  /** Full GC in the child (needs --expose-gc), then its RSS and heap in bytes. */
  memory(): Promise<{ rss: number; heapUsed: number }>;
  /** CPU time (user + system) the child has used so far, in milliseconds, read from /proc without disturbing it. */
  cpuMs(): number;
  /** The child's resident set size now, in bytes, read from /proc (no GC). */
  rssBytes(): number;
  stop(): Promise<void>;
}

/** How to start one server script. */
export interface ServerSpec {
  /** Script file name under the compiled bench folder, e.g. `sdkBaseline.js` (or an absolute path: another tree's). */
  script: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** Milliseconds to wait for the ready line. */
  readyTimeoutMs?: number;
}

/**
 * Starts `spec.script` with node and resolves once it prints its
 * `{"ready":true,"url":...}` line. The child's stderr is kept for the error
 * message when it dies early.
 */
export function startServer(spec: ServerSpec): Promise<ServerProcess> {
  const started = performance.now();
  const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), path.resolve(BENCH_DIR, spec.script)], {
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const waiting: Array<(line: Record<string, unknown>) => void> = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${spec.script} not ready in ${spec.readyTimeoutMs ?? 30_000} ms: ${stderr}`));
    }, spec.readyTimeoutMs ?? 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${spec.script} exited (${code}) before ready: ${stderr}`));
    });
    lines.on('line', (line) => {
      let doc: Record<string, unknown>;
      try {
        doc = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (doc.ready) {
        clearTimeout(timer);
        resolve(wrap(child, doc, performance.now() - started, waiting));
      } else if (doc.stats) waiting.shift()?.(doc);
    });
  });
}

/** Kernel clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
let ticksPerSecond: number | undefined;

/** CPU time (user + system) a process has used, in milliseconds; 10 ms resolution at the usual 100 ticks/s. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** The CPU milliseconds of a `stat` file: a process's (`/proc/<pid>/stat`) or one thread's (`/proc/<pid>/task/<tid>/stat`). */
function statCpuMs(file: string): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = fs.readFileSync(file, 'utf8');
  // Fields after the parenthesised command name, which may itself hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** The pid of a process's parent (field 4 of /proc/<pid>/stat, after the parenthesised command name). */
export function parentPid(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * CPU milliseconds of `parent` and every process it started that is alive
 * now (a PostgreSQL postmaster's backends and writers, say): children that
 * ended since the last reading are not counted.
 */
export function processTreeCpuMs(parent: number): number {
  let total = processCpuMs(parent);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentPid(Number(entry)) === parent) total += processCpuMs(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** Where a process's CPU went, summed over its threads (/proc/<pid>/task). */
export interface ThreadStats {
  /** The event loop's CPU, in ms. */
  mainMs: number;
  /** Every other thread's (V8's GC and compiler threads, libuv's pool), in ms. */
  otherMs: number;
  /** How often the kernel took a CPU from one of its threads that still wanted it (nonvoluntary context switches). */
  preempted: number;
}

/** {@link ThreadStats} of `pid` now; threads that ended since the last reading are not counted. */
export function processThreadStats(pid: number): ThreadStats {
  const stats: ThreadStats = { mainMs: 0, otherMs: 0, preempted: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`);
      if (tid === String(pid)) stats.mainMs += ms;
      else stats.otherMs += ms;
      const status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      stats.preempted += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return stats;
}

/** A process's resident set size in bytes (VmRSS of /proc/<pid>/status). */
export function processRssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

function wrap(
  child: ChildProcess,
  ready: Record<string, unknown>,
  spawnToReadyMs: number,
  waiting: Array<(line: Record<string, unknown>) => void>,
): ServerProcess {
  return {
    url: String(ready.url),
    pid: child.pid!,
    startupMs: typeof ready.startupMs === 'number' ? ready.startupMs : undefined,
    spawnToReadyMs,
    ready,
    cpuMs: () => processCpuMs(child.pid!),
    rssBytes: () => processRssBytes(child.pid!),
    memory: () =>
      new Promise((resolve, reject) => {
        if (child.exitCode !== null || child.signalCode !== null) return reject(new Error('the server is not running'));
        const died = () =>
          reject(new Error(`the server exited (${child.exitCode ?? child.signalCode}) before reporting its memory`));
        child.once('exit', died);
        waiting.push((doc) => {
          child.off('exit', died);
          resolve({ rss: Number(doc.rss), heapUsed: Number(doc.heapUsed) });
        });
        child.kill('SIGUSR2');
      }),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.removeAllListeners('exit');
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Runs a client script to completion as its own process and parses the last
 * JSON line it prints.
 */
export function runClient<T>(script: string, env: Record<string, string>, timeoutMs = 600_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(BENCH_DIR, script)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${script} failed (exit ${code}): ${err || out}`));
      }
    });
  });
}
