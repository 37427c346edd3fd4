import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { InputError } from '../../errors';
import type { CronStore } from '../../store/jobs';
import type { CronScheduler } from './cronScheduler';

const JobName = z.string().min(1).max(64).describe('The job name, as given to cron_add.');

/**
 * The `cron_` tools over one scheduler and its store.
 * @example
 * const tools = createCronTools({ scheduler, store });
 */
export function createCronTools(options: {
  scheduler: Pick<CronScheduler, 'add' | 'pause' | 'resume' | 'remove'>;
  store: CronStore;
}): AnyTool[] {
  const { scheduler, store } = options;
  return [
    defineTool({
      name: 'cron_add',
      description:
        'Schedules a prompt to run through the agents on a schedule: a cron expression ("0 9 * * 1-5"; six fields ' +
        'for seconds), an interval ("every 5m", "every 2h") or one time at an ISO date ("2026-01-01T09:00:00Z"). ' +
        'Each run is a turn in session cron:<name>.',
      parameters: z.object({
        name: z.string().min(1).max(64).describe('A unique job name: letters, digits, _ . -'),
        schedule: z.string().min(1).max(200),
        prompt: z.string().min(1).max(8000).describe('What the agents should do on each run.'),
      }),
      execute: async (args, ctx) => {
        const job = await scheduler.add(ctx.principal, args);
        return { added: job.name, kind: job.kind, schedule: job.schedule, nextRunAt: job.nextRunAt };
      },
    }),
    defineTool({
      name: 'cron_list',
      description: 'Lists the cron jobs with their schedule, status and next run time.',
      parameters: z.object({}),
      execute: async (_args, ctx) =>
        (await store.list(ctx.principal)).map(
          ({ owner, name, kind, schedule, status, nextRunAt, lastRunAt, prompt }) => ({
            owner,
            name,
            kind,
            schedule,
            status,
            nextRunAt,
            lastRunAt,
            prompt,
          }),
        ),
    }),
    defineTool({
      name: 'cron_pause',
      description: 'Pauses a cron job; it keeps its history and can be resumed.',
      parameters: z.object({ name: JobName }),
      execute: async ({ name }, ctx) => summary(await scheduler.pause(ctx.principal, name)),
    }),
    defineTool({
      name: 'cron_resume',
      description: 'Resumes a paused cron job from now on (runs missed while paused are skipped).',
      parameters: z.object({ name: JobName }),
      execute: async ({ name }, ctx) => summary(await scheduler.resume(ctx.principal, name)),
    }),
    defineTool({
      name: 'cron_remove',
      description: 'Removes a cron job and its run history, cancelling a run under way.',
      parameters: z.object({ name: JobName }),
      execute: async ({ name }, ctx) => {
        await scheduler.remove(ctx.principal, name);
        return { removed: name };
      },
    }),
    defineTool({
      name: 'cron_history',
      description: 'Shows the most recent runs of a cron job: when, why (schedule or catch-up), status and result.',
      parameters: z.object({ name: JobName, limit: z.number().int().min(1).max(100).default(10) }),
      execute: async ({ name, limit }, ctx) => {
        if (!(await store.get(ctx.principal, name))) throw new InputError(`no cron job named "${name}"`);
        return store.history(ctx.principal, name, limit);
      },
    }),
  ];
}

function summary(job: { name: string; status: string; nextRunAt: string | null }) {
  return { name: job.name, status: job.status, nextRunAt: job.nextRunAt };
}
