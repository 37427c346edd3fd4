import type { Browser, BrowserContext, BrowserType, Page } from 'playwright-core';
import { ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import { hostPort, reportedRefusals, startGuardProxy, type GuardProxy, type Refusal } from './guardProxy';
import type { HostPolicy } from './hostPolicy';

/**
 * Chromium flags for a headless node on a closed network: without the
 * background-networking switches Chromium keeps dialling Google services,
 * and QUIC would bypass the HTTP proxy the policy lives in. Playwright adds
 * `--headless` and a fresh temporary `--user-data-dir` itself.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--dns-prefetch-disable',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/**
 * Playwright's Chromium driver, loaded on first use: requiring playwright-core
 * costs about half a second, which a node that never browses should not pay.
 */
export async function loadChromium(): Promise<BrowserType> {
  return (await import('playwright-core')).chromium;
}

/**
 * Playwright's default signal handlers would close the browser and then
 * `process.exit(130)` on Ctrl-C, cutting the node's own graceful shutdown
 * short; the node closes the browser itself (`close()`), and Playwright still
 * kills it if the process exits without that.
 */
export const KEEP_SIGNALS = { handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false } as const;

/** What a tool works with: the session's page and the proxy that guards it. */
export interface BrowserSession {
  readonly sessionId: string;
  readonly page: Page;
  readonly proxy: GuardProxy;
  /**
   * The proxy's refusals after `mark` (a `proxy.refusalCount()`) that the
   * page itself asked for: Chromium's own service traffic (autofill,
   * favicons) is refused too but says nothing about the page.
   */
  pageRefusalsSince(mark: number): Refusal[];
}

/** Options for {@link createBrowserSessions}. */
export interface BrowserSessionsOptions {
  executablePath: string;
  /** A session's page is closed after this long without a call (`tools.browser.idleTimeoutMs`). */
  idleTimeoutMs: number;
  navigationTimeoutMs: number;
  actionTimeoutMs: number;
  policy: HostPolicy;
  logger: Logger;
}

/** One browser per node, one page (in its own context and proxy) per session. */
export interface BrowserSessions {
  /**
   * Runs `work` on the session's page, launching the browser and opening the
   * page on first use. Aborting `signal` rejects at once and closes the
   * session's page: the only way to stop a Playwright call in flight.
   */
  use<T>(sessionId: string, signal: AbortSignal, work: (session: BrowserSession) => Promise<T>): Promise<T>;
  /** Sessions with an open (or opening) page. */
  openSessions(): string[];
  /** True while a browser process is running. */
  isBrowserRunning(): boolean;
  /** Closes every page and the browser; later calls fail. */
  close(): Promise<void>;
}

interface Entry {
  session: BrowserSession;
  context: BrowserContext;
  busy: number;
  disposed: boolean;
  /** The promise the session map holds for this entry, to remove exactly this one. */
  ref?: Promise<Entry>;
  timer?: NodeJS.Timeout;
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0];
}

/**
 * Creates the session pool. Nothing is launched until the first `use`; a
 * page idle for `idleTimeoutMs` is closed, and when the last page goes the
 * browser goes too (it relaunches in well under a second).
 * @example
 * const sessions = createBrowserSessions({ executablePath: '/usr/bin/chromium', idleTimeoutMs: 300_000,
 *   navigationTimeoutMs: 15_000, actionTimeoutMs: 5_000, policy, logger });
 * const title = await sessions.use('ctx-1', signal, ({ page }) => page.title());
 */
export function createBrowserSessions(options: BrowserSessionsOptions): BrowserSessions {
  const { logger } = options;
  const entries = new Map<string, Promise<Entry>>();
  let browser: Promise<Browser> | undefined;
  let running = false;
  let closed = false;

  function launch(): Promise<Browser> {
    if (browser) return browser;
    const started = Date.now();
    const launching = loadChromium()
      .then((chromium) =>
        chromium.launch({
          executablePath: options.executablePath,
          args: [...CHROMIUM_ARGS],
          timeout: 30_000,
          ...KEEP_SIGNALS,
        }),
      )
      .then((launched) => {
        running = true;
        logger.info('browser launched', {
          executablePath: options.executablePath,
          ms: Date.now() - started,
        });
        launched.on('disconnected', () => {
          running = false;
          if (browser === launching) browser = undefined;
          for (const [sessionId, entry] of entries) void entry.then((e) => dispose(sessionId, e)).catch(() => {});
        });
        return launched;
      })
      .catch((error: unknown) => {
        if (browser === launching) browser = undefined;
        throw new ToolExecutionError(`could not start the browser at ${options.executablePath}: ${firstLine(error)}`, {
          cause: error,
        });
      });
    browser = launching;
    return launching;
  }

  async function open(sessionId: string): Promise<Entry> {
    const proxy = await startGuardProxy({
      policy: options.policy,
      logger: logger.child({ sessionId }),
    });
    try {
      const context = await (
        await launch()
      ).newContext({
        proxy: { server: proxy.server },
        serviceWorkers: 'block',
        acceptDownloads: false,
        viewport: { width: 1280, height: 800 },
      });
      const requested = new Set<string>();
      context.on('request', (request) => {
        if (requested.size >= 1_000) requested.clear();
        requested.add(hostPort(request.url()));
      });
      const pageRefusalsSince = (mark: number): Refusal[] =>
        reportedRefusals(proxy.refusalsSince(mark)).filter((r) => requested.has(hostPort(r.url)));
      const page = await context.newPage();
      page.setDefaultTimeout(options.actionTimeoutMs);
      page.setDefaultNavigationTimeout(options.navigationTimeoutMs);
      const entry: Entry = {
        session: { sessionId, page, proxy, pageRefusalsSince },
        context,
        busy: 0,
        disposed: false,
      };
      // A page that closes itself (window.close(), a crash) ends the session; the next call opens a new one.
      page.once('close', () => void dispose(sessionId, entry));
      // Armed now, so a page opened for a call that was cancelled meanwhile still closes when idle.
      armIdle(sessionId, entry);
      logger.debug('browser page opened', { sessionId });
      return entry;
    } catch (error) {
      await proxy.close();
      throw error;
    }
  }

  function entryFor(sessionId: string): Promise<Entry> {
    let entry = entries.get(sessionId);
    if (!entry) {
      entry = open(sessionId);
      const ref = entry;
      entries.set(sessionId, ref);
      ref
        .then((e) => (e.ref = ref))
        .catch(() => {
          if (entries.get(sessionId) === ref) entries.delete(sessionId);
        });
    }
    return entry;
  }

  async function dispose(sessionId: string, entry: Entry): Promise<void> {
    if (entry.disposed) return;
    entry.disposed = true;
    clearTimeout(entry.timer);
    if (entry.ref && entries.get(sessionId) === entry.ref) entries.delete(sessionId);
    await entry.context.close().catch(() => {});
    await entry.session.proxy.close();
  }

  function armIdle(sessionId: string, entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      logger.debug('browser page idle; closing', { sessionId });
      void dispose(sessionId, entry).then(closeBrowserIfUnused);
    }, options.idleTimeoutMs);
    entry.timer.unref();
  }

  async function closeBrowserIfUnused(): Promise<void> {
    if (entries.size > 0 || !browser) return;
    const current = browser;
    browser = undefined;
    running = false;
    await (await current.catch(() => undefined))?.close().catch(() => {});
    logger.debug('browser closed: no open pages');
  }

  async function use<T>(
    sessionId: string,
    signal: AbortSignal,
    work: (session: BrowserSession) => Promise<T>,
  ): Promise<T> {
    if (closed) throw new ToolExecutionError('the browser has been shut down');
    if (signal.aborted) throw new ToolExecutionError('the browser call was cancelled');
    let onAbort: () => void = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new ToolExecutionError('the browser call was cancelled'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {});
    try {
      let entry = await Promise.race([entryFor(sessionId), aborted]);
      // An idle close may have won the race for this entry: open a new page instead.
      for (let retry = 0; entry.disposed && retry < 3; retry += 1) {
        entry = await Promise.race([entryFor(sessionId), aborted]);
      }
      if (entry.disposed) throw new ToolExecutionError('the browser page closed while opening; try again');
      const current = entry;
      current.busy += 1;
      clearTimeout(current.timer);
      try {
        const working = work(current.session);
        let settled = false;
        // Also swallows the "target closed" rejection that follows an abort; nobody waits for it then.
        working.then(
          () => (settled = true),
          () => (settled = true),
        );
        const cancelled = aborted.catch(() => {
          // Closing the page is the only way to stop a Playwright call in flight.
          if (!settled) void dispose(sessionId, current);
          throw new ToolExecutionError('the browser call was cancelled; the session page was closed');
        });
        return await Promise.race([working, cancelled]);
      } finally {
        current.busy -= 1;
        if (current.busy === 0 && !current.disposed) armIdle(sessionId, current);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    use,
    openSessions: () => [...entries.keys()],
    isBrowserRunning: () => running,
    close: async () => {
      closed = true;
      const all = [...entries.entries()];
      await Promise.all(all.map(([id, e]) => e.then((entry) => dispose(id, entry)).catch(() => {})));
      entries.clear();
      const current = browser;
      browser = undefined;
      running = false;
      await (await current?.catch(() => undefined))?.close().catch(() => {});
    },
  };
}
