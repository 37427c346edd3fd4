import { constants, promises as fs } from 'node:fs';
import { errorMessage } from '../../errors';
import { createPackageLoader, installHint, type OptionalPackage, type PackageLoader } from '../../packages';

/** Debian's Chromium, used when `tools.browser.executablePath` is unset and it is there. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Where the navigator's Chromium is and how it was found, or why there is none. */
export type BrowserLocation =
  | { ok: true; executablePath: string; source: 'config' | 'system' | 'package' }
  | { ok: false; reason: string; missing?: OptionalPackage };

/**
 * The npm package that ships a brotli-packed Chromium (built for serverless
 * hosts) and unpacks it on demand: optional (`src/packages.ts`).
 */
const PACKAGED_CHROMIUM = '@sparticuz/chromium';

/** What to do on a machine with no Chromium besides installing the package. */
const OTHER_WAYS = "or install Debian's chromium package, or set tools.browser.executablePath";

/**
 * Finds the Chromium to drive: the configured `executablePath` as it is
 * (checked later, so a wrong path is reported, not replaced); else Debian's
 * `/usr/bin/chromium` when it is an executable file; else the Chromium inside
 * the `@sparticuz/chromium` npm package (optional: when it is not installed,
 * the answer says how to install it, `missing` naming it), unpacked into the
 * temp directory on first use. A machine with only Node gets a navigator
 * this way.
 * @example
 * const found = await findBrowser(config.tools.browser.executablePath);
 * if (found.ok) sessions = createBrowserSessions({ executablePath: found.executablePath, … });
 */
export async function findBrowser(
  configured: string | undefined,
  options: { systemPath?: string; packages?: PackageLoader } = {},
): Promise<BrowserLocation> {
  if (configured !== undefined) return { ok: true, executablePath: configured, source: 'config' };
  const systemPath = options.systemPath ?? SYSTEM_CHROMIUM;
  if (await isExecutableFile(systemPath)) return { ok: true, executablePath: systemPath, source: 'system' };
  const packages = options.packages ?? createPackageLoader();
  if (!packages.installed(PACKAGED_CHROMIUM)) {
    return {
      ok: false,
      missing: PACKAGED_CHROMIUM,
      reason: `${installHint(PACKAGED_CHROMIUM, `the browser tools (no Chromium at ${systemPath})`)}; ${OTHER_WAYS}`,
    };
  }
  try {
    type Packaged = { executablePath(): Promise<string> };
    const loaded = packages.load<Packaged & { default?: Packaged }>(PACKAGED_CHROMIUM, 'the browser tools');
    return { ok: true, executablePath: await (loaded.default ?? loaded).executablePath(), source: 'package' };
  } catch (err) {
    return {
      ok: false,
      reason:
        `no Chromium at ${systemPath} and the ${PACKAGED_CHROMIUM} package could not provide one ` +
        `(${errorMessage(err).split('\n')[0]}); ${OTHER_WAYS}`,
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
