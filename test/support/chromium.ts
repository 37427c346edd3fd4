import { findBrowser } from '../../src/tools/navigator/findBrowser';

/**
 * The Chromium the browser tests drive, found as the node finds it:
 * `LANGO_TEST_CHROMIUM` when set, else Debian's `/usr/bin/chromium`, else the
 * one the `@sparticuz/chromium` package unpacks (a machine with only Node).
 * Fails the suite with the reason when there is none, never skips it.
 */
export async function testChromium(): Promise<string> {
  const found = await findBrowser(process.env.LANGO_TEST_CHROMIUM || undefined);
  if (!found.ok) throw new Error(found.reason);
  return found.executablePath;
}
