import { migrate, type SqliteDatabase } from '../../store/database';

/** A workflow run's state. */
export type WorkflowRunStatus = 'running' | 'completed' | 'failed' | 'cancelled';
/** A step's state within a run. */
export type WorkflowStepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

/** A saved workflow definition. */
export interface SavedWorkflow {
  name: string;
  description: string | null;
  yaml: string;
  savedAt: string;
}

/** A persisted run. */
export interface WorkflowRun {
  id: string;
  workflowName: string;
  status: WorkflowRunStatus;
  startedAt: string;
  finishedAt: string | null;
  error: string | null;
}

/** A persisted step of a run. */
export interface WorkflowStepRecord {
  stepId: string;
  agent: string | null;
  status: WorkflowStepStatus;
  startedAt: string | null;
  finishedAt: string | null;
  result: string | null;
  author: string | null;
}

const STEPS = [
  `CREATE TABLE workflow_defs (name TEXT PRIMARY KEY, description TEXT, yaml TEXT NOT NULL, saved_at TEXT NOT NULL);
   CREATE TABLE workflow_runs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, workflow_name TEXT NOT NULL, yaml TEXT NOT NULL,
     status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, error TEXT);
   CREATE TABLE workflow_steps (
     run_id TEXT NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE, step_id TEXT NOT NULL, position INTEGER NOT NULL,
     agent TEXT, status TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT,
     PRIMARY KEY (run_id, step_id));`,
];

const RUN_COLUMNS = `id, workflow_name AS workflowName, status, started_at AS startedAt, finished_at AS finishedAt, error`;
const STEP_COLUMNS = `step_id AS stepId, agent, status, started_at AS startedAt, finished_at AS finishedAt, result, author`;

/** SQLite persistence for saved workflows, their runs and each step's result. */
export class WorkflowStore {
  constructor(private readonly db: SqliteDatabase) {
    migrate(db, 'automator.workflow', STEPS);
  }

  /** Saves (or replaces) a definition under its name. */
  save(workflow: SavedWorkflow): void {
    this.db
      .prepare(
        `INSERT INTO workflow_defs (name, description, yaml, saved_at) VALUES (@name, @description, @yaml, @savedAt)
         ON CONFLICT(name) DO UPDATE SET description = excluded.description, yaml = excluded.yaml, saved_at = excluded.saved_at`,
      )
      .run(workflow);
  }

  getSaved(name: string): SavedWorkflow | undefined {
    return this.db
      .prepare('SELECT name, description, yaml, saved_at AS savedAt FROM workflow_defs WHERE name = ?')
      .get(name) as SavedWorkflow | undefined;
  }

  listSaved(): SavedWorkflow[] {
    return this.db
      .prepare('SELECT name, description, yaml, saved_at AS savedAt FROM workflow_defs ORDER BY name')
      .all() as SavedWorkflow[];
  }

  /** Records a new run with all its steps pending, in one transaction. */
  createRun(
    run: { id: string; workflowName: string; yaml: string; startedAt: string },
    steps: { id: string; agent?: string }[],
  ): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO workflow_runs (id, workflow_name, yaml, status, started_at) VALUES (@id, @workflowName, @yaml, 'running', @startedAt)`,
        )
        .run(run);
      const step = this.db.prepare(
        `INSERT INTO workflow_steps (run_id, step_id, position, agent, status) VALUES (?, ?, ?, ?, 'pending')`,
      );
      steps.forEach((s, position) => step.run(run.id, s.id, position, s.agent ?? null));
    })();
  }

  getRun(id: string): WorkflowRun | undefined {
    return this.db.prepare(`SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE id = ?`).get(id) as WorkflowRun | undefined;
  }

  /** Most recent first. */
  listRuns(limit: number): WorkflowRun[] {
    return this.db
      .prepare(`SELECT ${RUN_COLUMNS} FROM workflow_runs ORDER BY seq DESC LIMIT ?`)
      .all(limit) as WorkflowRun[];
  }

  steps(runId: string): WorkflowStepRecord[] {
    return this.db
      .prepare(`SELECT ${STEP_COLUMNS} FROM workflow_steps WHERE run_id = ? ORDER BY position`)
      .all(runId) as WorkflowStepRecord[];
  }

  startStep(runId: string, stepId: string, startedAt: string): void {
    this.db
      .prepare(`UPDATE workflow_steps SET status = 'running', started_at = ? WHERE run_id = ? AND step_id = ?`)
      .run(startedAt, runId, stepId);
  }

  finishStep(
    runId: string,
    stepId: string,
    fields: { status: WorkflowStepStatus; finishedAt: string; result: string | null; author: string | null },
  ): void {
    this.db
      .prepare(
        'UPDATE workflow_steps SET status = ?, finished_at = ?, result = ?, author = ? WHERE run_id = ? AND step_id = ?',
      )
      .run(fields.status, fields.finishedAt, fields.result, fields.author, runId, stepId);
  }

  finishRun(id: string, fields: { status: WorkflowRunStatus; finishedAt: string; error: string | null }): void {
    this.db
      .prepare('UPDATE workflow_runs SET status = ?, finished_at = ?, error = ? WHERE id = ?')
      .run(fields.status, fields.finishedAt, fields.error, id);
  }

  /** Runs (and their unfinished steps) left `running` by a process that died. */
  failInterrupted(finishedAt: string): number {
    return this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE workflow_steps SET status = CASE status WHEN 'running' THEN 'failed' ELSE 'cancelled' END,
             finished_at = ?, result = CASE status WHEN 'running' THEN 'node restarted' ELSE result END
           WHERE status IN ('running', 'pending') AND run_id IN (SELECT id FROM workflow_runs WHERE status = 'running')`,
        )
        .run(finishedAt);
      return this.db
        .prepare(
          `UPDATE workflow_runs SET status = 'failed', finished_at = ?, error = 'node restarted' WHERE status = 'running'`,
        )
        .run(finishedAt).changes;
    })();
  }
}
