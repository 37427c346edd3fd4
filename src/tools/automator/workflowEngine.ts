import { randomUUID } from 'node:crypto';
import type { TurnRunner } from '../../agent/turn';
import { errorMessage, InputError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { Principal } from '../../principal';
import type { WorkflowRunStatus, WorkflowStepStatus, WorkflowStore } from '../../store/jobs';
import type { FamilyRuntime } from '../../toolset/family';
import { parseDuration } from '../../duration';
import { createDeadline } from '../../net/deadline';
import { runPrompt } from './runPrompt';
import {
  checkAgents,
  MAX_STEP_TIMEOUT_MS,
  parseWorkflow,
  renderPrompt,
  type WorkflowDefinition,
  type WorkflowStep,
} from './workflowSpec';

/** A step with no `timeout` fails after this long. */
export const DEFAULT_STEP_TIMEOUT_MS = 10 * 60_000;

/** What the engine needs; one named options object. */
export interface WorkflowEngineOptions {
  store: WorkflowStore;
  clock: () => Date;
  logger: Logger;
}

/**
 * Runs workflows: each step is a turn through the agent tree, as the
 * principal that started the run, in session
 * `workflow:<runId>:<stepId>`, started at the step's agent by passing
 * `startAgent` to the runner. A step starts as soon as every step
 * it depends on has completed, so independent steps run in parallel. A step
 * that fails, asks a question or times out fails the run; steps depending on
 * it are skipped while independent branches finish. Runs left running by a
 * dead process are marked failed ("node restarted") at start.
 */
export class WorkflowEngine {
  private readonly runs = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /** Set by {@link start}: runs start only once the agent tree exists. */
  private runtime: FamilyRuntime | undefined;
  private closed = false;

  constructor(private readonly options: WorkflowEngineOptions) {}

  /** Fails runs interrupted by a restart; runs then go through the runtime's runner. */
  async start(runtime: FamilyRuntime): Promise<void> {
    this.runtime = runtime;
    const failed = await this.options.store.failInterrupted(this.now());
    if (failed > 0) this.options.logger.warn('workflow runs interrupted by a restart marked failed', { count: failed });
  }

  /** Validates and saves the principal's definition under its `name`. @throws InputError naming what is wrong. */
  async save(principal: Principal, yaml: string): Promise<WorkflowDefinition> {
    const workflow = parseWorkflow(yaml, this.live().agentNames());
    await this.options.store.save(principal, {
      name: workflow.name,
      description: workflow.description ?? null,
      yaml,
      savedAt: this.now(),
    });
    return workflow;
  }

  /**
   * Starts a run, as the principal, of its saved workflow (`name`) or of
   * inline `yaml`; resolves with the run id once the run is recorded.
   */
  async run(
    principal: Principal,
    input: { name?: string; yaml?: string },
  ): Promise<{ runId: string; workflow: WorkflowDefinition }> {
    if (this.closed) throw new InputError('the workflow engine is shut down');
    const { runner, agentNames } = this.live();
    const yaml = await this.resolveYaml(principal, input);
    const workflow = parseWorkflow(yaml);
    checkAgents(workflow, agentNames());
    const runId = `wf-${randomUUID().slice(0, 8)}`;
    await this.options.store.createRun(
      principal,
      { id: runId, workflowName: workflow.name, yaml, startedAt: this.now() },
      workflow.steps,
    );
    const controller = new AbortController();
    const done = this.execute(runner, principal, runId, workflow, controller.signal)
      .catch(async (error: unknown) => {
        this.options.logger.error('workflow run crashed', { runId, error: errorMessage(error) });
        await this.options.store.finishRun(runId, {
          status: 'failed',
          finishedAt: this.now(),
          error: 'internal error',
        });
      })
      .catch((error: unknown) =>
        this.options.logger.error('workflow run end not recorded', { runId, error: errorMessage(error) }),
      )
      .finally(() => this.runs.delete(runId));
    this.runs.set(runId, { controller, done });
    return { runId, workflow };
  }

  /** Cancels a running run the principal can see: steps under way are aborted, pending ones never start. */
  async cancel(principal: Principal, runId: string): Promise<boolean> {
    if (!(await this.options.store.getRun(principal, runId)))
      throw new InputError(`no workflow run with id "${runId}"`);
    const run = this.runs.get(runId);
    if (!run) return false;
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

  /** The runner and tree, once {@link start} has run. */
  private live(): FamilyRuntime {
    if (!this.runtime) throw new InputError('workflows are not running yet: the node is still starting');
    return this.runtime;
  }

  private async resolveYaml(principal: Principal, input: { name?: string; yaml?: string }): Promise<string> {
    if (input.yaml !== undefined && input.name !== undefined)
      throw new InputError('give either name or yaml, not both');
    if (input.yaml !== undefined) return input.yaml;
    if (input.name === undefined) throw new InputError('give the name of a saved workflow or its yaml');
    const saved = await this.options.store.getSaved(principal, input.name);
    if (!saved) throw new InputError(`no saved workflow named "${input.name}"`);
    return saved.yaml;
  }

  private now(): string {
    return this.options.clock().toISOString();
  }

  private async execute(
    runner: TurnRunner,
    principal: Principal,
    runId: string,
    workflow: WorkflowDefinition,
    signal: AbortSignal,
  ): Promise<void> {
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
            await this.settleStep(runId, step.id, status, 'cancelled', 'the run was cancelled first');
          } else if (deps.some((s) => s === 'failed' || s === 'skipped' || s === 'cancelled')) {
            await this.settleStep(runId, step.id, status, 'skipped', 'a step it depends on did not complete');
          } else if (deps.every((s) => s === 'completed')) {
            status.set(step.id, 'running');
            const task = this.runStep(runner, principal, runId, step, results, signal).then((final) => {
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
    await this.options.store.finishRun(runId, { status: runStatus, finishedAt: this.now(), error });
    this.options.logger.info('workflow run finished', { runId, workflow: workflow.name, status: runStatus });
  }

  private async settleStep(
    runId: string,
    stepId: string,
    status: Map<string, WorkflowStepStatus>,
    final: WorkflowStepStatus,
    why: string,
  ): Promise<void> {
    status.set(stepId, final);
    await this.options.store.finishStep(runId, stepId, {
      status: final,
      finishedAt: this.now(),
      result: why,
      author: null,
    });
  }

  /** Runs one step to a final status, recording it. */
  private async runStep(
    runner: TurnRunner,
    principal: Principal,
    runId: string,
    step: WorkflowStep,
    results: Map<string, string>,
    runSignal: AbortSignal,
  ): Promise<WorkflowStepStatus> {
    const { store } = this.options;
    const timeoutMs = step.timeout
      ? parseDuration(step.timeout, 'timeout', MAX_STEP_TIMEOUT_MS)
      : DEFAULT_STEP_TIMEOUT_MS;
    // Its reason ("timed out after 10m") becomes the step's result; held by its own timer (`net/deadline.ts`).
    const deadline = createDeadline(timeoutMs, runSignal);
    try {
      await store.startStep(runId, step.id, this.now());
      const outcome = await runPrompt(runner, {
        principal,
        sessionId: `workflow:${runId}:${step.id}`,
        text: renderPrompt(step.prompt, results),
        signal: deadline.signal,
        startAgent: step.agent,
        metadata: { workflowRun: runId, workflowStep: step.id },
      });
      let final: WorkflowStepStatus;
      let text = outcome.text;
      if (outcome.status === 'completed') {
        final = 'completed';
        results.set(step.id, outcome.text);
      } else if (outcome.status === 'cancelled') {
        final = deadline.signal.aborted && !runSignal.aborted ? 'failed' : 'cancelled';
      } else if (outcome.status === 'input-required') {
        final = 'failed';
        text = `the step asked for input, which a workflow cannot give: ${outcome.text}`;
      } else {
        final = 'failed';
      }
      await store.finishStep(runId, step.id, {
        status: final,
        finishedAt: this.now(),
        result: text,
        author: outcome.author,
      });
      return final;
    } finally {
      deadline.clear();
    }
  }
}
