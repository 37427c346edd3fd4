import { migrate, type SqliteDatabase } from '../../store/database';
import type { ScheduleKind } from './schedule';

/** A job's state: `done` is a one-time job that has fired. */
export type CronJobStatus = 'active' | 'paused' | 'done';
/** Why a run happened: on schedule, or the one catch-up run after downtime. */
export type CronTrigger = 'schedule' | 'catch-up';
/** How a run ended (`running` while it is under way). */
export type CronRunStatus = 'running' | 'completed' | 'input-required' | 'failed' | 'cancelled';

/** A persisted cron job. Times are ISO strings. */
export interface CronJob {
  name: string;
  kind: ScheduleKind;
  schedule: string;
  prompt: string;
  status: CronJobStatus;
  /** Where `every` intervals count from: the job's creation. */
  anchorAt: string;
  nextRunAt: string | null;
  lastRunAt: string | null;
  createdAt: string;
}

/** One recorded run of a job. */
export interface CronRun {
  id: number;
  jobName: string;
  trigger: CronTrigger;
  status: CronRunStatus;
  scheduledFor: string;
  startedAt: string;
  finishedAt: string | null;
  result: string | null;
  author: string | null;
}

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
];

const JOB_COLUMNS = `name, kind, schedule, prompt, status, anchor_at AS anchorAt, next_run_at AS nextRunAt,
  last_run_at AS lastRunAt, created_at AS createdAt`;
const RUN_COLUMNS = `id, job_name AS jobName, trigger, status, scheduled_for AS scheduledFor, started_at AS startedAt,
  finished_at AS finishedAt, result, author`;

/**
 * SQLite persistence for cron jobs and their run history, so jobs survive a
 * restart and `cron_history` can show what happened while nobody watched.
 */
export class CronStore {
  constructor(private readonly db: SqliteDatabase) {
    migrate(db, 'automator.cron', STEPS);
  }

  insert(job: CronJob): void {
    this.db
      .prepare(
        `INSERT INTO cron_jobs (name, kind, schedule, prompt, status, anchor_at, next_run_at, last_run_at, created_at)
         VALUES (@name, @kind, @schedule, @prompt, @status, @anchorAt, @nextRunAt, @lastRunAt, @createdAt)`,
      )
      .run(job);
  }

  get(name: string): CronJob | undefined {
    return this.db.prepare(`SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE name = ?`).get(name) as CronJob | undefined;
  }

  list(): CronJob[] {
    return this.db.prepare(`SELECT ${JOB_COLUMNS} FROM cron_jobs ORDER BY name`).all() as CronJob[];
  }

  update(name: string, fields: Partial<Pick<CronJob, 'status' | 'nextRunAt' | 'lastRunAt'>>): void {
    const current = this.get(name);
    if (!current) return;
    const next = { ...current, ...fields };
    this.db
      .prepare('UPDATE cron_jobs SET status = ?, next_run_at = ?, last_run_at = ? WHERE name = ?')
      .run(next.status, next.nextRunAt, next.lastRunAt, name);
  }

  /** Removes the job and its history; true when it existed. */
  remove(name: string): boolean {
    return this.db.prepare('DELETE FROM cron_jobs WHERE name = ?').run(name).changes > 0;
  }

  startRun(run: Omit<CronRun, 'id' | 'status' | 'finishedAt' | 'result' | 'author'>): number {
    const info = this.db
      .prepare(
        `INSERT INTO cron_runs (job_name, trigger, status, scheduled_for, started_at)
         VALUES (@jobName, @trigger, 'running', @scheduledFor, @startedAt)`,
      )
      .run(run);
    return Number(info.lastInsertRowid);
  }

  finishRun(
    id: number,
    fields: { status: CronRunStatus; finishedAt: string; result: string; author: string | null },
  ): void {
    this.db
      .prepare('UPDATE cron_runs SET status = ?, finished_at = ?, result = ?, author = ? WHERE id = ?')
      .run(fields.status, fields.finishedAt, fields.result, fields.author, id);
  }

  /** Most recent runs first. */
  history(name: string, limit: number): CronRun[] {
    return this.db
      .prepare(`SELECT ${RUN_COLUMNS} FROM cron_runs WHERE job_name = ? ORDER BY id DESC LIMIT ?`)
      .all(name, limit) as CronRun[];
  }

  /** Runs left `running` by a process that died: they will never finish. */
  failInterruptedRuns(finishedAt: string): number {
    return this.db
      .prepare(
        `UPDATE cron_runs SET status = 'failed', finished_at = ?, result = 'node restarted' WHERE status = 'running'`,
      )
      .run(finishedAt).changes;
  }
}
