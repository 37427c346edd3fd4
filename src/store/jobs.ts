import type { Principal } from '../principal';

/**
 * The rows of the node's jobs: cron jobs and their runs, background prompts,
 * workflows and their runs, background commands. Each job records the
 * principal that created it and runs as that principal. Reads and changes a
 * principal asks for are scoped to it (the owner reaches everyone's); the
 * runners' own bookkeeping (marking a job running, recording its end,
 * failing what a dead process left running) acts on a job by its id, for
 * whoever owns it.
 */

/** How a cron job's fire times are defined. */
export type ScheduleKind = 'cron' | 'every' | 'at';
/** A job's state: `done` is a one-time job that has fired. */
export type CronJobStatus = 'active' | 'paused' | 'done';
/** Why a run happened: on schedule, or the one catch-up run after downtime. */
export type CronTrigger = 'schedule' | 'catch-up';
/** How a run ended (`running` while it is under way). */
export type CronRunStatus = 'running' | 'completed' | 'input-required' | 'failed' | 'cancelled';

/** A persisted cron job, named uniquely within its owner's jobs. Times are ISO strings. */
export interface CronJob {
  owner: string;
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
  id: string;
  jobName: string;
  trigger: CronTrigger;
  status: CronRunStatus;
  scheduledFor: string;
  startedAt: string;
  finishedAt: string | null;
  result: string | null;
  author: string | null;
}

/** Cron jobs and their run history, so jobs survive a restart. */
export interface CronStore {
  /** Adds the principal's job; false when it already has one of that name. */
  insert(principal: Principal, job: Omit<CronJob, 'owner'>): Promise<boolean>;
  /** The principal's own job `name`. */
  get(principal: Principal, name: string): Promise<CronJob | undefined>;
  /** Jobs the principal can see (the owner: everyone's), by name. */
  list(principal: Principal): Promise<CronJob[]>;
  /** Every job of every principal: the scheduler arms them at start. */
  all(): Promise<CronJob[]>;
  update(
    principal: Principal,
    name: string,
    fields: Partial<Pick<CronJob, 'status' | 'nextRunAt' | 'lastRunAt'>>,
  ): Promise<void>;
  /** Removes the principal's job and its history; true when it existed. */
  remove(principal: Principal, name: string): Promise<boolean>;
  /**
   * Records a run of the principal's job; resolves with the run's id, or
   * `undefined` when a run of the job for that scheduled time and trigger is
   * already recorded (another replica fired it: this one must not run it).
   */
  startRun(
    principal: Principal,
    run: { jobName: string; trigger: CronTrigger; scheduledFor: string; startedAt: string },
  ): Promise<string | undefined>;
  finishRun(
    id: string,
    fields: { status: CronRunStatus; finishedAt: string; result: string; author: string | null },
  ): Promise<void>;
  /** The principal's job's most recent runs first. */
  history(principal: Principal, name: string, limit: number): Promise<CronRun[]>;
  /** Runs left `running` by a process that died: marked failed ("node restarted"); resolves with how many. */
  failInterruptedRuns(finishedAt: string): Promise<number>;
}

/** A background job's state; the last four are final. */
export type BackgroundStatus = 'queued' | 'running' | 'completed' | 'input-required' | 'failed' | 'cancelled';

/** A persisted background prompt. Times are ISO strings. */
export interface BackgroundJob {
  id: string;
  owner: string;
  label: string | null;
  prompt: string;
  status: BackgroundStatus;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  result: string | null;
  author: string | null;
}

/** Background prompts, in submission order. */
export interface BackgroundJobStore {
  insert(
    principal: Principal,
    job: { id: string; label: string | null; prompt: string; createdAt: string },
  ): Promise<void>;
  /** A job the principal can see. */
  get(principal: Principal, id: string): Promise<BackgroundJob | undefined>;
  /** Jobs the principal can see, most recent first, optionally only one status. */
  list(principal: Principal, options: { status?: BackgroundStatus; limit: number }): Promise<BackgroundJob[]>;
  /** Queued jobs of every principal, oldest first. */
  queued(): Promise<BackgroundJob[]>;
  /** Claims a queued job: true when it was queued and is now this process's, false otherwise (taken, cancelled). */
  markRunning(id: string, startedAt: string): Promise<boolean>;
  finish(
    id: string,
    fields: { status: BackgroundStatus; finishedAt: string; result: string; author: string | null },
  ): Promise<void>;
  /** Jobs left `running` by a process that died: marked failed ("node restarted"). */
  failInterrupted(finishedAt: string): Promise<number>;
}

/** A workflow run's state. */
export type WorkflowRunStatus = 'running' | 'completed' | 'failed' | 'cancelled';
/** A step's state within a run. */
export type WorkflowStepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

/** A saved workflow definition, named uniquely within its owner's workflows. */
export interface SavedWorkflow {
  owner: string;
  name: string;
  description: string | null;
  yaml: string;
  savedAt: string;
}

/** A persisted run. */
export interface WorkflowRun {
  id: string;
  owner: string;
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

/** Saved workflows, their runs and each step's result. */
export interface WorkflowStore {
  /** Saves (or replaces) the principal's definition under its name. */
  save(principal: Principal, workflow: Omit<SavedWorkflow, 'owner'>): Promise<void>;
  getSaved(principal: Principal, name: string): Promise<SavedWorkflow | undefined>;
  listSaved(principal: Principal): Promise<SavedWorkflow[]>;
  /** Records a new run of the principal's with all its steps pending, atomically. */
  createRun(
    principal: Principal,
    run: { id: string; workflowName: string; yaml: string; startedAt: string },
    steps: { id: string; agent?: string }[],
  ): Promise<void>;
  /** A run the principal can see. */
  getRun(principal: Principal, id: string): Promise<WorkflowRun | undefined>;
  /** Runs the principal can see, most recent first. */
  listRuns(principal: Principal, limit: number): Promise<WorkflowRun[]>;
  /** The steps of a run the principal can see, in definition order (empty for any other run). */
  steps(principal: Principal, runId: string): Promise<WorkflowStepRecord[]>;
  startStep(runId: string, stepId: string, startedAt: string): Promise<void>;
  finishStep(
    runId: string,
    stepId: string,
    fields: { status: WorkflowStepStatus; finishedAt: string; result: string | null; author: string | null },
  ): Promise<void>;
  finishRun(id: string, fields: { status: WorkflowRunStatus; finishedAt: string; error: string | null }): Promise<void>;
  /** Runs (and their unfinished steps) left `running` by a process that died: marked failed. */
  failInterrupted(finishedAt: string): Promise<number>;
}

/** A background command's state: `lost` when the node restarted while it ran. */
export type ExecJobStatus = 'running' | 'exited' | 'stopped' | 'failed' | 'lost';

/** One background command as `exec_status` reports it. */
export interface ExecJob {
  id: string;
  owner: string;
  command: string;
  cwd: string;
  pid: number | null;
  status: ExecJobStatus;
  exitCode: number | null;
  signal: string | null;
  startedAt: string;
  endedAt: string | null;
  outputBytes: number;
}

/** Background commands (`exec_bg`). */
export interface ExecJobStore {
  insert(
    principal: Principal,
    job: { id: string; command: string; cwd: string; pid: number | null; startedAt: string },
  ): Promise<void>;
  /** A command the principal can see. */
  get(principal: Principal, id: string): Promise<ExecJob | undefined>;
  /** Commands the principal can see, most recent first. */
  list(principal: Principal, limit: number): Promise<ExecJob[]>;
  finish(
    id: string,
    fields: {
      status: ExecJobStatus;
      exitCode: number | null;
      signal: string | null;
      endedAt: string;
      outputBytes: number;
    },
  ): Promise<void>;
  /** Commands left `running` by a process that died (their pipes died with it): marked `lost`. */
  markLost(endedAt: string): Promise<number>;
}
