import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import type { BackgroundJob, BackgroundJobStore } from '../../store/jobs';
import type { BackgroundQueue } from './bgQueue';

const JobId = z.string().min(1).max(64).describe('The id returned by bg_submit (bg-xxxxxxxx).');
const BgStatusFilter = z.enum(['queued', 'running', 'completed', 'input-required', 'failed', 'cancelled']);

/**
 * The `bg_` tools over one background queue and its store.
 * @example
 * const tools = createBackgroundTools({ queue, store });
 */
export function createBackgroundTools(options: {
  queue: Pick<BackgroundQueue, 'submit' | 'require' | 'cancel'>;
  store: BackgroundJobStore;
}): AnyTool[] {
  const { queue, store } = options;
  return [
    defineTool({
      name: 'bg_submit',
      description:
        'Runs a prompt in the background through the agents (session bg:<id>) and returns its id at once; ' +
        'check it later with bg_status and bg_result.',
      parameters: z.object({
        prompt: z.string().min(1).max(8000),
        label: z.string().max(200).optional().describe('A short name to recognise the job by.'),
      }),
      execute: async (args, ctx) => status(await queue.submit(ctx.principal, args)),
    }),
    defineTool({
      name: 'bg_status',
      description:
        'Shows a background job: status (queued, running, completed, input-required, failed, cancelled) and times.',
      parameters: z.object({ id: JobId }),
      execute: async ({ id }, ctx) => status(await queue.require(ctx.principal, id)),
    }),
    defineTool({
      name: 'bg_list',
      description: 'Lists background jobs, most recent first, optionally only those with one status.',
      parameters: z.object({ status: BgStatusFilter.optional(), limit: z.number().int().min(1).max(100).default(20) }),
      execute: async (args, ctx) => (await store.list(ctx.principal, args)).map(status),
    }),
    defineTool({
      name: 'bg_result',
      description:
        "Gives a finished background job's answer (or its failure reason); says so if it is not finished yet.",
      parameters: z.object({ id: JobId }),
      execute: async ({ id }, ctx) => {
        const job = await queue.require(ctx.principal, id);
        if (job.status === 'queued' || job.status === 'running')
          return { id, status: job.status, result: null, note: 'not finished yet' };
        return { id, status: job.status, result: job.result, author: job.author };
      },
    }),
    defineTool({
      name: 'bg_cancel',
      description: 'Cancels a queued or running background job.',
      parameters: z.object({ id: JobId }),
      execute: async ({ id }, ctx) => status(await queue.cancel(ctx.principal, id)),
    }),
  ];
}

function status(job: BackgroundJob) {
  const { id, owner, label, status: state, createdAt, startedAt, finishedAt } = job;
  return { id, owner, label, status: state, createdAt, startedAt, finishedAt };
}
