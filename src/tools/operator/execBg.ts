import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ExecArgs, prepareCommand, type ExecToolsOptions } from './exec';
import type { Principal } from '../../principal';
import type { JobManager } from './jobs';

/** Options for {@link createExecBgTools}: the exec options plus the job manager. */
export interface ExecBgToolsOptions extends ExecToolsOptions {
  jobs: JobManager;
}

/**
 * `exec_bg`, `exec_status`, `exec_stop`: long-running commands in the
 * background, under the same policy and workspace as `exec_shell`, their
 * output kept in a file per job and shown (tail, secret-masked) on request.
 * @example
 * const tools = createExecBgTools({ ...execOptions, jobs: createJobManager({ store, outputDir, logger, clock, sandbox }) });
 */
export function createExecBgTools(options: ExecBgToolsOptions): AnyTool[] {
  const { jobs, workspace, redact } = options;
  const withOutput = async (principal: Principal, id: string) => {
    const info = await jobs.get(principal, id);
    const tail = await jobs.tail(principal, id, options.maxOutputBytes);
    return { ...info, command: redact(info.command), output: redact(tail.text), outputTruncated: tail.truncated };
  };
  return [
    defineTool({
      name: 'exec_bg',
      description:
        'Starts a long-running shell command in the background in the workspace and returns its job id at once; ' +
        'check it with exec_status, end it with exec_stop.',
      parameters: ExecArgs,
      execute: async (args, ctx) => {
        const prepared = await prepareCommand(options, args, ctx);
        const info = await jobs.run(ctx.principal, {
          ...prepared,
          shownCommand: args.command,
          shownCwd: workspace.display(prepared.cwd),
        });
        return { id: info.id, pid: info.pid, status: info.status, startedAt: info.startedAt };
      },
    }),
    defineTool({
      name: 'exec_status',
      description:
        "With an id: a background job's status, exit code and the tail of its output. Without: the recent jobs.",
      parameters: z.object({ id: z.string().optional() }),
      execute: async ({ id }, ctx) =>
        id
          ? withOutput(ctx.principal, id)
          : { jobs: (await jobs.list(ctx.principal)).map((job) => ({ ...job, command: redact(job.command) })) },
    }),
    defineTool({
      name: 'exec_stop',
      description: 'Stops a background job (SIGTERM, then SIGKILL) and returns its final status and output tail.',
      parameters: z.object({ id: z.string() }),
      execute: async ({ id }, ctx) => {
        await jobs.stop(ctx.principal, id);
        return withOutput(ctx.principal, id);
      },
    }),
  ];
}
