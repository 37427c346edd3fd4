import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LangoConfig } from '../../../src/config/schema';
import { createMemoryLogger } from '../../../src/log/logger';
import { BrowserUnavailableError, checkBrowser, createNavigator, navigatorFamily } from '../../../src/tools/navigator';
import { testChromium } from '../../support/chromium';

let CHROMIUM: string;

jest.setTimeout(30_000);

function configWith(browser: Record<string, unknown>): LangoConfig {
  return LangoConfig.parse({ tools: { browser } });
}

describe('navigator family', () => {
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-navigator-family-'));
    CHROMIUM = await testChromium();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function deps(config: LangoConfig) {
    return { config, dataDir: dir, logger: createMemoryLogger(), clock: () => new Date() };
  }

  it('is the browser row for the navigator, on unless tools.browser.enabled is false', () => {
    expect(navigatorFamily).toMatchObject({ name: 'browser', agent: 'navigator' });
    expect(navigatorFamily.enabled(configWith({}))).toBe(true);
    expect(navigatorFamily.enabled(configWith({ enabled: false }))).toBe(false);
    expect(configWith({}).tools.browser).toMatchObject({ navigationTimeoutMs: 15_000, actionTimeoutMs: 5_000 });
    // Unset, the browser is whatever the machine has (a warning when none); set, it is required.
    expect(configWith({}).tools.browser.executablePath).toBeUndefined();
    expect(navigatorFamily.optional?.(configWith({}))).toBe(true);
    expect(navigatorFamily.optional?.(configWith({ executablePath: '/opt/chromium' }))).toBe(false);
  });

  it('finds a Chromium with no executablePath set: the system one, else the packaged one', async () => {
    const check = await checkBrowser(configWith({}));
    expect(check).toEqual({ ok: true, version: expect.stringMatching(/^Chromium \d+\./), executablePath: CHROMIUM });
  });

  it('throws a clear reason when executablePath points at nothing', async () => {
    const creating = createNavigator(deps(configWith({ executablePath: '/nonexistent/chromium' })));
    await expect(creating).rejects.toThrow(BrowserUnavailableError);
    await expect(creating).rejects.toThrow(
      "no usable browser: no browser at /nonexistent/chromium (tools.browser.executablePath); install Debian's " +
        'chromium package or point executablePath at a Chromium',
    );
  });

  it('throws when executablePath is not executable or is not a browser', async () => {
    const plain = path.join(dir, 'plain-file');
    fs.writeFileSync(plain, 'not a program', { mode: 0o644 });
    await expect(createNavigator(deps(configWith({ executablePath: plain })))).rejects.toThrow(
      `no usable browser: ${plain} (tools.browser.executablePath) is not executable`,
    );
    const impostor = path.join(dir, 'impostor');
    fs.writeFileSync(impostor, '#!/bin/sh\necho "Impostor 1.0"\n', { mode: 0o755 });
    await expect(createNavigator(deps(configWith({ executablePath: impostor })))).rejects.toThrow(
      `no usable browser: ${impostor} (tools.browser.executablePath) does not look like Chromium (--version said "Impostor 1.0")`,
    );
    await expect(checkBrowser(configWith({ executablePath: dir }))).resolves.toEqual({
      ok: false,
      reason: `${dir} (tools.browser.executablePath) is not a file`,
    });
  });

  it('reports a disabled browser to the doctor', async () => {
    await expect(checkBrowser(configWith({ enabled: false }))).resolves.toEqual({
      ok: false,
      reason: 'tools.browser.enabled is false',
    });
  });

  it('finds the system Chromium, launches it for the doctor, and builds three browser_ tools', async () => {
    const check = await checkBrowser(configWith({ executablePath: CHROMIUM }), { launch: true });
    expect(check).toEqual({ ok: true, version: expect.stringMatching(/^Chromium \d+\./), executablePath: CHROMIUM });

    const navigator = await createNavigator(deps(configWith({ executablePath: CHROMIUM })));
    expect(navigator.tools.map((t) => t.name)).toEqual(['browser_navigate', 'browser_action', 'browser_screenshot']);
    // The browser starts on the first call, not when the family is created.
    expect(navigator.sessions.isBrowserRunning()).toBe(false);
    await navigator.close?.();
  });
});
