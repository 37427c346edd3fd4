import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import type { LangoConfig } from '../../config/schema';
import { LangoError } from '../../errors';
import type { OptionalPackage, PackageLoader } from '../../packages';
import { findBrowser } from './findBrowser';
import { CHROMIUM_ARGS, KEEP_SIGNALS, loadChromium } from './sessions';

/** Whether the node has a browser it can drive (and where), and if not, why not (for `lango doctor`). */
export type BrowserCheck =
  { ok: true; version: string; executablePath: string } | { ok: false; reason: string; missing?: OptionalPackage };

/** Thrown by the navigator family when no usable browser exists; the node starts without `browser_` tools. */
export class BrowserUnavailableError extends LangoError {}

/** Options for {@link checkBrowser}. */
export interface CheckBrowserOptions {
  /** Also launch and close the browser (about a second): catches a binary that starts but cannot run. */
  launch?: boolean;
  timeoutMs?: number;
  /** Where the packaged Chromium comes from (the node's package loader). */
  packages?: PackageLoader;
  /** Where the machine's own Chromium is looked for (Debian's when unset). */
  systemPath?: string;
}

function versionOf(executablePath: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(executablePath, ['--version'], { timeout: timeoutMs }, (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.trim().split('\n')[0] ?? '');
    });
  });
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0];
}

/**
 * Checks `tools.browser`: enabled, a Chromium found ({@link findBrowser}: the
 * configured `executablePath`, Debian's, or the packaged one) that is an
 * executable answering `--version`, and optionally a real headless launch.
 * Never throws.
 * @example
 * const check = await checkBrowser(config);
 * if (!check.ok) console.log(`navigator: off (${check.reason})`);
 */
export async function checkBrowser(config: LangoConfig, options: CheckBrowserOptions = {}): Promise<BrowserCheck> {
  const { enabled } = config.tools.browser;
  const timeoutMs = options.timeoutMs ?? 15_000;
  if (!enabled) return { ok: false, reason: 'tools.browser.enabled is false' };
  const found = await findBrowser(config.tools.browser.executablePath, {
    packages: options.packages,
    systemPath: options.systemPath,
  });
  if (!found.ok) return found;
  const { executablePath } = found;
  const where =
    found.source === 'config'
      ? `${executablePath} (tools.browser.executablePath)`
      : found.source === 'package'
        ? `${executablePath} (the Chromium of the @sparticuz/chromium package)`
        : executablePath;

  try {
    const stat = await fs.stat(executablePath);
    if (!stat.isFile()) return { ok: false, reason: `${where} is not a file` };
    await fs.access(executablePath, constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      return {
        ok: false,
        reason: `no browser at ${where}; install Debian's chromium package or point executablePath at a Chromium`,
      };
    }
    if (code === 'EACCES') return { ok: false, reason: `${where} is not executable` };
    return { ok: false, reason: `cannot use ${where}: ${firstLine(error)}` };
  }

  let version: string;
  try {
    version = await versionOf(executablePath, timeoutMs);
  } catch (error) {
    return {
      ok: false,
      reason: `${executablePath} --version failed: ${firstLine(error)}`,
    };
  }
  if (!/chrom|edge|brave|opera/i.test(version)) {
    return {
      ok: false,
      reason: `${where} does not look like Chromium (--version said "${version}")`,
    };
  }

  if (options.launch) {
    try {
      const browser = await (
        await loadChromium()
      ).launch({
        executablePath,
        args: [...CHROMIUM_ARGS],
        timeout: timeoutMs,
        ...KEEP_SIGNALS,
      });
      await browser.close();
    } catch (error) {
      return {
        ok: false,
        reason: `${executablePath} did not start headless: ${firstLine(error)}`,
      };
    }
  }
  return { ok: true, version, executablePath };
}
