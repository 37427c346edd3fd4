import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { waitFor } from './waitFor';

/** The built CLI (`npm run build` first; `npm test` builds in pretest). */
export const CLI_MAIN = path.resolve(__dirname, '../../dist/cli/main.js');

/**
 * Runs the CLI in this process in `cwd` (no build needed) and captures what it prints.
 * @example
 * const { code, out } = await runCliInProcess(['config', 'check'], cwd);
 */
export async function runCliInProcess(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    io: { out: (text) => void (out += text), err: (text) => void (err += text) },
    env: { LOG_LEVEL: 'error', ...env },
    cwd,
    stopSignal: new Promise(() => {}),
  });
  return { code, out, err };
}

/** A data folder's configuration without the browser, so nothing looks for Chromium. */
export const NO_BROWSER = 'tools:\n  browser:\n    enabled: false\n';

/** A temp working directory with a lango.config.yaml (`extra` appended). */
export function cliWorkdir(extra = ''): string {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cli-'));
  fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), NO_BROWSER + extra);
  return cwd;
}

/** A spawned `lango` process with what it printed so far. */
export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
  stop: () => Promise<number | null>;
}

/** Spawns the built CLI in `cwd` with `args`; PORT=0 so a `serve` takes a free port. */
export function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Starts `lango serve` in `cwd` and resolves once its URL is in the data folder's lock file. */
export async function startServe(cwd: string): Promise<{ serve: CliProcess; url: string }> {
  const serve = spawnCli(['serve'], cwd);
  const lockFile = path.join(cwd, '.lango', 'lango.lock');
  try {
    const url = await waitFor(
      () => {
        if (serve.child.exitCode !== null) throw new Error(`serve exited ${serve.child.exitCode}:\n${serve.stderr()}`);
        try {
          const holder = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { pid?: number; url?: string };
          // Only this process's lock counts (a stale one may sit there until it takes over).
          return holder.pid === serve.child.pid ? holder.url : undefined;
        } catch {
          return undefined;
        }
      },
      // A cold start of the built CLI took over 30 s once on a loaded CI machine.
      60_000,
      'serve to record its URL in the lock file',
    );
    return { serve, url };
  } catch (err) {
    await serve.stop();
    throw err;
  }
}
