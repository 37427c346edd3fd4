import type { AnyTool } from '../../agent/tool';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from '../../toolset/family';
import { createActionTool } from './actionTool';
import { BrowserUnavailableError, checkBrowser } from './checkBrowser';
import { createHostPolicy, type HostPolicy } from './hostPolicy';
import { createNavigateTool } from './navigateTool';
import { createScreenshotTool } from './screenshotTool';
import { createBrowserSessions, type BrowserSessions } from './sessions';

/** Options for {@link createBrowserTools}. */
export interface BrowserToolsOptions {
  sessions: BrowserSessions;
  policy: HostPolicy;
  dataDir: string;
  clock: () => Date;
  navigationTimeoutMs: number;
  actionTimeoutMs: number;
}

/**
 * The navigator's three tools over one session pool.
 * @example
 * const tools = createBrowserTools({ sessions, policy, dataDir, clock: () => new Date(),
 *   navigationTimeoutMs: 15_000, actionTimeoutMs: 5_000 });
 */
export function createBrowserTools(options: BrowserToolsOptions): AnyTool[] {
  return [createNavigateTool(options), createActionTool(options), createScreenshotTool(options)];
}

/**
 * Builds the navigator family from the node's config: checks the browser
 * first and throws {@link BrowserUnavailableError} with the reason when there
 * is none (the node then starts without `browser_` tools). The browser itself
 * starts on the first call; `close` shuts it down.
 * @example
 * const { tools, close } = await createNavigator({ config, dataDir, logger, clock: () => new Date() });
 */
export async function createNavigator(
  deps: Pick<ToolFamilyDeps, 'config' | 'dataDir' | 'logger' | 'clock'>,
): Promise<ToolFamilyInstance & { sessions: BrowserSessions }> {
  const check = await checkBrowser(deps.config);
  if (!check.ok) throw new BrowserUnavailableError(`no usable browser: ${check.reason}`);
  const settings = deps.config.tools.browser;
  const logger = deps.logger.child({ component: 'navigator' });
  const policy = createHostPolicy({
    allow: settings.allow,
    deny: settings.deny,
  });
  const sessions = createBrowserSessions({
    executablePath: check.executablePath,
    idleTimeoutMs: settings.idleTimeoutMs,
    navigationTimeoutMs: settings.navigationTimeoutMs,
    actionTimeoutMs: settings.actionTimeoutMs,
    policy,
    logger,
  });
  logger.info('navigator ready', { browser: check.version, executablePath: check.executablePath });
  const tools = createBrowserTools({
    sessions,
    policy,
    dataDir: deps.dataDir,
    clock: deps.clock,
    navigationTimeoutMs: settings.navigationTimeoutMs,
    actionTimeoutMs: settings.actionTimeoutMs,
  });
  return { tools, sessions, close: () => sessions.close() };
}

/** The `browser` row of the tool family table: `browser_*` tools for the navigator. */
export const navigatorFamily: ToolFamily = {
  name: 'browser',
  agent: 'navigator',
  enabled: (config) => config.tools.browser.enabled,
  // Without a configured executablePath the browser is whatever the machine has: none is a warning.
  optional: (config) => config.tools.browser.executablePath === undefined,
  create: (deps) => createNavigator(deps),
};
