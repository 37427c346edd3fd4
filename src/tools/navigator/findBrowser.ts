import { constants, promises as fs } from 'node:fs';
import { errorMessage } from '../../errors';

/** Debian's Chromium, used when `tools.browser.executablePath` is unset and it is there. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Where the navigator's Chromium is and how it was found, or why there is none. */
export type BrowserLocation =
  { ok: true; executablePath: string; source: 'config' | 'system' | 'package' } | { ok: false; reason: string };

/** The npm package that ships a brotli-packed Chromium (built for serverless hosts) and unpacks it on demand. */
const PACKAGED_CHROMIUM = '@sparticuz/chromium';

/**
 * Finds the Chromium to drive: the configured `executablePath` as it is
 * (checked later, so a wrong path is reported, not replaced); else Debian's
 * `/usr/bin/chromium` when it is an executable file; else the Chromium inside
 * the `@sparticuz/chromium` npm package, unpacked into the temp directory on
 * first use. A machine with only Node gets a navigator this way.
 * @example
 * const found = await findBrowser(config.tools.browser.executablePath);
 * if (found.ok) sessions = createBrowserSessions({ executablePath: found.executablePath, … });
 */
export async function findBrowser(
  configured: string | undefined,
  options: { systemPath?: string } = {},
): Promise<BrowserLocation> {
  if (configured !== undefined) return { ok: true, executablePath: configured, source: 'config' };
  const systemPath = options.systemPath ?? SYSTEM_CHROMIUM;
  if (await isExecutableFile(systemPath)) return { ok: true, executablePath: systemPath, source: 'system' };
  try {
    type Packaged = { executablePath(): Promise<string> };
    const loaded = (await import(PACKAGED_CHROMIUM)) as Packaged & { default?: Packaged };
    return { ok: true, executablePath: await (loaded.default ?? loaded).executablePath(), source: 'package' };
  } catch (err) {
    return {
      ok: false,
      reason:
        `no Chromium at ${systemPath} and the ${PACKAGED_CHROMIUM} package could not provide one ` +
        `(${errorMessage(err).split('\n')[0]}); install Debian's chromium package or set tools.browser.executablePath`,
    };
  }
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return false;
    await fs.access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
