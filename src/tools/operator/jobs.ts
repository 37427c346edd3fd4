import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { Principal } from '../../principal';
import type { ExecJob, ExecJobStatus, ExecJobStore } from '../../store/jobs';
import type { CommandProcess, Sandbox } from './sandbox';
import { KILL_GRACE_MS } from './shell';

/** One background command as `exec_status` reports it. */
export type JobInfo = ExecJob;

/** Options for {@link createJobManager}. */
export interface JobManagerOptions {
  /** Where the commands' rows live. */
  store: ExecJobStore;
  /** Folder for the jobs' output files (`<dataDir>/exec-jobs`). */
  outputDir: string;
  logger: Logger;
  clock: () => Date;
  /** Where the jobs run (the same sandbox as `exec_shell`). */
  sandbox: Sandbox;
  /** Running jobs at most. */
  maxRunning?: number;
  /** Output bytes kept per job; beyond that the file stops growing. */
  maxOutputBytes?: number;
}

/**
 * Starts, tracks and stops background commands; their output is kept in a
 * file per job. Each command belongs to the principal that started it: only
 * it (and the owner) can see, read or stop it.
 */
export interface JobManager {
  /** Marks commands an earlier process left running as `lost` (their pipes died with it). */
  start(): Promise<void>;
  /** Starts `command` (already policy-checked, secrets bound) for the principal; resolves with its row. */
  run(
    principal: Principal,
    args: { command: string; shownCommand: string; cwd: string; shownCwd: string; env: Record<string, string> },
  ): Promise<JobInfo>;
  get(principal: Principal, id: string): Promise<JobInfo>;
  list(principal: Principal, limit?: number): Promise<JobInfo[]>;
  /** The last `bytes` of the output of a command the principal can see. */
  tail(principal: Principal, id: string, bytes: number): Promise<{ text: string; truncated: boolean }>;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the job ended. */
  stop(principal: Principal, id: string): Promise<JobInfo>;
  /** Stops every running job (node shutdown). */
  close(): Promise<void>;
}

/**
 * Creates the job manager.
 * @example
 * const jobs = createJobManager({ store: stores.execJobs, outputDir: path.join(dataDir, 'exec-jobs'), logger, clock, sandbox });
 * await jobs.start();
 */
export function createJobManager(options: JobManagerOptions): JobManager {
  const { store, outputDir, logger, clock } = options;
  const maxRunning = options.maxRunning ?? 8;
  const maxOutput = options.maxOutputBytes ?? 10 * 1024 * 1024;
  fs.mkdirSync(outputDir, { recursive: true, mode: 0o700 });

  const children = new Map<string, { command: CommandProcess; done: Promise<void>; stopping: boolean }>();
  const outputFile = (id: string) => path.join(outputDir, `${id}.log`);
  const get = async (principal: Principal, id: string): Promise<JobInfo> => {
    const job = await store.get(principal, id);
    if (!job) throw new ToolExecutionError(`no background job "${id}" (see exec_status without an id)`);
    return job;
  };

  async function run(principal: Principal, args: Parameters<JobManager['run']>[1]): Promise<JobInfo> {
    if (children.size >= maxRunning) {
      throw new ToolExecutionError(`${maxRunning} background jobs are already running; stop one with exec_stop first`);
    }
    const id = `job-${crypto.randomBytes(4).toString('hex')}`;
    const out = fs.openSync(outputFile(id), 'a', 0o600);
    const command = options.sandbox.spawn({ argv: ['/bin/sh', '-c', args.command], cwd: args.cwd, env: args.env });
    const { child } = command;
    let written = 0;
    const write = (chunk: Buffer): void => {
      const room = maxOutput - written;
      if (room <= 0) return;
      const part = chunk.subarray(0, room);
      fs.writeSync(out, part);
      written += part.length;
    };
    child.stdout.on('data', write);
    child.stderr.on('data', write);
    // Recorded before the command can end, so its end always finds the row.
    const recorded = store.insert(principal, {
      id,
      command: args.shownCommand,
      cwd: args.shownCwd,
      pid: child.pid ?? null,
      startedAt: clock().toISOString(),
    });
    const entry = { command, stopping: false, done: Promise.resolve() };
    entry.done = new Promise<void>((resolve) => {
      const finish = (status: ExecJobStatus, code: number | null, signal: string | null): void => {
        if (!children.has(id)) return;
        children.delete(id);
        fs.closeSync(out);
        const ended = { status, exitCode: code, signal, endedAt: clock().toISOString(), outputBytes: written };
        recorded
          .then(() => store.finish(id, ended))
          .catch((err: unknown) => logger.error('background job end not recorded', { id, error: errorMessage(err) }))
          .finally(resolve);
        logger.info('background job ended', { id, status, exitCode: code, signal });
      };
      child.on('error', (error) => {
        write(Buffer.from(`\n[failed to start: ${error.message}]\n`));
        finish('failed', null, null);
      });
      child.on('close', (code, signal) => finish(entry.stopping ? 'stopped' : 'exited', code, signal));
    });
    children.set(id, entry);
    logger.info('background job started', { id, command: args.shownCommand, pid: child.pid });
    await recorded;
    return get(principal, id);
  }

  async function stop(principal: Principal, id: string): Promise<JobInfo> {
    const info = await get(principal, id);
    const entry = children.get(id);
    if (!entry) return info;
    entry.stopping = true;
    entry.command.stop('SIGTERM');
    const kill = setTimeout(() => entry.command.stop('SIGKILL'), KILL_GRACE_MS);
    await entry.done;
    clearTimeout(kill);
    return get(principal, id);
  }

  return {
    async start() {
      const lost = await store.markLost(clock().toISOString());
      if (lost > 0) logger.warn('background commands lost with a restart', { count: lost });
    },
    run,
    async get(principal, id) {
      const info = await get(principal, id);
      const entry = children.get(id);
      return entry ? { ...info, outputBytes: fs.statSync(outputFile(id)).size } : info;
    },
    list: (principal, limit = 50) => store.list(principal, limit),
    async tail(principal, id, bytes) {
      await get(principal, id);
      let size: number;
      try {
        size = fs.statSync(outputFile(id)).size;
      } catch {
        return { text: '', truncated: false };
      }
      const fd = fs.openSync(outputFile(id), 'r');
      try {
        const length = Math.min(size, bytes);
        const buffer = Buffer.alloc(length);
        fs.readSync(fd, buffer, 0, length, size - length);
        return { text: buffer.toString('utf8'), truncated: size > length };
      } finally {
        fs.closeSync(fd);
      }
    },
    stop,
    close: async () => {
      await Promise.all(
        [...children.values()].map(async (entry) => {
          entry.stopping = true;
          entry.command.stop('SIGTERM');
          const kill = setTimeout(() => entry.command.stop('SIGKILL'), KILL_GRACE_MS);
          await entry.done;
          clearTimeout(kill);
        }),
      );
    },
  };
}
