import { visibleOwner, type Principal } from '../../principal';
import type * as jobs from '../jobs';
import { anyOrEqual, bytewise } from './dialect';
import { failInterruptedStatement, type Lease } from './lease';
import { rowId } from './rows';
import type { Sql, StoreSchema } from './sql';

/** Cron jobs (named within their owner's) and their runs. */
export const CRON_SCHEMA: StoreSchema = {
  store: 'automator.cron',
  sqlite: [
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
    // The replica running each row, as on PostgreSQL (`../postgres/cluster.ts`): one here, its rows all interrupted at start.
    `ALTER TABLE cron_runs ADD COLUMN replica TEXT`,
  ],
  postgres: [
    `CREATE TABLE cron_jobs (
       owner TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, schedule TEXT NOT NULL, prompt TEXT NOT NULL,
       status TEXT NOT NULL, anchor_at TEXT NOT NULL, next_run_at TEXT, last_run_at TEXT, created_at TEXT NOT NULL,
       PRIMARY KEY (owner, name));
     CREATE TABLE cron_runs (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, job_name TEXT NOT NULL, trigger TEXT NOT NULL,
       status TEXT NOT NULL, scheduled_for TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, result TEXT,
       author TEXT, FOREIGN KEY (owner, job_name) REFERENCES cron_jobs (owner, name) ON DELETE CASCADE);
     CREATE INDEX cron_runs_by_job ON cron_runs (owner, job_name, id);`,
  ],
};

/** Background prompts, in submission order (`seq`). */
export const BACKGROUND_SCHEMA: StoreSchema = {
  store: 'automator.background',
  sqlite: [
    `CREATE TABLE bg_jobs (
       seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, label TEXT, prompt TEXT NOT NULL,
       status TEXT NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT);
     CREATE INDEX bg_jobs_by_status ON bg_jobs(status, seq);`,
    `ALTER TABLE bg_jobs ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
     CREATE INDEX bg_jobs_by_owner ON bg_jobs(owner, seq);`,
    // The replica running each row, as on PostgreSQL (`../postgres/cluster.ts`): one here, its rows all interrupted at start.
    `ALTER TABLE bg_jobs ADD COLUMN replica TEXT`,
  ],
  postgres: [
    `CREATE TABLE bg_jobs (
       seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, label TEXT, prompt TEXT NOT NULL,
       status TEXT NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT);
     CREATE INDEX bg_jobs_by_status ON bg_jobs (status, seq);
     CREATE INDEX bg_jobs_by_owner ON bg_jobs (owner, seq);`,
  ],
};

/** Saved workflows (named within their owner's), their runs and each step. */
export const WORKFLOW_SCHEMA: StoreSchema = {
  store: 'automator.workflow',
  sqlite: [
    `CREATE TABLE workflow_defs (name TEXT PRIMARY KEY, description TEXT, yaml TEXT NOT NULL, saved_at TEXT NOT NULL);
     CREATE TABLE workflow_runs (
       seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, workflow_name TEXT NOT NULL, yaml TEXT NOT NULL,
       status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, error TEXT);
     CREATE TABLE workflow_steps (
       run_id TEXT NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE, step_id TEXT NOT NULL, position INTEGER NOT NULL,
       agent TEXT, status TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT,
       PRIMARY KEY (run_id, step_id));`,
    // Definitions are named within their owner's; definitions and runs from before principals are the owner's.
    `CREATE TABLE workflow_defs_by_owner (
       owner TEXT NOT NULL, name TEXT NOT NULL, description TEXT, yaml TEXT NOT NULL, saved_at TEXT NOT NULL,
       PRIMARY KEY (owner, name));
     INSERT INTO workflow_defs_by_owner SELECT 'owner', name, description, yaml, saved_at FROM workflow_defs;
     DROP TABLE workflow_defs;
     ALTER TABLE workflow_defs_by_owner RENAME TO workflow_defs;
     ALTER TABLE workflow_runs ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
     CREATE INDEX workflow_runs_by_owner ON workflow_runs (owner, seq);`,
    // The replica running each row, as on PostgreSQL (`../postgres/cluster.ts`): one here, its rows all interrupted at start.
    `ALTER TABLE workflow_runs ADD COLUMN replica TEXT`,
  ],
  postgres: [
    `CREATE TABLE workflow_defs (
       owner TEXT NOT NULL, name TEXT NOT NULL, description TEXT, yaml TEXT NOT NULL, saved_at TEXT NOT NULL,
       PRIMARY KEY (owner, name));
     CREATE TABLE workflow_runs (
       seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, workflow_name TEXT NOT NULL,
       yaml TEXT NOT NULL, status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, error TEXT);
     CREATE INDEX workflow_runs_by_owner ON workflow_runs (owner, seq);
     CREATE TABLE workflow_steps (
       run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE, step_id TEXT NOT NULL,
       position INTEGER NOT NULL, agent TEXT, status TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT,
       author TEXT, PRIMARY KEY (run_id, step_id));`,
  ],
};

const JOB_COLUMNS = `owner, name, kind, schedule, prompt, status, anchor_at AS "anchorAt", next_run_at AS "nextRunAt",
  last_run_at AS "lastRunAt", created_at AS "createdAt"`;
const RUN_COLUMNS = `id, job_name AS "jobName", trigger, status, scheduled_for AS "scheduledFor",
  started_at AS "startedAt", finished_at AS "finishedAt", result, author`;

/** Options of the job stores: the database and this process's {@link Lease}. */
export interface JobStoreOptions {
  sql: Sql;
  lease: Lease;
}

/** `ORDER BY name, owner`, byte-wise on both databases. */
const byName = (sql: Sql) => `ORDER BY ${bytewise(sql.dialect, 'name')}, ${bytewise(sql.dialect, 'owner')}`;

/**
 * The {@link jobs.CronStore}. A run is unique per (job, scheduled time, trigger)
 * on PostgreSQL: of replicas firing the same job at the same time, one
 * records the run and runs it.
 */
export function createCronStore(options: JobStoreOptions): jobs.CronStore {
  const { sql, lease } = options;
  const get = (owner: string, name: string) =>
    sql.get<jobs.CronJob>(`SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE owner = ? AND name = ?`, [owner, name]);
  return {
    async insert(principal, job) {
      const inserted = await sql.run(
        `INSERT INTO cron_jobs (owner, name, kind, schedule, prompt, status, anchor_at, next_run_at, last_run_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        [
          principal.id,
          job.name,
          job.kind,
          job.schedule,
          job.prompt,
          job.status,
          job.anchorAt,
          job.nextRunAt,
          job.lastRunAt,
          job.createdAt,
        ],
      );
      return inserted > 0;
    },
    get: (principal, name) => get(principal.id, name),
    list(principal) {
      const owner = visibleOwner(principal) ?? null;
      return sql.all<jobs.CronJob>(`SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE ${anyOrEqual('owner')} ${byName(sql)}`, [
        owner,
        owner,
      ]);
    },
    all: () => sql.all<jobs.CronJob>(`SELECT ${JOB_COLUMNS} FROM cron_jobs ${byName(sql)}`),
    async update(principal, name, fields) {
      // Only the fields given change: a concurrent update of another field is not overwritten with a stale copy.
      const sets: string[] = [];
      const params: unknown[] = [];
      for (const [field, column] of [
        ['status', 'status'],
        ['nextRunAt', 'next_run_at'],
        ['lastRunAt', 'last_run_at'],
      ] as const) {
        if (field in fields) {
          sets.push(`${column} = ?`);
          params.push(fields[field] ?? null);
        }
      }
      if (sets.length === 0) return;
      await sql.run(`UPDATE cron_jobs SET ${sets.join(', ')} WHERE owner = ? AND name = ?`, [
        ...params,
        principal.id,
        name,
      ]);
    },
    async remove(principal, name) {
      return (await sql.run('DELETE FROM cron_jobs WHERE owner = ? AND name = ?', [principal.id, name])) > 0;
    },
    async startRun(principal, run) {
      const row = await sql.get<{ id: number | string }>(
        `INSERT INTO cron_runs (owner, job_name, trigger, status, scheduled_for, started_at, replica)
         VALUES (?, ?, ?, 'running', ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
        [principal.id, run.jobName, run.trigger, run.scheduledFor, run.startedAt, lease.replicaId],
      );
      return row && String(row.id);
    },
    async finishRun(id, fields) {
      const wanted = rowId(id);
      if (wanted === undefined) return;
      await sql.run('UPDATE cron_runs SET status = ?, finished_at = ?, result = ?, author = ? WHERE id = ?', [
        fields.status,
        fields.finishedAt,
        fields.result,
        fields.author,
        wanted,
      ]);
    },
    async history(principal, name, limit) {
      const found = await sql.all<jobs.CronRun>(
        `SELECT ${RUN_COLUMNS} FROM cron_runs WHERE owner = ? AND job_name = ? ORDER BY id DESC LIMIT ?`,
        [principal.id, name, limit],
      );
      return found.map((r) => ({ ...r, id: String(r.id) }));
    },
    async failInterruptedRuns(finishedAt) {
      const failed = failInterruptedStatement(
        lease,
        'cron_runs',
        `status = 'failed', finished_at = ?, result = $reason`,
        [finishedAt],
      );
      return sql.run(failed.sql, failed.params);
    },
  };
}

const BACKGROUND_COLUMNS = `id, owner, label, prompt, status, created_at AS "createdAt", started_at AS "startedAt",
  finished_at AS "finishedAt", result, author`;

/** The {@link jobs.BackgroundJobStore} (`bg_jobs`): a queued job is claimed by one replica. */
export function createBackgroundJobStore(options: JobStoreOptions): jobs.BackgroundJobStore {
  const { sql, lease } = options;
  return {
    async insert(principal, job) {
      await sql.run(
        `INSERT INTO bg_jobs (id, owner, label, prompt, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?)`,
        [job.id, principal.id, job.label, job.prompt, job.createdAt],
      );
    },
    get(principal, id) {
      const owner = visibleOwner(principal) ?? null;
      return sql.get<jobs.BackgroundJob>(
        `SELECT ${BACKGROUND_COLUMNS} FROM bg_jobs WHERE id = ? AND ${anyOrEqual('owner')}`,
        [id, owner, owner],
      );
    },
    list(principal, options) {
      const owner = visibleOwner(principal) ?? null;
      const status = options.status ?? null;
      return sql.all<jobs.BackgroundJob>(
        `SELECT ${BACKGROUND_COLUMNS} FROM bg_jobs WHERE ${anyOrEqual('owner')} AND ${anyOrEqual('status')}
         ORDER BY seq DESC LIMIT ?`,
        [owner, owner, status, status, options.limit],
      );
    },
    queued: () =>
      sql.all<jobs.BackgroundJob>(`SELECT ${BACKGROUND_COLUMNS} FROM bg_jobs WHERE status = 'queued' ORDER BY seq`),
    async markRunning(id, startedAt) {
      const claimed = await sql.run(
        `UPDATE bg_jobs SET status = 'running', started_at = ?, replica = ? WHERE id = ? AND status = 'queued'`,
        [startedAt, lease.replicaId, id],
      );
      return claimed > 0;
    },
    async finish(id, fields) {
      await sql.run('UPDATE bg_jobs SET status = ?, finished_at = ?, result = ?, author = ? WHERE id = ?', [
        fields.status,
        fields.finishedAt,
        fields.result,
        fields.author,
        id,
      ]);
    },
    async failInterrupted(finishedAt) {
      const failed = failInterruptedStatement(
        lease,
        'bg_jobs',
        `status = 'failed', finished_at = ?, result = $reason`,
        [finishedAt],
      );
      return sql.run(failed.sql, failed.params);
    },
  };
}

const DEF_COLUMNS = 'owner, name, description, yaml, saved_at AS "savedAt"';
const WORKFLOW_RUN_COLUMNS = `id, owner, workflow_name AS "workflowName", status, started_at AS "startedAt",
  finished_at AS "finishedAt", error`;
const STEP_COLUMNS = `step_id AS "stepId", agent, status, started_at AS "startedAt", finished_at AS "finishedAt",
  result, author`;

/** The {@link jobs.WorkflowStore}: each run names the replica running it. */
export function createWorkflowStore(options: JobStoreOptions): jobs.WorkflowStore {
  const { sql, lease } = options;
  const visibleRun = (principal: Principal, id: string) => {
    const owner = visibleOwner(principal) ?? null;
    return sql.get<jobs.WorkflowRun>(
      `SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs WHERE id = ? AND ${anyOrEqual('owner')}`,
      [id, owner, owner],
    );
  };
  return {
    async save(principal, workflow) {
      await sql.run(
        `INSERT INTO workflow_defs (owner, name, description, yaml, saved_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (owner, name) DO UPDATE
           SET description = excluded.description, yaml = excluded.yaml, saved_at = excluded.saved_at`,
        [principal.id, workflow.name, workflow.description, workflow.yaml, workflow.savedAt],
      );
    },
    getSaved: (principal, name) =>
      sql.get<jobs.SavedWorkflow>(`SELECT ${DEF_COLUMNS} FROM workflow_defs WHERE owner = ? AND name = ?`, [
        principal.id,
        name,
      ]),
    listSaved(principal) {
      const owner = visibleOwner(principal) ?? null;
      return sql.all<jobs.SavedWorkflow>(
        `SELECT ${DEF_COLUMNS} FROM workflow_defs WHERE ${anyOrEqual('owner')} ${byName(sql)}`,
        [owner, owner],
      );
    },
    async createRun(principal, run, steps) {
      await sql.transaction(async (tx) => {
        await tx.run(
          `INSERT INTO workflow_runs (id, owner, workflow_name, yaml, status, started_at, replica)
           VALUES (?, ?, ?, ?, 'running', ?, ?)`,
          [run.id, principal.id, run.workflowName, run.yaml, run.startedAt, lease.replicaId],
        );
        for (const [position, step] of steps.entries())
          await tx.run(
            `INSERT INTO workflow_steps (run_id, step_id, position, agent, status) VALUES (?, ?, ?, ?, 'pending')`,
            [run.id, step.id, position, step.agent ?? null],
          );
      });
    },
    getRun: (principal, id) => visibleRun(principal, id),
    listRuns(principal, limit) {
      const owner = visibleOwner(principal) ?? null;
      return sql.all<jobs.WorkflowRun>(
        `SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs WHERE ${anyOrEqual('owner')} ORDER BY seq DESC LIMIT ?`,
        [owner, owner, limit],
      );
    },
    async steps(principal, runId) {
      if (!(await visibleRun(principal, runId))) return [];
      return sql.all<jobs.WorkflowStepRecord>(
        `SELECT ${STEP_COLUMNS} FROM workflow_steps WHERE run_id = ? ORDER BY position`,
        [runId],
      );
    },
    async startStep(runId, stepId, startedAt) {
      await sql.run(`UPDATE workflow_steps SET status = 'running', started_at = ? WHERE run_id = ? AND step_id = ?`, [
        startedAt,
        runId,
        stepId,
      ]);
    },
    async finishStep(runId, stepId, fields) {
      await sql.run(
        `UPDATE workflow_steps SET status = ?, finished_at = ?, result = ?, author = ? WHERE run_id = ? AND step_id = ?`,
        [fields.status, fields.finishedAt, fields.result, fields.author, runId, stepId],
      );
    },
    async finishRun(id, fields) {
      await sql.run('UPDATE workflow_runs SET status = ?, finished_at = ?, error = ? WHERE id = ?', [
        fields.status,
        fields.finishedAt,
        fields.error,
        id,
      ]);
    },
    failInterrupted: (finishedAt) =>
      sql.transaction(async (tx) => {
        const { interrupted, reason } = lease;
        // A step's reason is its run's: the run's replica decides it.
        await tx.run(
          `UPDATE workflow_steps SET status = CASE status WHEN 'running' THEN 'failed' ELSE 'cancelled' END,
             finished_at = ?,
             result = CASE status WHEN 'running' THEN
               (SELECT ${reason.sql} FROM workflow_runs r WHERE r.id = workflow_steps.run_id) ELSE result END
           WHERE status IN ('running', 'pending')
             AND run_id IN (SELECT id FROM workflow_runs WHERE status = 'running' AND ${interrupted.sql})`,
          [finishedAt, ...reason.params, ...interrupted.params],
        );
        const failed = failInterruptedStatement(
          lease,
          'workflow_runs',
          `status = 'failed', finished_at = ?, error = $reason`,
          [finishedAt],
        );
        return tx.run(failed.sql, failed.params);
      }),
  };
}
