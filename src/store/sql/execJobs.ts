import { visibleOwner } from '../../principal';
import type { ExecJob, ExecJobStore } from '../jobs';
import { anyOrEqual } from './dialect';
import { failInterruptedStatement } from './lease';
import type { JobStoreOptions } from './jobs';
import type { StoreSchema } from './sql';

/** Background commands (`exec_bg`). */
export const EXEC_JOB_SCHEMA: StoreSchema = {
  store: 'exec_jobs',
  sqlite: [
    `CREATE TABLE exec_jobs (
       id TEXT PRIMARY KEY, command TEXT NOT NULL, cwd TEXT NOT NULL, pid INTEGER,
       status TEXT NOT NULL, exit_code INTEGER, signal TEXT,
       started_at TEXT NOT NULL, ended_at TEXT, output_bytes INTEGER NOT NULL DEFAULT 0)`,
    `ALTER TABLE exec_jobs ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner'`,
    // The replica running each row, as on PostgreSQL (`../postgres/cluster.ts`): one here, its rows all interrupted at start.
    `ALTER TABLE exec_jobs ADD COLUMN replica TEXT`,
  ],
  postgres: [
    `CREATE TABLE exec_jobs (
       seq BIGSERIAL, id TEXT PRIMARY KEY, owner TEXT NOT NULL, command TEXT NOT NULL, cwd TEXT NOT NULL,
       pid INTEGER, status TEXT NOT NULL, exit_code INTEGER, signal TEXT, started_at TEXT NOT NULL, ended_at TEXT,
       output_bytes BIGINT NOT NULL DEFAULT 0)`,
  ],
};

const EXEC_COLUMNS = `id, owner, command, cwd, pid, status, exit_code AS "exitCode", signal, started_at AS "startedAt",
  ended_at AS "endedAt", output_bytes AS "outputBytes"`;

/** A row as read: PostgreSQL's BIGINT byte count comes as text. */
const toExecJob = (row: ExecJob): ExecJob => ({ ...row, outputBytes: Number(row.outputBytes) });

/** The {@link ExecJobStore} (`exec_jobs`): each command names the replica whose child it is. */
export function createExecJobStore(options: JobStoreOptions): ExecJobStore {
  const { sql, lease } = options;
  // Started at the same time: the later insert first (SQLite has no `seq` here; its rowid counts the same).
  const inserted = sql.dialect === 'sqlite' ? 'rowid' : 'seq';
  return {
    async insert(principal, job) {
      await sql.run(
        `INSERT INTO exec_jobs (id, owner, command, cwd, pid, status, started_at, replica)
         VALUES (?, ?, ?, ?, ?, 'running', ?, ?)`,
        [job.id, principal.id, job.command, job.cwd, job.pid, job.startedAt, lease.replicaId],
      );
    },
    async get(principal, id) {
      const owner = visibleOwner(principal) ?? null;
      const row = await sql.get<ExecJob>(
        `SELECT ${EXEC_COLUMNS} FROM exec_jobs WHERE id = ? AND ${anyOrEqual('owner')}`,
        [id, owner, owner],
      );
      return row && toExecJob(row);
    },
    async list(principal, limit) {
      const owner = visibleOwner(principal) ?? null;
      const found = await sql.all<ExecJob>(
        `SELECT ${EXEC_COLUMNS} FROM exec_jobs WHERE ${anyOrEqual('owner')} ORDER BY started_at DESC, ${inserted} DESC LIMIT ?`,
        [owner, owner, limit],
      );
      return found.map(toExecJob);
    },
    async finish(id, fields) {
      await sql.run(
        'UPDATE exec_jobs SET status = ?, exit_code = ?, signal = ?, ended_at = ?, output_bytes = ? WHERE id = ?',
        [fields.status, fields.exitCode, fields.signal, fields.endedAt, fields.outputBytes, id],
      );
    },
    async markLost(endedAt) {
      const lost = failInterruptedStatement(lease, 'exec_jobs', `status = 'lost', ended_at = ?`, [endedAt]);
      return sql.run(lost.sql, lost.params);
    },
  };
}
