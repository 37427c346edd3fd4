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

/** A session's page as the pool holds it. */
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
 * The node's one Chromium process: launched on first demand, shared by every
 * session's context, stopped when the last page goes or the node closes.
 */
class ChromiumProcess {
  private browser: Promise<Browser> | undefined;
  private isRunning = false;

  /** `onDisconnected` hears of a browser that went away (crashed or closed): its pages are gone with it. */
  constructor(
    private readonly options: BrowserSessionsOptions,
    private readonly onDisconnected: () => void,
  ) {}

  /** True while a browser process is running. */
  get running(): boolean {
    return this.isRunning;
  }

  /** Whether a browser is running or launching. */
  get launched(): boolean {
    return this.browser !== undefined;
  }

  /** The running browser, launching it when there is none. */
  launch(): Promise<Browser> {
    if (this.browser) return this.browser;
    const { executablePath, logger } = this.options;
    const started = Date.now();
    const launching: Promise<Browser> = loadChromium()
      .then((chromium) =>
        chromium.launch({ executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000, ...KEEP_SIGNALS }),
      )
      .then((launched) => {
        this.isRunning = true;
        logger.info('browser launched', { executablePath, ms: Date.now() - started });
        launched.on('disconnected', () => {
          this.isRunning = false;
          if (this.browser === launching) this.browser = undefined;
          this.onDisconnected();
        });
        return launched;
      })
      .catch((error: unknown) => {
        if (this.browser === launching) this.browser = undefined;
        throw new ToolExecutionError(`could not start the browser at ${executablePath}: ${firstLine(error)}`, {
          cause: error,
        });
      });
    this.browser = launching;
    return launching;
  }

  /** Closes the browser, if one runs or is launching; the next `launch` starts a new one. */
  async stop(): Promise<void> {
    const current = this.browser;
    this.browser = undefined;
    this.isRunning = false;
    await (await current?.catch(() => undefined))?.close().catch(() => {});
  }
}

/** Opens a page for `sessionId` in a context of its own, behind a guard proxy of its own. */
async function openPage(
  sessionId: string,
  chromium: ChromiumProcess,
  options: BrowserSessionsOptions,
): Promise<Pick<Entry, 'session' | 'context'>> {
  const proxy = await startGuardProxy({ policy: options.policy, logger: options.logger.child({ sessionId }) });
  try {
    const context = await (
      await chromium.launch()
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
    return { session: { sessionId, page, proxy, pageRefusalsSince }, context };
  } catch (error) {
    await proxy.close();
    throw error;
  }
}

/** The sessions' pages: one per session, opened on demand, closed when idle, and the browser with the last of them. */
class SessionPages {
  private readonly entries = new Map<string, Promise<Entry>>();
  private isClosed = false;
  readonly chromium: ChromiumProcess;

  constructor(private readonly options: BrowserSessionsOptions) {
    this.chromium = new ChromiumProcess(options, () => {
      for (const [sessionId, entry] of this.entries) {
        void entry.then((e) => this.dispose(sessionId, e)).catch(() => {});
      }
    });
  }

  /** Set by {@link closeAll}: later calls fail. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Sessions with an open (or opening) page. */
  sessionIds(): string[] {
    return [...this.entries.keys()];
  }

  /** The session's page, opened when it has none. */
  entryFor(sessionId: string): Promise<Entry> {
    let entry = this.entries.get(sessionId);
    if (!entry) {
      entry = this.open(sessionId);
      const ref = entry;
      this.entries.set(sessionId, ref);
      ref
        .then((e) => (e.ref = ref))
        .catch(() => {
          if (this.entries.get(sessionId) === ref) this.entries.delete(sessionId);
        });
    }
    return entry;
  }

  /** Closes the entry's page, context and proxy, once, and forgets it. */
  async dispose(sessionId: string, entry: Entry): Promise<void> {
    if (entry.disposed) return;
    entry.disposed = true;
    clearTimeout(entry.timer);
    if (entry.ref && this.entries.get(sessionId) === entry.ref) this.entries.delete(sessionId);
    await entry.context.close().catch(() => {});
    await entry.session.proxy.close();
  }

  /** (Re)starts the entry's idle clock: untouched for `idleTimeoutMs`, its page closes. */
  armIdle(sessionId: string, entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      this.options.logger.debug('browser page idle; closing', { sessionId });
      void this.dispose(sessionId, entry).then(() => this.closeBrowserIfUnused());
    }, this.options.idleTimeoutMs);
    entry.timer.unref();
  }

  /** Closes every page and the browser; later calls fail. */
  async closeAll(): Promise<void> {
    this.isClosed = true;
    const all = [...this.entries.entries()];
    await Promise.all(all.map(([id, e]) => e.then((entry) => this.dispose(id, entry)).catch(() => {})));
    this.entries.clear();
    await this.chromium.stop();
  }

  private async open(sessionId: string): Promise<Entry> {
    const entry: Entry = { ...(await openPage(sessionId, this.chromium, this.options)), busy: 0, disposed: false };
    // A page that closes itself (window.close(), a crash) ends the session; the next call opens a new one.
    entry.session.page.once('close', () => void this.dispose(sessionId, entry));
    // Armed now, so a page opened for a call that was cancelled meanwhile still closes when idle.
    this.armIdle(sessionId, entry);
    this.options.logger.debug('browser page opened', { sessionId });
    return entry;
  }

  private async closeBrowserIfUnused(): Promise<void> {
    if (this.entries.size > 0 || !this.chromium.launched) return;
    await this.chromium.stop();
    this.options.logger.debug('browser closed: no open pages');
  }
}

/** A promise rejected when `signal` aborts (never unhandled), and the way to stop listening. */
function abortion(signal: AbortSignal): { aborted: Promise<never>; release(): void } {
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new ToolExecutionError('the browser call was cancelled'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  return { aborted, release: () => signal.removeEventListener('abort', onAbort) };
}

/** The session's live page: an idle close may win the race for an entry, and then a new page is opened. */
async function livePage(pages: SessionPages, sessionId: string, aborted: Promise<never>): Promise<Entry> {
  let entry = await Promise.race([pages.entryFor(sessionId), aborted]);
  for (let retry = 0; entry.disposed && retry < 3; retry += 1) {
    entry = await Promise.race([pages.entryFor(sessionId), aborted]);
  }
  if (entry.disposed) throw new ToolExecutionError('the browser page closed while opening; try again');
  return entry;
}

/** Runs `work` on the entry's page, its idle clock stopped meanwhile; an abort closes the page to stop it. */
async function workOn<T>(
  pages: SessionPages,
  sessionId: string,
  current: Entry,
  aborted: Promise<never>,
  work: (session: BrowserSession) => Promise<T>,
): Promise<T> {
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
      if (!settled) void pages.dispose(sessionId, current);
      throw new ToolExecutionError('the browser call was cancelled; the session page was closed');
    });
    return await Promise.race([working, cancelled]);
  } finally {
    current.busy -= 1;
    if (current.busy === 0 && !current.disposed) pages.armIdle(sessionId, current);
  }
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
  const pages = new SessionPages(options);
  return {
    use: async (sessionId, signal, work) => {
      if (pages.closed) throw new ToolExecutionError('the browser has been shut down');
      if (signal.aborted) throw new ToolExecutionError('the browser call was cancelled');
      const { aborted, release } = abortion(signal);
      try {
        return await workOn(pages, sessionId, await livePage(pages, sessionId, aborted), aborted, work);
      } finally {
        release();
      }
    },
    openSessions: () => pages.sessionIds(),
    isBrowserRunning: () => pages.chromium.running,
    close: () => pages.closeAll(),
  };
}
