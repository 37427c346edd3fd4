import fs from 'node:fs';
import path from 'node:path';
import type { LangoConfig } from '../../config/schema';
import type { ToolFamily, ToolFamilyDeps } from '../family';
import { createExecShellTool } from './exec';
import { createExecBgTools } from './execBg';
import { createFsTools } from './fs';
import { createJobManager } from './jobs';
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
 * `exec_*`: shell commands in the workspace (foreground and background),
 * gated by `tools.exec.enabled`; `close` stops the background jobs.
 */
export const execFamily: ToolFamily = {
  name: 'exec',
  agent: 'operator',
  enabled: (config) => config.tools.exec.enabled,
  create: async (deps) => {
    const exec = deps.config.tools.exec;
    const logger = deps.logger.child({ component: 'exec' });
    const options = {
      workspace: workspaceFor(deps),
      policy: { policy: exec.policy, allow: exec.allow },
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
 * Script skills obey the exec policy; a folder whose SKILL.md does not parse
 * is skipped with a warning naming the reason. The folder is watched: a skill
 * written by the librarian's `create_skill` (or by hand) becomes a tool
 * without a restart.
 */
export const skillsFamily: ToolFamily = {
  name: 'skills',
  agent: 'operator',
  enabled: (config) => config.tools.skills.enabled,
  create: (deps) => {
    const exec = deps.config.tools.exec;
    const logger = deps.logger.child({ component: 'skills' });
    const dir = skillsDir(deps.dataDir);
    const workspace = workspaceFor(deps);
    const scanTools = () => {
      const scan = loadSkills(dir);
      for (const error of scan.errors) logger.warn('skill skipped', { dir: error.dir, reason: error.reason });
      const tools = scan.skills
        .filter((skill) => skill.active)
        .map((skill) =>
          createSkillTool(skill, {
            workspace,
            policy: { policy: exec.policy, allow: exec.allow },
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

    fs.mkdirSync(dir, { recursive: true });
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
