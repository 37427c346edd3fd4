import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { testChromium } from '../support/chromium';
import { startCuttingProxy, type CuttingProxy } from '../support/cuttingProxy';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

const OWNER_TOKEN = 'owner-resume-token-0123';
const ANSWER = '#chat-log .exchange:last-child .answer';

/**
 * The console's chat over a connection that drops mid-answer (issue 27), in
 * Debian's Chromium: the page reaches the node through a proxy that cuts
 * the chat's stream after a few events; the page takes the stream up after
 * its last event (SubscribeToTask, Last-Event-ID) without a reload, and the
 * answer shows whole, each chunk once. Needs `npm run build`.
 */
describe('the console chat resumes a dropped stream', () => {
  let model: OpenAIServer;
  let app: LangoApp;
  let proxy: CuttingProxy;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    model = await startOpenAIServer();
    proxy = await startCuttingProxy();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-console-resume-'));
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      agent: { provider: 'openai', apiKey: 'sk-console', baseUrl: model.baseURL, model: 'scripted', multiAgent: false },
      tools: { browser: { enabled: false } },
      a2a: { auth: { callers: [{ name: 'admin', owner: true, bearerTokens: [OWNER_TOKEN] }] } },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
    proxy.target(Number(new URL(await app.listen()).port));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: await testChromium(),
      args: ['--no-sandbox', '--disable-gpu'],
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await proxy?.close();
    await model?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes the chat stream up after its last event once the connection drops: the answer whole, no reload', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${proxy.url}/console`);
      await page.fill('#token', OWNER_TOKEN);
      await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
      await page.locator('#live', { hasText: 'live' }).waitFor();
      let loads = 0;
      page.on('load', () => (loads += 1));
      const pieces = ['One', ' two', ' three', ' four', ' five.'];
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      model.push({ chunks: pieces, before: (i) => (i < 2 ? Promise.resolve() : released) });
      // Cut once the page has the task, its working state and the first two chunks.
      proxy.cutNextStream(4);
      await page.fill('#chat-input', 'count to five');
      await page.press('#chat-input', 'Enter');
      await waitFor(() => proxy.cuts === 1, 20_000, 'the chat stream to be cut');
      release();
      await page.waitForSelector(`${ANSWER}[data-state="completed"]`, { timeout: 20_000 });
      expect(await page.textContent(ANSWER)).toBe('One two three four five.');
      expect(Number(await page.getAttribute(ANSWER, 'data-chunks'))).toBe(pieces.length);
      // Taken up in place: the page was never loaded again.
      expect(loads).toBe(0);
    } finally {
      await page.close();
    }
  }, 60_000);
});
