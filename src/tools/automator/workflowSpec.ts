import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { errorMessage, InputError } from '../../errors';
import { parseDuration } from '../../duration';

const STEP_ID = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
/** The longest a step may be given (`timeout`): a day, well within what a timer keeps. */
export const MAX_STEP_TIMEOUT_MS = 86_400_000;
/** `{{steps.<id>.result}}`: how a step quotes an earlier step's answer. */
const STEP_REF = /\{\{\s*steps\.([a-zA-Z0-9_-]+)\.result\s*\}\}/g;

/** One step of a workflow as written in YAML. */
export const WorkflowStep = z
  .object({
    id: z.string().regex(STEP_ID, 'a step id is letters, digits, _ and -, starting with a letter'),
    /** The agent that runs the step; the orchestrator decides when absent. */
    agent: z.string().min(1).optional(),
    prompt: z.string().min(1),
    depends_on: z.array(z.string()).default([]),
    /** A duration such as `30s` or `5m`, at most `24h`; the step fails when it runs longer. */
    timeout: z.string().optional(),
  })
  .strict();
export type WorkflowStep = z.infer<typeof WorkflowStep>;

/** A workflow: a named DAG of steps. */
export const WorkflowDefinition = z
  .object({
    name: z.string().regex(STEP_ID, 'a workflow name is letters, digits, _ and -, starting with a letter'),
    description: z.string().optional(),
    steps: z.array(WorkflowStep).min(1).max(100),
  })
  .strict()
  .superRefine((workflow, ctx) => {
    for (const issue of graphIssues(workflow.steps)) ctx.addIssue({ code: 'custom', ...issue });
  });
export type WorkflowDefinition = z.infer<typeof WorkflowDefinition>;

/**
 * Parses and validates a workflow from YAML: syntax, shape, duplicate ids,
 * unknown `depends_on` refs, cycles, quotes of steps that are not
 * ancestors, bad timeouts and (when `agentNames` is given) unknown agents.
 * @throws InputError whose message lists every problem with its location.
 * @example
 * const wf = parseWorkflow('name: hi\nsteps:\n  - id: a\n    prompt: say hi\n', ['operator']);
 */
export function parseWorkflow(text: string, agentNames?: string[]): WorkflowDefinition {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    const message = errorMessage(error).split('\n')[0].replace(/:\s*$/, '');
    throw new InputError(`invalid workflow YAML: ${message}`);
  }
  const parsed = WorkflowDefinition.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
    throw new InputError(`invalid workflow: ${lines.join('; ')}`);
  }
  if (agentNames) checkAgents(parsed.data, agentNames);
  return parsed.data;
}

/** Refuses steps whose `agent` is not in the live tree. */
export function checkAgents(workflow: WorkflowDefinition, agentNames: string[]): void {
  const known = new Set(agentNames);
  const unknown = workflow.steps.filter((step) => step.agent !== undefined && !known.has(step.agent));
  if (unknown.length > 0) {
    const list = unknown.map((step) => `step "${step.id}" names agent "${step.agent}"`).join('; ');
    throw new InputError(
      `invalid workflow "${workflow.name}": ${list}, which is not in the agent tree (known: ${[...known].join(', ')})`,
    );
  }
}

/** The step ids a prompt quotes with `{{steps.<id>.result}}`. */
export function quotedSteps(prompt: string): string[] {
  return [...prompt.matchAll(STEP_REF)].map((match) => match[1]);
}

/** Replaces each `{{steps.<id>.result}}` with that step's result. */
export function renderPrompt(prompt: string, results: ReadonlyMap<string, string>): string {
  return prompt.replace(STEP_REF, (_whole, id: string) => results.get(id) ?? '');
}

function graphIssues(steps: WorkflowStep[]): { path: PropertyKey[]; message: string }[] {
  const issues: { path: PropertyKey[]; message: string }[] = [];
  const byId = new Map<string, WorkflowStep>();
  steps.forEach((step, index) => {
    if (byId.has(step.id)) issues.push({ path: ['steps', index, 'id'], message: `duplicate step id "${step.id}"` });
    byId.set(step.id, step);
    step.depends_on.forEach((dep, depIndex) => {
      if (!steps.some((other) => other.id === dep)) {
        issues.push({
          path: ['steps', index, 'depends_on', depIndex],
          message: `step "${step.id}" depends on unknown step "${dep}"`,
        });
      }
    });
    if (step.timeout !== undefined) {
      try {
        parseDuration(step.timeout, `timeout of step "${step.id}"`, MAX_STEP_TIMEOUT_MS);
      } catch (error) {
        issues.push({ path: ['steps', index, 'timeout'], message: errorMessage(error) });
      }
    }
  });
  if (issues.length > 0) return issues;
  const cycle = findCycle(byId);
  if (cycle) return [{ path: ['steps'], message: `steps form a cycle: ${cycle.join(' → ')}` }];
  steps.forEach((step, index) => {
    const ancestors = ancestorsOf(step.id, byId);
    for (const quoted of quotedSteps(step.prompt)) {
      if (!ancestors.has(quoted)) {
        issues.push({
          path: ['steps', index, 'prompt'],
          message: `step "${step.id}" quotes steps.${quoted}.result but does not depend on "${quoted}"`,
        });
      }
    }
  });
  return issues;
}

function findCycle(byId: Map<string, WorkflowStep>): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'visiting') return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, 'visiting');
    trail.push(id);
    for (const dep of byId.get(id)?.depends_on ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(id, 'done');
    return null;
  };
  for (const id of byId.keys()) {
    const cycle = visit(id);
    if (cycle) return cycle;
  }
  return null;
}

function ancestorsOf(id: string, byId: Map<string, WorkflowStep>): Set<string> {
  const seen = new Set<string>();
  const pending = [...(byId.get(id)?.depends_on ?? [])];
  while (pending.length > 0) {
    const next = pending.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...(byId.get(next)?.depends_on ?? []));
  }
  return seen;
}

function formatPath(path: PropertyKey[]): string {
  if (path.length === 0) return 'workflow';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
}
