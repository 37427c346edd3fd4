import { visibleOwner } from '../../principal';
import type { ExecJob, ExecJobStatus, ExecJobStore } from '../jobs';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
  `CREATE TABLE exec_jobs (
     id TEXT PRIMARY KEY, command TEXT NOT NULL, cwd TEXT NOT NULL, pid INTEGER,
     status TEXT NOT NULL, exit_code INTEGER, signal TEXT,
     started_at TEXT NOT NULL, ended_at TEXT, output_bytes INTEGER NOT NULL DEFAULT 0)`,
  `ALTER TABLE exec_jobs ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner'`,
];

interface ExecJobRow {
  id: string;
  owner: string;
  command: string;
  cwd: string;
  pid: number | null;
  status: ExecJobStatus;
  exit_code: number | null;
  signal: string | null;
  started_at: string;
  ended_at: string | null;
  output_bytes: number;
}

const toJob = (row: ExecJobRow): ExecJob => ({
  id: row.id,
  owner: row.owner,
  command: row.command,
  cwd: row.cwd,
  pid: row.pid ?? null,
  status: row.status,
  exitCode: row.exit_code ?? null,
  signal: row.signal ?? null,
  startedAt: row.started_at,
  endedAt: row.ended_at ?? null,
  outputBytes: row.output_bytes,
});

/** The {@link ExecJobStore} in SQLite (`exec_jobs`). */
export function createSqliteExecJobStore(options: { db: SqliteDatabase }): ExecJobStore {
  const { db } = options;
  migrate(db, 'exec_jobs', STEPS);
  return {
    async insert(principal, job) {
      db.prepare(
        `INSERT INTO exec_jobs (id, owner, command, cwd, pid, status, started_at) VALUES (?, ?, ?, ?, ?, 'running', ?)`,
      ).run(job.id, principal.id, job.command, job.cwd, job.pid, job.startedAt);
    },
    async get(principal, id) {
      const owner = visibleOwner(principal) ?? null;
      const row = db
        .prepare('SELECT * FROM exec_jobs WHERE id = ? AND (? IS NULL OR owner = ?)')
        .get(id, owner, owner) as ExecJobRow | undefined;
      return row && toJob(row);
    },
    async list(principal, limit) {
      const owner = visibleOwner(principal) ?? null;
      return (
        db
          .prepare(
            'SELECT * FROM exec_jobs WHERE (? IS NULL OR owner = ?) ORDER BY started_at DESC, rowid DESC LIMIT ?',
          )
          .all(owner, owner, limit) as ExecJobRow[]
      ).map(toJob);
    },
    async finish(id, fields) {
      db.prepare(
        'UPDATE exec_jobs SET status = ?, exit_code = ?, signal = ?, ended_at = ?, output_bytes = ? WHERE id = ?',
      ).run(fields.status, fields.exitCode, fields.signal, fields.endedAt, fields.outputBytes, id);
    },
    async markLost(endedAt) {
      return db.prepare(`UPDATE exec_jobs SET status = 'lost', ended_at = ? WHERE status = 'running'`).run(endedAt)
        .changes;
    },
  };
}
