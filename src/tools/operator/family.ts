import fs from 'node:fs';
import path from 'node:path';
import type { LangoConfig } from '../../config/schema';
import type { ToolFamily, ToolFamilyDeps } from '../../toolset/family';
import { createExecShellTool } from './exec';
import { createExecBgTools } from './execBg';
import { createFsTools } from './fs';
import { createJobManager } from './jobs';
import type { ExecPolicy } from './policy';
import { createSandbox, describeSandbox, type Sandbox, type SandboxStatus } from './sandbox';
import { createSkillTool, loadSkills } from './skills';
import { createWorkspace, type Workspace } from './workspace';
import { errorMessage } from '../../errors';

/**
 * The workspace root the config asks for: `tools.fs.root` (resolved against
 * the current directory, like `dataDir`), else `<dataDir>/workspace`.
 */
export function workspaceRoot(config: LangoConfig, dataDir: string): string {
  return config.tools.fs.root ? path.resolve(config.tools.fs.root) : path.join(dataDir, 'workspace');
}

/** Creates the workspace shared by the exec and fs families. */
export function workspaceFor(deps: Pick<ToolFamilyDeps, 'config' | 'dataDir'>): Workspace {
  return createWorkspace({ root: workspaceRoot(deps.config, deps.dataDir), dataDir: deps.dataDir });
}

/**
 * The sandbox commands run in, as `tools.exec` asks (`sandbox`, `bwrapPath`,
 * `network`), checked once by running bubblewrap; `lango doctor` reports it.
 * Throws when `tools.exec.sandbox` is `bwrap` and bubblewrap cannot run.
 */
export function sandboxFor(deps: Pick<ToolFamilyDeps, 'config' | 'dataDir'>, workspace: Workspace): Promise<Sandbox> {
  const exec = deps.config.tools.exec;
  return createSandbox({
    mode: exec.sandbox,
    bwrapPath: exec.bwrapPath,
    network: exec.network,
    workspace: workspace.root,
    dataDir: deps.dataDir,
  });
}

/**
 * Whether commands (`exec_*`, background jobs, script skills) would run
 * confined under `config`, and if not, why: what `lango doctor` reports.
 */
export async function checkCommandSandbox(config: LangoConfig, dataDir: string): Promise<SandboxStatus> {
  try {
    return (await sandboxFor({ config, dataDir }, workspaceFor({ config, dataDir }))).status;
  } catch (err) {
    return { confined: false, reason: errorMessage(err), commands: 'refused' };
  }
}

/** `tools.exec.policy` and its allow-list, with every command held for approval when `sandbox` does not confine. */
function execPolicyFor(deps: Pick<ToolFamilyDeps, 'config' | 'logger'>, sandbox: Sandbox): ExecPolicy {
  const { policy, allow } = deps.config.tools.exec;
  if (sandbox.status.confined) return { policy, allow };
  deps.logger.warn('commands are not sandboxed', { sandbox: describeSandbox(sandbox.status) });
  return { policy, allow, unconfined: sandbox.status.reason };
}

/**
 * `exec_*`: shell commands in the workspace (foreground and background),
 * confined by the sandbox and gated by `tools.exec.enabled`; `close` stops
 * the background jobs.
 */
export const execFamily: ToolFamily = {
  name: 'exec',
  agent: 'operator',
  enabled: (config) => config.tools.exec.enabled,
  create: async (deps) => {
    const exec = deps.config.tools.exec;
    const logger = deps.logger.child({ component: 'exec' });
    const workspace = workspaceFor(deps);
    const sandbox = await sandboxFor(deps, workspace);
    const options = {
      workspace,
      sandbox,
      policy: execPolicyFor({ config: deps.config, logger }, sandbox),
      timeoutMs: exec.timeoutMs,
      maxOutputBytes: exec.maxOutputBytes,
      logger,
      redact: (text: string) => deps.secrets.redactText(text),
      secrets: deps.secretReferences,
    };
    const jobs = createJobManager({
      store: deps.stores.execJobs,
      outputDir: path.join(deps.dataDir, 'exec-jobs'),
      logger,
      clock: deps.clock,
      sandbox,
    });
    await jobs.start();
    return {
      tools: [createExecShellTool(options), ...createExecBgTools({ ...options, jobs })],
      close: () => jobs.close(),
    };
  },
};

/** `fs_*`: file tools confined to the workspace, gated by `tools.fs.enabled`. */
export const fsFamily: ToolFamily = {
  name: 'fs',
  agent: 'operator',
  enabled: (config) => config.tools.fs.enabled,
  create: (deps) => ({
    tools: createFsTools({
      workspace: workspaceFor(deps),
      maxReadBytes: deps.config.tools.fs.maxReadBytes,
      logger: deps.logger.child({ component: 'fs' }),
    }),
  }),
};

/** Where skills live: `<dataDir>/skills/<folder>/SKILL.md`. */
export function skillsDir(dataDir: string): string {
  return path.join(dataDir, 'skills');
}

/** How long the skills folder must be quiet before it is read again (an editor writes in bursts). */
const SKILLS_RELOAD_DEBOUNCE_MS = 200;

/**
 * `skill_*`: one tool per active skill, gated by `tools.skills.enabled`.
 * Script skills run in the same sandbox as `exec_*` and obey the exec policy; a folder whose SKILL.md does not parse
 * is skipped with a warning naming the reason. The folder is watched: a skill
 * written by the librarian's `create_skill` (or by hand) becomes a tool
 * without a restart.
 */
export const skillsFamily: ToolFamily = {
  name: 'skills',
  agent: 'operator',
  enabled: (config) => config.tools.skills.enabled,
  create: async (deps) => {
    const exec = deps.config.tools.exec;
    const logger = deps.logger.child({ component: 'skills' });
    const dir = skillsDir(deps.dataDir);
    const workspace = workspaceFor(deps);
    const sandbox = await sandboxFor(deps, workspace);
    const policy = execPolicyFor({ config: deps.config, logger }, sandbox);
    const scanTools = () => {
      const scan = loadSkills(dir);
      for (const error of scan.errors) logger.warn('skill skipped', { dir: error.dir, reason: error.reason });
      const tools = scan.skills
        .filter((skill) => skill.active)
        .map((skill) =>
          createSkillTool(skill, {
            workspace,
            sandbox,
            policy,
            timeoutMs: exec.timeoutMs,
            maxOutputBytes: exec.maxOutputBytes,
            logger,
            redact: (text) => deps.secrets.redactText(text),
            secrets: deps.secretReferences,
          }),
        );
      logger.info('skills loaded', { dir, active: tools.length, skipped: scan.errors.length });
      return tools;
    };
    const tools = scanTools();

    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    let timer: NodeJS.Timeout | undefined;
    const reload = () => {
      const next = scanTools();
      const names = (list: { name: string }[]) => list.map((t) => t.name).join(',');
      const changed = names(next) !== names(tools);
      tools.splice(0, tools.length, ...next);
      // Same names can still mean new bodies: the fresh tools are in place either way; only a new set needs a new tree.
      if (changed) deps.toolsChanged();
    };
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(dir, { recursive: true }, () => {
        clearTimeout(timer);
        timer = setTimeout(reload, SKILLS_RELOAD_DEBOUNCE_MS);
        timer.unref();
      });
      watcher.on('error', (err) => logger.warn('skills folder watch stopped', { dir, error: err.message }));
    } catch (err) {
      logger.warn('skills folder not watched; new skills need a restart', { dir, error: errorMessage(err) });
    }
    return {
      tools,
      close: () => {
        clearTimeout(timer);
        watcher?.close();
      },
    };
  },
};
