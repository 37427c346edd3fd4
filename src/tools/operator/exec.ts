import fs from 'node:fs';
import { z } from 'zod';
import { defineTool, type AnyTool, type ToolContext } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import type { SecretReferences } from '../../vault/references';
import { checkExecPolicy, type ExecPolicy } from './policy';
import type { Sandbox } from './sandbox';
import { baseShellEnv, runShell } from './shell';
import type { Workspace } from './workspace';

/** Options for {@link createExecShellTool}. */
export interface ExecToolsOptions {
  workspace: Workspace;
  /** Where commands run; the policy must carry `unconfined` when this does not confine. */
  sandbox: Sandbox;
  policy: ExecPolicy;
  /** Default and maximum-by-default timeout (`tools.exec.timeoutMs`). */
  timeoutMs: number;
  /** Bytes of stdout and of stderr kept (`tools.exec.maxOutputBytes`). */
  maxOutputBytes: number;
  logger: Logger;
  /** Masks known secret values in the output before the model sees it. */
  redact: (text: string) => string;
  /**
   * Binds `{{secret:NAME}}` references to the calling principal's secrets
   * (environment variables for this one run: the value reaches the process,
   * never the command text the model wrote or sees).
   */
  secrets?: SecretReferences;
}

/** Longest timeout a model may ask for, whatever the default. */
export const MAX_EXEC_TIMEOUT_MS = 10 * 60_000;

/** Arguments shared by `exec_shell` and `exec_bg`. */
export const ExecArgs = z.object({
  command: z.string().min(1).describe('Shell command (run with /bin/sh -c)'),
  cwd: z.string().optional().describe('Working directory relative to the workspace; the workspace root when omitted'),
});

/** Everything a command needs before it starts: policy checked, cwd confined, the principal's secrets bound. */
export async function prepareCommand(
  options: Pick<ExecToolsOptions, 'workspace' | 'policy' | 'secrets'>,
  args: { command: string; cwd?: string },
  ctx: Pick<ToolContext, 'approved' | 'principal'>,
): Promise<{ command: string; cwd: string; env: Record<string, string> }> {
  checkExecPolicy(options.policy, args.command, ctx.approved, ctx.principal);
  const cwd = options.workspace.resolve(args.cwd ?? '.');
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) {
    throw new ToolExecutionError(`working directory "${args.cwd}" is not a folder in the workspace`);
  }
  const bound = options.secrets
    ? await options.secrets.bind(ctx.principal, args.command)
    : { command: args.command, env: {} };
  if (!options.secrets && /\{\{secret:[^}]+\}\}/.test(args.command)) {
    throw new ToolExecutionError('the command references a secret but the vault is not enabled (security.enabled)');
  }
  return { command: bound.command, cwd, env: { ...baseShellEnv(options.workspace.root), ...bound.env } };
}

/**
 * `exec_shell`: runs a command in the foreground inside the workspace and
 * returns its exit code and (capped, secret-masked) output.
 * @example
 * const shell = createExecShellTool({ workspace, sandbox, policy: { policy: 'allow', allow: [] }, timeoutMs: 30_000,
 *   maxOutputBytes: 65_536, logger, redact: (t) => secrets.redactText(t) });
 */
export function createExecShellTool(options: ExecToolsOptions): AnyTool {
  return defineTool({
    name: 'exec_shell',
    description:
      'Runs a shell command in the workspace and waits for it: returns exitCode, stdout, stderr ' +
      `(each capped at ${options.maxOutputBytes} bytes) and timedOut. Use exec_bg for long-running commands.`,
    parameters: ExecArgs.extend({
      timeoutMs: z
        .number()
        .int()
        .positive()
        .max(MAX_EXEC_TIMEOUT_MS)
        .optional()
        .describe(`Timeout in milliseconds (default ${options.timeoutMs})`),
    }),
    execute: async (args, ctx) => {
      const prepared = await prepareCommand(options, args, ctx);
      options.logger.info('exec_shell', {
        command: options.redact(args.command),
        cwd: options.workspace.display(prepared.cwd),
      });
      const result = await runShell({
        ...prepared,
        sandbox: options.sandbox,
        timeoutMs: args.timeoutMs ?? options.timeoutMs,
        maxOutputBytes: options.maxOutputBytes,
        signal: ctx.signal,
      });
      return {
        ...result,
        stdout: options.redact(result.stdout),
        stderr: options.redact(result.stderr),
        cwd: options.workspace.display(prepared.cwd),
      };
    },
  });
}

export type { ExecPolicy };
