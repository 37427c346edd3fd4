import { visibleOwner } from '../../principal';
import type { CronJob, CronRun, CronStore } from '../jobs';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
  `CREATE TABLE cron_jobs (
     name TEXT PRIMARY KEY, kind TEXT NOT NULL, schedule TEXT NOT NULL, prompt TEXT NOT NULL,
     status TEXT NOT NULL, anchor_at TEXT NOT NULL, next_run_at TEXT, last_run_at TEXT, created_at TEXT NOT NULL);
   CREATE TABLE cron_runs (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     job_name TEXT NOT NULL REFERENCES cron_jobs(name) ON DELETE CASCADE,
     trigger TEXT NOT NULL, status TEXT NOT NULL, scheduled_for TEXT NOT NULL, started_at TEXT NOT NULL,
     finished_at TEXT, result TEXT, author TEXT);
   CREATE INDEX cron_runs_by_job ON cron_runs(job_name, id);`,
  // Jobs are named within their owner's jobs; jobs created before principals existed are the owner's.
  `CREATE TABLE cron_jobs_by_owner (
     owner TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, schedule TEXT NOT NULL, prompt TEXT NOT NULL,
     status TEXT NOT NULL, anchor_at TEXT NOT NULL, next_run_at TEXT, last_run_at TEXT, created_at TEXT NOT NULL,
     PRIMARY KEY (owner, name));
   INSERT INTO cron_jobs_by_owner SELECT 'owner', name, kind, schedule, prompt, status, anchor_at, next_run_at,
     last_run_at, created_at FROM cron_jobs;
   CREATE TABLE cron_runs_by_owner (
     id INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, job_name TEXT NOT NULL,
     trigger TEXT NOT NULL, status TEXT NOT NULL, scheduled_for TEXT NOT NULL, started_at TEXT NOT NULL,
     finished_at TEXT, result TEXT, author TEXT,
     FOREIGN KEY (owner, job_name) REFERENCES cron_jobs_by_owner (owner, name) ON DELETE CASCADE);
   INSERT INTO cron_runs_by_owner SELECT id, 'owner', job_name, trigger, status, scheduled_for, started_at,
     finished_at, result, author FROM cron_runs;
   DROP TABLE cron_runs;
   DROP TABLE cron_jobs;
   ALTER TABLE cron_jobs_by_owner RENAME TO cron_jobs;
   ALTER TABLE cron_runs_by_owner RENAME TO cron_runs;
   CREATE INDEX cron_runs_by_job ON cron_runs (owner, job_name, id);`,
];

const JOB_COLUMNS = `owner, name, kind, schedule, prompt, status, anchor_at AS anchorAt, next_run_at AS nextRunAt,
  last_run_at AS lastRunAt, created_at AS createdAt`;
const RUN_COLUMNS = `id, job_name AS jobName, trigger, status, scheduled_for AS scheduledFor, started_at AS startedAt,
  finished_at AS finishedAt, result, author`;

/** The {@link CronStore} in SQLite (`cron_jobs`, `cron_runs`). */
export function createSqliteCronStore(options: { db: SqliteDatabase }): CronStore {
  const { db } = options;
  migrate(db, 'automator.cron', STEPS);
  const get = (owner: string, name: string) =>
    db.prepare(`SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE owner = ? AND name = ?`).get(owner, name) as
      CronJob | undefined;
  return {
    async insert(principal, job) {
      return (
        db
          .prepare(
            `INSERT OR IGNORE INTO cron_jobs (owner, name, kind, schedule, prompt, status, anchor_at, next_run_at, last_run_at, created_at)
             VALUES (@owner, @name, @kind, @schedule, @prompt, @status, @anchorAt, @nextRunAt, @lastRunAt, @createdAt)`,
          )
          .run({ ...job, owner: principal.id }).changes > 0
      );
    },
    get: async (principal, name) => get(principal.id, name),
    async list(principal) {
      const owner = visibleOwner(principal) ?? null;
      return db
        .prepare(`SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE (? IS NULL OR owner = ?) ORDER BY name, owner`)
        .all(owner, owner) as CronJob[];
    },
    all: async () => db.prepare(`SELECT ${JOB_COLUMNS} FROM cron_jobs ORDER BY name, owner`).all() as CronJob[],
    async update(principal, name, fields) {
      const current = get(principal.id, name);
      if (!current) return;
      const next = { ...current, ...fields };
      db.prepare('UPDATE cron_jobs SET status = ?, next_run_at = ?, last_run_at = ? WHERE owner = ? AND name = ?').run(
        next.status,
        next.nextRunAt,
        next.lastRunAt,
        principal.id,
        name,
      );
    },
    async remove(principal, name) {
      return db.prepare('DELETE FROM cron_jobs WHERE owner = ? AND name = ?').run(principal.id, name).changes > 0;
    },
    async startRun(principal, run) {
      const info = db
        .prepare(
          `INSERT INTO cron_runs (owner, job_name, trigger, status, scheduled_for, started_at)
           VALUES (@owner, @jobName, @trigger, 'running', @scheduledFor, @startedAt)`,
        )
        .run({ ...run, owner: principal.id });
      return String(info.lastInsertRowid);
    },
    async finishRun(id, fields) {
      db.prepare('UPDATE cron_runs SET status = ?, finished_at = ?, result = ?, author = ? WHERE id = ?').run(
        fields.status,
        fields.finishedAt,
        fields.result,
        fields.author,
        Number(id),
      );
    },
    async history(principal, name, limit) {
      return (
        db
          .prepare(`SELECT ${RUN_COLUMNS} FROM cron_runs WHERE owner = ? AND job_name = ? ORDER BY id DESC LIMIT ?`)
          .all(principal.id, name, limit) as (Omit<CronRun, 'id'> & { id: number })[]
      ).map((r) => ({ ...r, id: String(r.id) }));
    },
    async failInterruptedRuns(finishedAt) {
      return db
        .prepare(
          `UPDATE cron_runs SET status = 'failed', finished_at = ?, result = 'node restarted' WHERE status = 'running'`,
        )
        .run(finishedAt).changes;
    },
  };
}
