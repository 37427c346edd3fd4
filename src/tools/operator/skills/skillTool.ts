import { z } from 'zod';
import { defineTool, type AnyTool } from '../../../agent/tool';
import { ToolExecutionError } from '../../../errors';
import { hasSecretReferences } from '../../../vault/references';
import type { ExecToolsOptions } from '../exec';
import { checkExecPolicy } from '../policy';
import { baseShellEnv, runShell } from '../shell';
import type { LoadedSkill } from './load';
import type { SkillInterpreter, SkillParameter } from './skillFile';

/**
 * Options for {@link createSkillTool}: those of `exec_shell` (script skills run under the exec policy:
 * `skill_<name>` on the allow-list counts as allowed); secret references are resolved in argument values
 * instead of bound into the command, and refused when `secrets` is absent.
 */
export type SkillToolOptions = ExecToolsOptions;

/** The code goes in through `$SKILL_CODE`, so it is never re-parsed by the shell. */
const LAUNCH: Record<SkillInterpreter, string> = {
  sh: 'exec /bin/sh -c "$SKILL_CODE" skill',
  bash: 'exec bash -c "$SKILL_CODE" skill',
  python3: 'exec python3 -c "$SKILL_CODE"',
  node: 'exec node -e "$SKILL_CODE"',
};

function parameterSchema(parameters: SkillParameter[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const p of parameters) {
    let field: z.ZodType =
      p.type === 'boolean'
        ? z.boolean()
        : p.type === 'number'
          ? z.number()
          : p.type === 'integer'
            ? z.number().int()
            : z.string();
    if (p.description) field = field.describe(p.description);
    shape[p.name] = p.required ? field : field.optional();
  }
  return z.object(shape);
}

/** Fills `{{name}}` placeholders of a prompt template; unknown placeholders stay as written. */
export function renderTemplate(template: string, args: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (whole, name: string) =>
    args[name] === undefined ? whole : String(args[name]),
  );
}

/**
 * Turns a skill into the tool `skill_<name>`. A prompt skill returns its
 * template filled with the arguments, as instructions for the calling agent.
 * A script skill runs in the workspace like `exec_shell` (same policy,
 * timeout, output cap), arguments in `SKILL_ARG_<NAME>` and `SKILL_ARGS`
 * (JSON) rather than spliced into code.
 */
export function createSkillTool(skill: LoadedSkill, options: SkillToolOptions): AnyTool {
  const toolName = `skill_${skill.name}`;
  return defineTool({
    name: toolName,
    description: `${skill.description} (skill, ${skill.kind})`,
    parameters: parameterSchema(skill.parameters),
    execute: async (args: Record<string, unknown>, ctx) => {
      if (!skill.script) {
        return { skill: skill.name, kind: 'prompt', instructions: renderTemplate(skill.body, args) };
      }
      checkExecPolicy(options.policy, toolName, ctx.approved, ctx.principal);
      const env: Record<string, string> = {
        ...baseShellEnv(options.workspace.root),
        SKILL_DIR: skill.dir,
        SKILL_CODE: skill.script.code,
      };
      const resolve = async (text: string): Promise<string> => {
        if (!hasSecretReferences(text)) return text;
        if (!options.secrets) throw new ToolExecutionError('secret references need the vault (security.enabled)');
        return options.secrets.resolve(ctx.principal, text);
      };
      const values: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(args)) {
        if (value === undefined) continue;
        values[name] = typeof value === 'string' ? await resolve(value) : value;
        env[`SKILL_ARG_${name.toUpperCase()}`] = String(values[name]);
      }
      env.SKILL_ARGS = JSON.stringify(values);
      options.logger.info('skill run', { skill: skill.name, args: Object.keys(values) });
      const result = await runShell({
        command: LAUNCH[skill.script.interpreter],
        cwd: options.workspace.root,
        sandbox: options.sandbox,
        // The skill's own folder (helper files beside SKILL.md), read-only; nothing else of the data directory.
        readOnly: [skill.dir],
        env,
        timeoutMs: options.timeoutMs,
        maxOutputBytes: options.maxOutputBytes,
        signal: ctx.signal,
      });
      return {
        skill: skill.name,
        kind: 'script',
        ...result,
        stdout: options.redact(result.stdout),
        stderr: options.redact(result.stderr),
      };
    },
  });
}
