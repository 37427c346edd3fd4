import { visibleOwner } from '../../principal';
import type { SavedWorkflow, WorkflowRun, WorkflowStepRecord, WorkflowStore } from '../jobs';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
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
];

const DEF_COLUMNS = 'owner, name, description, yaml, saved_at AS savedAt';
const RUN_COLUMNS = `id, owner, workflow_name AS workflowName, status, started_at AS startedAt, finished_at AS finishedAt, error`;
const STEP_COLUMNS = `step_id AS stepId, agent, status, started_at AS startedAt, finished_at AS finishedAt, result, author`;

/** The {@link WorkflowStore} in SQLite (`workflow_defs`, `workflow_runs`, `workflow_steps`). */
export function createSqliteWorkflowStore(options: { db: SqliteDatabase }): WorkflowStore {
  const { db } = options;
  migrate(db, 'automator.workflow', STEPS);
  const visibleRun = (principal: Parameters<WorkflowStore['getRun']>[0], id: string) => {
    const owner = visibleOwner(principal) ?? null;
    return db
      .prepare(`SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE id = ? AND (? IS NULL OR owner = ?)`)
      .get(id, owner, owner) as WorkflowRun | undefined;
  };
  return {
    async save(principal, workflow) {
      db.prepare(
        `INSERT INTO workflow_defs (owner, name, description, yaml, saved_at) VALUES (@owner, @name, @description, @yaml, @savedAt)
         ON CONFLICT(owner, name) DO UPDATE SET description = excluded.description, yaml = excluded.yaml, saved_at = excluded.saved_at`,
      ).run({ ...workflow, owner: principal.id });
    },
    async getSaved(principal, name) {
      return db
        .prepare(`SELECT ${DEF_COLUMNS} FROM workflow_defs WHERE owner = ? AND name = ?`)
        .get(principal.id, name) as SavedWorkflow | undefined;
    },
    async listSaved(principal) {
      const owner = visibleOwner(principal) ?? null;
      return db
        .prepare(`SELECT ${DEF_COLUMNS} FROM workflow_defs WHERE (? IS NULL OR owner = ?) ORDER BY name, owner`)
        .all(owner, owner) as SavedWorkflow[];
    },
    async createRun(principal, run, steps) {
      db.transaction(() => {
        db.prepare(
          `INSERT INTO workflow_runs (id, owner, workflow_name, yaml, status, started_at)
           VALUES (@id, @owner, @workflowName, @yaml, 'running', @startedAt)`,
        ).run({ ...run, owner: principal.id });
        const step = db.prepare(
          `INSERT INTO workflow_steps (run_id, step_id, position, agent, status) VALUES (?, ?, ?, ?, 'pending')`,
        );
        steps.forEach((s, position) => step.run(run.id, s.id, position, s.agent ?? null));
      })();
    },
    getRun: async (principal, id) => visibleRun(principal, id),
    async listRuns(principal, limit) {
      const owner = visibleOwner(principal) ?? null;
      return db
        .prepare(`SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE (? IS NULL OR owner = ?) ORDER BY seq DESC LIMIT ?`)
        .all(owner, owner, limit) as WorkflowRun[];
    },
    async steps(principal, runId) {
      if (!visibleRun(principal, runId)) return [];
      return db
        .prepare(`SELECT ${STEP_COLUMNS} FROM workflow_steps WHERE run_id = ? ORDER BY position`)
        .all(runId) as WorkflowStepRecord[];
    },
    async startStep(runId, stepId, startedAt) {
      db.prepare(`UPDATE workflow_steps SET status = 'running', started_at = ? WHERE run_id = ? AND step_id = ?`).run(
        startedAt,
        runId,
        stepId,
      );
    },
    async finishStep(runId, stepId, fields) {
      db.prepare(
        'UPDATE workflow_steps SET status = ?, finished_at = ?, result = ?, author = ? WHERE run_id = ? AND step_id = ?',
      ).run(fields.status, fields.finishedAt, fields.result, fields.author, runId, stepId);
    },
    async finishRun(id, fields) {
      db.prepare('UPDATE workflow_runs SET status = ?, finished_at = ?, error = ? WHERE id = ?').run(
        fields.status,
        fields.finishedAt,
        fields.error,
        id,
      );
    },
    async failInterrupted(finishedAt) {
      return db.transaction(() => {
        db.prepare(
          `UPDATE workflow_steps SET status = CASE status WHEN 'running' THEN 'failed' ELSE 'cancelled' END,
             finished_at = ?, result = CASE status WHEN 'running' THEN 'node restarted' ELSE result END
           WHERE status IN ('running', 'pending') AND run_id IN (SELECT id FROM workflow_runs WHERE status = 'running')`,
        ).run(finishedAt);
        return db
          .prepare(
            `UPDATE workflow_runs SET status = 'failed', finished_at = ?, error = 'node restarted' WHERE status = 'running'`,
          )
          .run(finishedAt).changes;
      })();
    },
  };
}
