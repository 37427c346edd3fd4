import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import { migrate, type SqliteDatabase } from '../../store/database';
import type { CommandProcess, Sandbox } from './sandbox';
import { KILL_GRACE_MS } from './shell';

const MIGRATIONS = [
  `CREATE TABLE exec_jobs (
     id TEXT PRIMARY KEY, command TEXT NOT NULL, cwd TEXT NOT NULL, pid INTEGER,
     status TEXT NOT NULL, exit_code INTEGER, signal TEXT,
     started_at TEXT NOT NULL, ended_at TEXT, output_bytes INTEGER NOT NULL DEFAULT 0)`,
];

/** A background command's state: `lost` when the node restarted while it ran. */
export type JobStatus = 'running' | 'exited' | 'stopped' | 'failed' | 'lost';

/** One background command as `exec_status` reports it. */
export interface JobInfo {
  id: string;
  command: string;
  cwd: string;
  pid: number | null;
  status: JobStatus;
  exitCode: number | null;
  signal: string | null;
  startedAt: string;
  endedAt: string | null;
  outputBytes: number;
}

/** Options for {@link createJobManager}. */
export interface JobManagerOptions {
  db: SqliteDatabase;
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

/** Starts, tracks and stops background commands; their output is kept in a file per job. */
export interface JobManager {
  /** Starts `command` (already policy-checked, secrets bound) and returns its id at once. */
  start(args: {
    command: string;
    shownCommand: string;
    cwd: string;
    shownCwd: string;
    env: Record<string, string>;
  }): JobInfo;
  get(id: string): JobInfo;
  list(limit?: number): JobInfo[];
  /** The last `bytes` of a job's output. */
  tail(id: string, bytes: number): { text: string; truncated: boolean };
  /** SIGTERM, then SIGKILL after a grace period; resolves once the job ended. */
  stop(id: string): Promise<JobInfo>;
  /** Stops every running job (node shutdown). */
  close(): Promise<void>;
}

/**
 * Creates the job manager. Jobs still marked running from an earlier process
 * are marked `lost`: their pipes died with that process.
 * @example
 * const jobs = createJobManager({ db, outputDir: path.join(dataDir, 'exec-jobs'), logger, clock, sandbox });
 */
export function createJobManager(options: JobManagerOptions): JobManager {
  const { db, outputDir, logger, clock } = options;
  const maxRunning = options.maxRunning ?? 8;
  const maxOutput = options.maxOutputBytes ?? 10 * 1024 * 1024;
  migrate(db, 'exec_jobs', MIGRATIONS);
  fs.mkdirSync(outputDir, { recursive: true });
  db.prepare(`UPDATE exec_jobs SET status = 'lost', ended_at = ? WHERE status = 'running'`).run(clock().toISOString());

  const children = new Map<string, { command: CommandProcess; done: Promise<void>; stopping: boolean }>();
  const outputFile = (id: string) => path.join(outputDir, `${id}.log`);
  const select = db.prepare('SELECT * FROM exec_jobs WHERE id = ?');
  const toInfo = (row: Record<string, unknown>): JobInfo => ({
    id: row.id as string,
    command: row.command as string,
    cwd: row.cwd as string,
    pid: (row.pid as number | null) ?? null,
    status: row.status as JobStatus,
    exitCode: (row.exit_code as number | null) ?? null,
    signal: (row.signal as string | null) ?? null,
    startedAt: row.started_at as string,
    endedAt: (row.ended_at as string | null) ?? null,
    outputBytes: row.output_bytes as number,
  });
  const get = (id: string): JobInfo => {
    const row = select.get(id) as Record<string, unknown> | undefined;
    if (!row) throw new ToolExecutionError(`no background job "${id}" (see exec_status without an id)`);
    return toInfo(row);
  };

  function start(args: Parameters<JobManager['start']>[0]): JobInfo {
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
    db.prepare(
      `INSERT INTO exec_jobs (id, command, cwd, pid, status, started_at) VALUES (?, ?, ?, ?, 'running', ?)`,
    ).run(id, args.shownCommand, args.shownCwd, child.pid ?? null, clock().toISOString());
    const entry = { command, stopping: false, done: Promise.resolve() };
    entry.done = new Promise<void>((resolve) => {
      const finish = (status: JobStatus, code: number | null, signal: string | null): void => {
        if (!children.has(id)) return;
        children.delete(id);
        fs.closeSync(out);
        db.prepare(
          'UPDATE exec_jobs SET status = ?, exit_code = ?, signal = ?, ended_at = ?, output_bytes = ? WHERE id = ?',
        ).run(status, code, signal, clock().toISOString(), written, id);
        logger.info('background job ended', { id, status, exitCode: code, signal });
        resolve();
      };
      child.on('error', (error) => {
        write(Buffer.from(`\n[failed to start: ${error.message}]\n`));
        finish('failed', null, null);
      });
      child.on('close', (code, signal) => finish(entry.stopping ? 'stopped' : 'exited', code, signal));
    });
    children.set(id, entry);
    logger.info('background job started', { id, command: args.shownCommand, pid: child.pid });
    return get(id);
  }

  async function stop(id: string): Promise<JobInfo> {
    const info = get(id);
    const entry = children.get(id);
    if (!entry) return info;
    entry.stopping = true;
    entry.command.stop('SIGTERM');
    const kill = setTimeout(() => entry.command.stop('SIGKILL'), KILL_GRACE_MS);
    await entry.done;
    clearTimeout(kill);
    return get(id);
  }

  return {
    start,
    get: (id) => {
      const info = get(id);
      const entry = children.get(id);
      return entry ? { ...info, outputBytes: fs.statSync(outputFile(id)).size } : info;
    },
    list: (limit = 50) =>
      (
        db.prepare('SELECT * FROM exec_jobs ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit) as Record<
          string,
          unknown
        >[]
      ).map(toInfo),
    tail(id, bytes) {
      get(id);
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
      await Promise.all([...children.keys()].map((id) => stop(id)));
    },
  };
}
