import path from 'node:path';
import type { Sandbox } from './sandbox';

/** A command's outcome as the model sees it. */
export interface ShellResult {
  /** Exit code, or null when the process was killed by a signal. */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** True when stdout or stderr was longer than the cap and its middle was cut. */
  truncated: boolean;
  durationMs: number;
}

/** Options for {@link runShell}. */
export interface RunShellOptions {
  command: string;
  cwd: string;
  /** Where the command runs (confined by bubblewrap, or as is). */
  sandbox: Sandbox;
  /** Folders the command may read besides the system's and the workspace (a skill's own folder). */
  readOnly?: string[];
  env: Record<string, string>;
  timeoutMs: number;
  /** Bytes kept per stream; beyond it the head and tail are kept. */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/** Grace between SIGTERM and SIGKILL when a command must stop. */
export const KILL_GRACE_MS = 2000;

/**
 * The environment commands run with: a fixed PATH (plus the folder of the
 * running node binary, so `node` works) rather than the node's own
 * environment, so API keys held by the node never leak into commands.
 */
export function baseShellEnv(home: string): Record<string, string> {
  return {
    PATH: [
      path.dirname(process.execPath),
      '/usr/local/sbin',
      '/usr/local/bin',
      '/usr/sbin',
      '/usr/bin',
      '/sbin',
      '/bin',
    ].join(':'),
    HOME: home,
    LANG: 'C.UTF-8',
  };
}

/** Keeps the first and last halves of a stream once it passes `cap` bytes. */
export class CappedBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private dropped = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const half = Math.floor(this.cap / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    const keep = this.cap - half;
    const joined = Buffer.concat([this.tail, chunk]);
    this.dropped += Math.max(0, joined.length - keep);
    this.tail = joined.subarray(Math.max(0, joined.length - keep));
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  toString(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const gap = this.dropped > 0 ? `\n[... ${this.dropped} bytes omitted ...]\n` : '';
    return head + gap + this.tail.toString('utf8');
  }
}

/**
 * Runs `command` with `/bin/sh -c` in the sandbox, waiting for it to end,
 * time out (SIGTERM, then SIGKILL after {@link KILL_GRACE_MS}) or be aborted.
 * Never rejects for a failing command: a non-zero exit is a result.
 */
export function runShell(options: RunShellOptions): Promise<ShellResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const { child, stop: stopCommand } = options.sandbox.spawn({
      argv: ['/bin/sh', '-c', options.command],
      cwd: options.cwd,
      env: options.env,
      readOnly: options.readOnly,
    });
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      stopCommand('SIGTERM');
      killTimer = setTimeout(() => stopCommand('SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = (): void => stop();
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        exitCode: code,
        signal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        timedOut,
        truncated: stdout.truncated || stderr.truncated,
        durationMs: Date.now() - started,
      });
    };
    child.on('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', finish);
    // A command that leaves a background child holding its pipes would keep
    // 'close' from firing: give the pipes a moment after exit, then stop waiting.
    child.on('exit', (code, signal) => {
      drainTimer = setTimeout(() => finish(code, signal), 500);
    });
  });
}
