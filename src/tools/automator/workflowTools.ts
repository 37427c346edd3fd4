import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { InputError } from '../../errors';
import type { WorkflowStore } from '../../store/jobs';
import type { WorkflowEngine } from './workflowEngine';

const RunId = z.string().min(1).max(64).describe('The run id returned by workflow_run (wf-xxxxxxxx).');

const YAML_SHAPE =
  'YAML with `name` and `steps`; each step has `id`, `prompt`, optional `agent` (a specialist or remote agent), ' +
  '`depends_on` (step ids) and `timeout` ("30s", "5m"). A prompt may quote an earlier step with {{steps.<id>.result}}.';

/**
 * The `workflow_` tools over one engine and its store.
 * @example
 * const tools = createWorkflowTools({ engine, store });
 */
export function createWorkflowTools(options: { engine: WorkflowEngine; store: WorkflowStore }): AnyTool[] {
  const { engine, store } = options;
  return [
    defineTool({
      name: 'workflow_run',
      description: `Starts a workflow, saved (by name) or inline (yaml), and returns its run id at once. ${YAML_SHAPE}`,
      parameters: z.object({
        name: z.string().min(1).max(64).optional().describe('A workflow saved with workflow_save.'),
        yaml: z.string().min(1).max(64_000).optional(),
      }),
      execute: async (args, ctx) => {
        const { runId, workflow } = await engine.run(ctx.principal, args);
        return { runId, workflow: workflow.name, steps: workflow.steps.map((step) => step.id), status: 'running' };
      },
    }),
    defineTool({
      name: 'workflow_status',
      description: "Shows a workflow run's status and each step's status, agent and result.",
      parameters: z.object({ runId: RunId }),
      execute: async ({ runId }, ctx) => {
        const run = await store.getRun(ctx.principal, runId);
        if (!run) throw new InputError(`no workflow run with id "${runId}"`);
        return { ...run, steps: await store.steps(ctx.principal, runId) };
      },
    }),
    defineTool({
      name: 'workflow_list',
      description: 'Lists saved workflows and the most recent runs.',
      parameters: z.object({ limit: z.number().int().min(1).max(100).default(20) }),
      execute: async ({ limit }, ctx) => ({
        saved: (await store.listSaved(ctx.principal)).map(({ owner, name, description, savedAt }) => ({
          owner,
          name,
          description,
          savedAt,
        })),
        runs: await store.listRuns(ctx.principal, limit),
      }),
    }),
    defineTool({
      name: 'workflow_cancel',
      description: 'Cancels a running workflow: steps under way are aborted and pending ones never start.',
      parameters: z.object({ runId: RunId }),
      execute: async ({ runId }, ctx) => {
        const cancelling = await engine.cancel(ctx.principal, runId);
        return cancelling
          ? { runId, status: 'cancelling' }
          : { runId, status: (await store.getRun(ctx.principal, runId))?.status, note: 'not running' };
      },
    }),
    defineTool({
      name: 'workflow_save',
      description: `Validates and saves a workflow under its name, replacing one of the same name. ${YAML_SHAPE}`,
      parameters: z.object({ yaml: z.string().min(1).max(64_000) }),
      execute: async ({ yaml }, ctx) => {
        const workflow = await engine.save(ctx.principal, yaml);
        return { saved: workflow.name, steps: workflow.steps.map((step) => step.id) };
      },
    }),
  ];
}
