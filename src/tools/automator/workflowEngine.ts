import { randomUUID } from 'node:crypto';
import type { TurnRunner } from '../../agent/turn';
import { InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import { parseDuration } from './duration';
import { runPrompt } from './runPrompt';
import { checkAgents, parseWorkflow, renderPrompt, type WorkflowDefinition, type WorkflowStep } from './workflowSpec';
import type { WorkflowRunStatus, WorkflowStepStatus, WorkflowStore } from './workflowStore';

/** A step with no `timeout` fails after this long. */
export const DEFAULT_STEP_TIMEOUT_MS = 10 * 60_000;

/** What the engine needs; one named options object. */
export interface WorkflowEngineOptions {
  store: WorkflowStore;
  turns: () => TurnRunner;
  /** Live agent names (remote ones included); steps' `agent` must be one of them. */
  agentNames: () => string[];
  clock: () => Date;
  logger: Logger;
}

/**
 * Runs workflows: each step is a turn through the agent tree in session
 * `workflow:<runId>:<stepId>`, started at the step's agent by passing
 * `startAgent` to the runner. A step starts as soon as every step
 * it depends on has completed, so independent steps run in parallel. A step
 * that fails, asks a question or times out fails the run; steps depending on
 * it are skipped while independent branches finish. Runs left running by a
 * dead process are marked failed ("node restarted") at start.
 */
export class WorkflowEngine {
  private readonly runs = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private closed = false;

  constructor(private readonly options: WorkflowEngineOptions) {}

  /** Fails runs interrupted by a restart. */
  start(): void {
    const failed = this.options.store.failInterrupted(this.now());
    if (failed > 0) this.options.logger.warn('workflow runs interrupted by a restart marked failed', { count: failed });
  }

  /** Validates and saves a definition under its `name`. @throws InputError naming what is wrong. */
  save(yaml: string): WorkflowDefinition {
    const workflow = parseWorkflow(yaml, this.options.agentNames());
    this.options.store.save({
      name: workflow.name,
      description: workflow.description ?? null,
      yaml,
      savedAt: this.now(),
    });
    return workflow;
  }

  /** Starts a run of a saved workflow (`name`) or of inline `yaml`; returns the run id at once. */
  run(input: { name?: string; yaml?: string }): { runId: string; workflow: WorkflowDefinition } {
    if (this.closed) throw new InputError('the workflow engine is shut down');
    const yaml = this.resolveYaml(input);
    const workflow = parseWorkflow(yaml);
    checkAgents(workflow, this.options.agentNames());
    const runId = `wf-${randomUUID().slice(0, 8)}`;
    this.options.store.createRun(
      { id: runId, workflowName: workflow.name, yaml, startedAt: this.now() },
      workflow.steps,
    );
    const controller = new AbortController();
    const done = this.execute(runId, workflow, controller.signal)
      .catch((error: unknown) => {
        this.options.logger.error('workflow run crashed', {
          runId,
          error: error instanceof Error ? error.message : String(error),
        });
        this.options.store.finishRun(runId, { status: 'failed', finishedAt: this.now(), error: 'internal error' });
      })
      .finally(() => this.runs.delete(runId));
    this.runs.set(runId, { controller, done });
    return { runId, workflow };
  }

  /** Cancels a running run: steps under way are aborted, pending ones never start. */
  cancel(runId: string): boolean {
    const run = this.runs.get(runId);
    if (!run) {
      if (!this.options.store.getRun(runId)) throw new InputError(`no workflow run with id "${runId}"`);
      return false;
    }
    run.controller.abort(new Error('cancelled by request'));
    return true;
  }

  /** Cancels every run and waits until each is recorded. */
  async close(): Promise<void> {
    this.closed = true;
    const runs = [...this.runs.values()];
    for (const run of runs) run.controller.abort(new Error('node shutting down'));
    await Promise.allSettled(runs.map((run) => run.done));
  }

  private resolveYaml(input: { name?: string; yaml?: string }): string {
    if (input.yaml !== undefined && input.name !== undefined)
      throw new InputError('give either name or yaml, not both');
    if (input.yaml !== undefined) return input.yaml;
    if (input.name === undefined) throw new InputError('give the name of a saved workflow or its yaml');
    const saved = this.options.store.getSaved(input.name);
    if (!saved) throw new InputError(`no saved workflow named "${input.name}"`);
    return saved.yaml;
  }

  private now(): string {
    return this.options.clock().toISOString();
  }

  private async execute(runId: string, workflow: WorkflowDefinition, signal: AbortSignal): Promise<void> {
    const status = new Map<string, WorkflowStepStatus>(workflow.steps.map((step) => [step.id, 'pending']));
    const results = new Map<string, string>();
    const active = new Map<string, Promise<void>>();
    for (;;) {
      // Repeat until nothing changes: a skip can cascade to steps listed before it in the YAML.
      for (let changed = true; changed;) {
        changed = false;
        for (const step of workflow.steps) {
          if (status.get(step.id) !== 'pending') continue;
          const deps = step.depends_on.map((dep) => status.get(dep));
          if (signal.aborted) {
            this.settleStep(runId, step.id, status, 'cancelled', 'the run was cancelled first');
          } else if (deps.some((s) => s === 'failed' || s === 'skipped' || s === 'cancelled')) {
            this.settleStep(runId, step.id, status, 'skipped', 'a step it depends on did not complete');
          } else if (deps.every((s) => s === 'completed')) {
            status.set(step.id, 'running');
            const task = this.runStep(runId, step, results, signal).then((final) => {
              status.set(step.id, final);
              active.delete(step.id);
            });
            active.set(step.id, task);
          } else {
            continue;
          }
          changed = true;
        }
      }
      if (active.size === 0) break;
      await Promise.race(active.values());
    }
    const finals = [...status.values()];
    const runStatus: WorkflowRunStatus = signal.aborted
      ? 'cancelled'
      : finals.every((s) => s === 'completed')
        ? 'completed'
        : 'failed';
    const failedSteps = workflow.steps.filter((step) => status.get(step.id) === 'failed').map((step) => step.id);
    const error =
      runStatus === 'failed'
        ? `failed steps: ${failedSteps.join(', ')}`
        : runStatus === 'cancelled'
          ? String((signal.reason as Error)?.message ?? 'cancelled')
          : null;
    this.options.store.finishRun(runId, { status: runStatus, finishedAt: this.now(), error });
    this.options.logger.info('workflow run finished', { runId, workflow: workflow.name, status: runStatus });
  }

  private settleStep(
    runId: string,
    stepId: string,
    status: Map<string, WorkflowStepStatus>,
    final: WorkflowStepStatus,
    why: string,
  ): void {
    status.set(stepId, final);
    this.options.store.finishStep(runId, stepId, { status: final, finishedAt: this.now(), result: why, author: null });
  }

  /** Runs one step to a final status, recording it; never throws. */
  private async runStep(
    runId: string,
    step: WorkflowStep,
    results: Map<string, string>,
    runSignal: AbortSignal,
  ): Promise<WorkflowStepStatus> {
    const { store, turns } = this.options;
    const timeoutMs = step.timeout ? parseDuration(step.timeout, 'timeout') : DEFAULT_STEP_TIMEOUT_MS;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error(`timed out after ${step.timeout ?? '10m'}`)), timeoutMs);
    store.startStep(runId, step.id, this.now());
    try {
      const outcome = await runPrompt(turns, {
        sessionId: `workflow:${runId}:${step.id}`,
        text: renderPrompt(step.prompt, results),
        signal: AbortSignal.any([runSignal, timeout.signal]),
        startAgent: step.agent,
        metadata: { workflowRun: runId, workflowStep: step.id },
      });
      let final: WorkflowStepStatus;
      let text = outcome.text;
      if (outcome.status === 'completed') {
        final = 'completed';
        results.set(step.id, outcome.text);
      } else if (outcome.status === 'cancelled') {
        final = timeout.signal.aborted && !runSignal.aborted ? 'failed' : 'cancelled';
      } else if (outcome.status === 'input-required') {
        final = 'failed';
        text = `the step asked for input, which a workflow cannot give: ${outcome.text}`;
      } else {
        final = 'failed';
      }
      store.finishStep(runId, step.id, { status: final, finishedAt: this.now(), result: text, author: outcome.author });
      return final;
    } finally {
      clearTimeout(timer);
    }
  }
}
