import { visibleOwner, type Principal } from '../../principal';
import type {
  BackgroundJob,
  BackgroundJobStore,
  CronJob,
  CronRun,
  CronStore,
  ExecJob,
  ExecJobStatus,
  ExecJobStore,
  SavedWorkflow,
  WorkflowRun,
  WorkflowStepRecord,
  WorkflowStore,
} from '../jobs';
import { INTERRUPTED, INTERRUPTED_REASON, type ReplicaScope } from './cluster';
import { rowIds, rows, transaction, type PgDatabase, type PgSchema } from './database';

/** Cron jobs (named within their owner's) and their runs. */
export const CRON_SCHEMA: PgSchema = {
  store: 'automator.cron',
  steps: [
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

const JOB_COLUMNS = `owner, name, kind, schedule, prompt, status, anchor_at AS "anchorAt", next_run_at AS "nextRunAt",
  last_run_at AS "lastRunAt", created_at AS "createdAt"`;
const RUN_COLUMNS = `id, job_name AS "jobName", trigger, status, scheduled_for AS "scheduledFor",
  started_at AS "startedAt", finished_at AS "finishedAt", result, author`;
const BY_NAME = 'ORDER BY name COLLATE "C", owner COLLATE "C"';

/**
 * The {@link CronStore} on PostgreSQL. A run is unique per (job, scheduled
 * time, trigger): of replicas firing the same job at the same time, one
 * records the run and runs it.
 */
export function createPgCronStore(options: { db: PgDatabase; replica: ReplicaScope }): CronStore {
  const { db, replica } = options;
  const get = async (owner: string, name: string) =>
    (await rows<CronJob>(db, `SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE owner = $1 AND name = $2`, [owner, name]))[0];
  return {
    async insert(principal, job) {
      const result = await db.query(
        `INSERT INTO cron_jobs (owner, name, kind, schedule, prompt, status, anchor_at, next_run_at, last_run_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
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
      return (result.rowCount ?? 0) > 0;
    },
    get: async (principal, name) => get(principal.id, name),
    list: async (principal) =>
      rows<CronJob>(db, `SELECT ${JOB_COLUMNS} FROM cron_jobs WHERE ($1::text IS NULL OR owner = $1) ${BY_NAME}`, [
        visibleOwner(principal) ?? null,
      ]),
    all: async () => rows<CronJob>(db, `SELECT ${JOB_COLUMNS} FROM cron_jobs ${BY_NAME}`),
    async update(principal, name, fields) {
      // Only the fields given change: a concurrent update of another field is not overwritten with a stale copy.
      const sets: string[] = [];
      const params: unknown[] = [principal.id, name];
      for (const [field, column] of [
        ['status', 'status'],
        ['nextRunAt', 'next_run_at'],
        ['lastRunAt', 'last_run_at'],
      ] as const) {
        if (field in fields) {
          params.push(fields[field] ?? null);
          sets.push(`${column} = $${params.length}`);
        }
      }
      if (sets.length === 0) return;
      await db.query(`UPDATE cron_jobs SET ${sets.join(', ')} WHERE owner = $1 AND name = $2`, params);
    },
    async remove(principal, name) {
      const result = await db.query('DELETE FROM cron_jobs WHERE owner = $1 AND name = $2', [principal.id, name]);
      return (result.rowCount ?? 0) > 0;
    },
    async startRun(principal, run) {
      const [row] = await rows<{ id: string }>(
        db,
        `INSERT INTO cron_runs (owner, job_name, trigger, status, scheduled_for, started_at, replica)
         VALUES ($1, $2, $3, 'running', $4, $5, $6)
         ON CONFLICT (owner, job_name, scheduled_for, trigger) DO NOTHING RETURNING id`,
        [principal.id, run.jobName, run.trigger, run.scheduledFor, run.startedAt, replica.replicaId],
      );
      return row && String(row.id);
    },
    async finishRun(id, fields) {
      const [wanted] = rowIds([id]);
      if (wanted === undefined) return;
      await db.query('UPDATE cron_runs SET status = $1, finished_at = $2, result = $3, author = $4 WHERE id = $5', [
        fields.status,
        fields.finishedAt,
        fields.result,
        fields.author,
        wanted,
      ]);
    },
    async history(principal, name, limit) {
      return (
        await rows<CronRun>(
          db,
          `SELECT ${RUN_COLUMNS} FROM cron_runs WHERE owner = $1 AND job_name = $2 ORDER BY id DESC LIMIT $3`,
          [principal.id, name, limit],
        )
      ).map((r) => ({ ...r, id: String(r.id) }));
    },
    async failInterruptedRuns(finishedAt) {
      const result = await db.query(
        `UPDATE cron_runs SET status = 'failed', finished_at = $3, result = ${INTERRUPTED_REASON}
         WHERE status = 'running' AND ${INTERRUPTED}`,
        [replica.replicaId, replica.leaseMs, finishedAt],
      );
      return result.rowCount ?? 0;
    },
  };
}

/** Background prompts, in submission order (`seq`). */
export const BACKGROUND_SCHEMA: PgSchema = {
  store: 'automator.background',
  steps: [
    `CREATE TABLE bg_jobs (
       seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, label TEXT, prompt TEXT NOT NULL,
       status TEXT NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT);
     CREATE INDEX bg_jobs_by_status ON bg_jobs (status, seq);
     CREATE INDEX bg_jobs_by_owner ON bg_jobs (owner, seq);`,
  ],
};

const BACKGROUND_COLUMNS = `id, owner, label, prompt, status, created_at AS "createdAt", started_at AS "startedAt",
  finished_at AS "finishedAt", result, author`;

/** The {@link BackgroundJobStore} on PostgreSQL (`bg_jobs`): a queued job is claimed by one replica. */
export function createPgBackgroundJobStore(options: { db: PgDatabase; replica: ReplicaScope }): BackgroundJobStore {
  const { db, replica } = options;
  return {
    async insert(principal, job) {
      await db.query(
        `INSERT INTO bg_jobs (id, owner, label, prompt, status, created_at) VALUES ($1, $2, $3, $4, 'queued', $5)`,
        [job.id, principal.id, job.label, job.prompt, job.createdAt],
      );
    },
    async get(principal, id) {
      return (
        await rows<BackgroundJob>(
          db,
          `SELECT ${BACKGROUND_COLUMNS} FROM bg_jobs WHERE id = $1 AND ($2::text IS NULL OR owner = $2)`,
          [id, visibleOwner(principal) ?? null],
        )
      )[0];
    },
    list: async (principal, options) =>
      rows<BackgroundJob>(
        db,
        `SELECT ${BACKGROUND_COLUMNS} FROM bg_jobs WHERE ($1::text IS NULL OR owner = $1)
         AND ($2::text IS NULL OR status = $2) ORDER BY seq DESC LIMIT $3`,
        [visibleOwner(principal) ?? null, options.status ?? null, options.limit],
      ),
    queued: async () =>
      rows<BackgroundJob>(db, `SELECT ${BACKGROUND_COLUMNS} FROM bg_jobs WHERE status = 'queued' ORDER BY seq`),
    async markRunning(id, startedAt) {
      const result = await db.query(
        `UPDATE bg_jobs SET status = 'running', started_at = $1, replica = $3 WHERE id = $2 AND status = 'queued'`,
        [startedAt, id, replica.replicaId],
      );
      return (result.rowCount ?? 0) > 0;
    },
    async finish(id, fields) {
      await db.query('UPDATE bg_jobs SET status = $1, finished_at = $2, result = $3, author = $4 WHERE id = $5', [
        fields.status,
        fields.finishedAt,
        fields.result,
        fields.author,
        id,
      ]);
    },
    async failInterrupted(finishedAt) {
      const result = await db.query(
        `UPDATE bg_jobs SET status = 'failed', finished_at = $3, result = ${INTERRUPTED_REASON}
         WHERE status = 'running' AND ${INTERRUPTED}`,
        [replica.replicaId, replica.leaseMs, finishedAt],
      );
      return result.rowCount ?? 0;
    },
  };
}

/** Saved workflows (named within their owner's), their runs and each step. */
export const WORKFLOW_SCHEMA: PgSchema = {
  store: 'automator.workflow',
  steps: [
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

const DEF_COLUMNS = 'owner, name, description, yaml, saved_at AS "savedAt"';
const WORKFLOW_RUN_COLUMNS = `id, owner, workflow_name AS "workflowName", status, started_at AS "startedAt",
  finished_at AS "finishedAt", error`;
const STEP_COLUMNS = `step_id AS "stepId", agent, status, started_at AS "startedAt", finished_at AS "finishedAt",
  result, author`;

/** The {@link WorkflowStore} on PostgreSQL: each run names the replica running it. */
export function createPgWorkflowStore(options: { db: PgDatabase; replica: ReplicaScope }): WorkflowStore {
  const { db, replica } = options;
  const visibleRun = async (principal: Principal, id: string) =>
    (
      await rows<WorkflowRun>(
        db,
        `SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs WHERE id = $1 AND ($2::text IS NULL OR owner = $2)`,
        [id, visibleOwner(principal) ?? null],
      )
    )[0];
  return {
    async save(principal, workflow) {
      await db.query(
        `INSERT INTO workflow_defs (owner, name, description, yaml, saved_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (owner, name) DO UPDATE
           SET description = EXCLUDED.description, yaml = EXCLUDED.yaml, saved_at = EXCLUDED.saved_at`,
        [principal.id, workflow.name, workflow.description, workflow.yaml, workflow.savedAt],
      );
    },
    getSaved: async (principal, name) =>
      (
        await rows<SavedWorkflow>(db, `SELECT ${DEF_COLUMNS} FROM workflow_defs WHERE owner = $1 AND name = $2`, [
          principal.id,
          name,
        ])
      )[0],
    listSaved: async (principal) =>
      rows<SavedWorkflow>(
        db,
        `SELECT ${DEF_COLUMNS} FROM workflow_defs WHERE ($1::text IS NULL OR owner = $1) ${BY_NAME}`,
        [visibleOwner(principal) ?? null],
      ),
    async createRun(principal, run, steps) {
      await transaction(db, async (client) => {
        await client.query(
          `INSERT INTO workflow_runs (id, owner, workflow_name, yaml, status, started_at, replica)
           VALUES ($1, $2, $3, $4, 'running', $5, $6)`,
          [run.id, principal.id, run.workflowName, run.yaml, run.startedAt, replica.replicaId],
        );
        if (steps.length === 0) return;
        await client.query(
          `INSERT INTO workflow_steps (run_id, step_id, position, agent, status)
           SELECT $1, s, n - 1, a, 'pending' FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(s, a, n)`,
          [run.id, steps.map((s) => s.id), steps.map((s) => s.agent ?? null)],
        );
      });
    },
    getRun: async (principal, id) => visibleRun(principal, id),
    listRuns: async (principal, limit) =>
      rows<WorkflowRun>(
        db,
        `SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs WHERE ($1::text IS NULL OR owner = $1)
         ORDER BY seq DESC LIMIT $2`,
        [visibleOwner(principal) ?? null, limit],
      ),
    async steps(principal, runId) {
      if (!(await visibleRun(principal, runId))) return [];
      return rows<WorkflowStepRecord>(
        db,
        `SELECT ${STEP_COLUMNS} FROM workflow_steps WHERE run_id = $1 ORDER BY position`,
        [runId],
      );
    },
    async startStep(runId, stepId, startedAt) {
      await db.query(
        `UPDATE workflow_steps SET status = 'running', started_at = $1 WHERE run_id = $2 AND step_id = $3`,
        [startedAt, runId, stepId],
      );
    },
    async finishStep(runId, stepId, fields) {
      await db.query(
        `UPDATE workflow_steps SET status = $1, finished_at = $2, result = $3, author = $4
         WHERE run_id = $5 AND step_id = $6`,
        [fields.status, fields.finishedAt, fields.result, fields.author, runId, stepId],
      );
    },
    async finishRun(id, fields) {
      await db.query('UPDATE workflow_runs SET status = $1, finished_at = $2, error = $3 WHERE id = $4', [
        fields.status,
        fields.finishedAt,
        fields.error,
        id,
      ]);
    },
    async failInterrupted(finishedAt) {
      return transaction(db, async (client) => {
        const params = [replica.replicaId, replica.leaseMs, finishedAt];
        await client.query(
          `UPDATE workflow_steps s SET status = CASE s.status WHEN 'running' THEN 'failed' ELSE 'cancelled' END,
             finished_at = $3,
             result = CASE s.status WHEN 'running' THEN (SELECT ${INTERRUPTED_REASON} FROM workflow_runs WHERE id = s.run_id)
               ELSE s.result END
           WHERE s.status IN ('running', 'pending')
             AND s.run_id IN (SELECT id FROM workflow_runs WHERE status = 'running' AND ${INTERRUPTED})`,
          params,
        );
        const result = await client.query(
          `UPDATE workflow_runs SET status = 'failed', finished_at = $3, error = ${INTERRUPTED_REASON}
           WHERE status = 'running' AND ${INTERRUPTED}`,
          params,
        );
        return result.rowCount ?? 0;
      });
    },
  };
}

/** Background commands (`exec_bg`). */
export const EXEC_JOB_SCHEMA: PgSchema = {
  store: 'exec_jobs',
  steps: [
    `CREATE TABLE exec_jobs (
       seq BIGSERIAL, id TEXT PRIMARY KEY, owner TEXT NOT NULL, command TEXT NOT NULL, cwd TEXT NOT NULL,
       pid INTEGER, status TEXT NOT NULL, exit_code INTEGER, signal TEXT, started_at TEXT NOT NULL, ended_at TEXT,
       output_bytes BIGINT NOT NULL DEFAULT 0)`,
  ],
};

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
  output_bytes: string;
}

const toExecJob = (row: ExecJobRow): ExecJob => ({
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
  outputBytes: Number(row.output_bytes),
});

/** The {@link ExecJobStore} on PostgreSQL (`exec_jobs`): each command names the replica whose child it is. */
export function createPgExecJobStore(options: { db: PgDatabase; replica: ReplicaScope }): ExecJobStore {
  const { db, replica } = options;
  return {
    async insert(principal, job) {
      await db.query(
        `INSERT INTO exec_jobs (id, owner, command, cwd, pid, status, started_at, replica)
         VALUES ($1, $2, $3, $4, $5, 'running', $6, $7)`,
        [job.id, principal.id, job.command, job.cwd, job.pid, job.startedAt, replica.replicaId],
      );
    },
    async get(principal, id) {
      const [row] = await rows<ExecJobRow>(
        db,
        'SELECT * FROM exec_jobs WHERE id = $1 AND ($2::text IS NULL OR owner = $2)',
        [id, visibleOwner(principal) ?? null],
      );
      return row && toExecJob(row);
    },
    async list(principal, limit) {
      return (
        await rows<ExecJobRow>(
          db,
          'SELECT * FROM exec_jobs WHERE ($1::text IS NULL OR owner = $1) ORDER BY started_at DESC, seq DESC LIMIT $2',
          [visibleOwner(principal) ?? null, limit],
        )
      ).map(toExecJob);
    },
    async finish(id, fields) {
      await db.query(
        'UPDATE exec_jobs SET status = $1, exit_code = $2, signal = $3, ended_at = $4, output_bytes = $5 WHERE id = $6',
        [fields.status, fields.exitCode, fields.signal, fields.endedAt, fields.outputBytes, id],
      );
    },
    async markLost(endedAt) {
      const result = await db.query(
        `UPDATE exec_jobs SET status = 'lost', ended_at = $3 WHERE status = 'running' AND ${INTERRUPTED}`,
        [replica.replicaId, replica.leaseMs, endedAt],
      );
      return result.rowCount ?? 0;
    },
  };
}
