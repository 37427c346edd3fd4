import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

/** The built CLI; `npm test` builds it first (`pretest`), CI runs `npm run build` before the tests. */
export const BUILT_CLI = path.resolve(__dirname, '../../dist/cli/main.js');

/** A `lango serve` child process. */
export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** What the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGKILL, then waits for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `node dist/cli/main.js --config <configFile> serve` in `cwd` and
 * resolves once `GET /healthz` answers. Fails loudly when dist is missing:
 * a silently skipped crash test would prove nothing.
 */
export async function spawnServe(options: {
  cwd: string;
  configFile: string;
  port: number;
  env?: NodeJS.ProcessEnv;
}): Promise<ServeProcess> {
  if (!fs.existsSync(BUILT_CLI))
    throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` (npm test runs it as pretest)`);
  const child = spawn(process.execPath, [BUILT_CLI, '--config', options.configFile, 'serve'], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env, PORT: String(options.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString('utf8')).slice(-20_000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString('utf8')).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`lango serve exited with ${child.exitCode}: ${output}`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`lango serve not healthy in 60 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const finished = () => child.exitCode !== null || child.signalCode !== null;
  return {
    url,
    child,
    output: () => output,
    kill9: async () => {
      if (!finished()) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (finished()) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}
