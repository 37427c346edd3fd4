import type { AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
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

/** The session pool of a machine without a browser: every call answers `reason`, which says how to get one. */
function browserlessSessions(reason: string): BrowserSessions {
  return {
    use: () => Promise.reject(new ToolExecutionError(reason)),
    openSessions: () => [],
    isBrowserRunning: () => false,
    close: async () => {},
  };
}

/**
 * Builds the navigator family from the node's config: checks the browser
 * first and throws {@link BrowserUnavailableError} with the reason when there
 * is none (the node then starts without `browser_` tools), except when only
 * the optional packaged Chromium is missing: then the tools are there and
 * answer how to install it (`warning` says the same to `lango doctor`). The
 * browser itself starts on the first call; `close` shuts it down.
 * @example
 * const { tools, close } = await createNavigator({ config, dataDir, logger, clock: () => new Date() });
 */
export async function createNavigator(
  deps: Pick<ToolFamilyDeps, 'config' | 'dataDir' | 'logger' | 'clock'> &
    Partial<Pick<ToolFamilyDeps, 'packages' | 'systemChromium'>>,
): Promise<ToolFamilyInstance & { sessions: BrowserSessions }> {
  const check = await checkBrowser(deps.config, { packages: deps.packages, systemPath: deps.systemChromium });
  if (!check.ok && !check.missing) throw new BrowserUnavailableError(`no usable browser: ${check.reason}`);
  const settings = deps.config.tools.browser;
  const logger = deps.logger.child({ component: 'navigator' });
  const policy = createHostPolicy({
    allow: settings.allow,
    deny: settings.deny,
  });
  const toolsOver = (sessions: BrowserSessions) =>
    createBrowserTools({
      sessions,
      policy,
      dataDir: deps.dataDir,
      clock: deps.clock,
      navigationTimeoutMs: settings.navigationTimeoutMs,
      actionTimeoutMs: settings.actionTimeoutMs,
    });
  if (!check.ok) {
    logger.warn('navigator without a browser', { reason: check.reason });
    const sessions = browserlessSessions(check.reason);
    return { tools: toolsOver(sessions), sessions, warning: check.reason };
  }
  const sessions = createBrowserSessions({
    executablePath: check.executablePath,
    idleTimeoutMs: settings.idleTimeoutMs,
    navigationTimeoutMs: settings.navigationTimeoutMs,
    actionTimeoutMs: settings.actionTimeoutMs,
    policy,
    logger,
  });
  logger.info('navigator ready', { browser: check.version, executablePath: check.executablePath });
  return { tools: toolsOver(sessions), sessions, close: () => sessions.close() };
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
