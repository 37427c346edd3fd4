import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AnyTool, ToolContext } from '../../../src/agent/tool';
import { ToolExecutionError } from '../../../src/errors';
import { createMemoryLogger } from '../../../src/log/logger';
import {
  createBrowserSessions,
  createBrowserTools,
  createHostPolicy,
  type BrowserSessions,
} from '../../../src/tools/navigator';
import { OWNER } from '../../../src/principal';
import { testChromium } from '../../support/chromium';
import { waitFor } from '../../support/waitFor';

/**
 * Real Chromium (Debian's /usr/bin/chromium, installed by .ci/apt-packages)
 * against pages served on 127.0.0.1. One browser is shared by the whole
 * file; only the idle test starts a second one.
 */
let EXECUTABLE: string;

jest.setTimeout(30_000);

const PAGE = `<!doctype html><html><head><title>Test page</title></head><body>
<h1 id="greet">Hello from loopback</h1>
<button id="btn" onclick="document.getElementById('greet').textContent = 'Clicked!'">Change</button>
<input id="name" name="name" placeholder="your name">
<select id="color"><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select>
<a id="link" data-kind="nav" href="/second">Second page</a>
</body></html>`;
/** A page whose text arrives when the test lets the server answer `/late`. */
const LATE_PAGE = `<!doctype html><title>Late</title><p id="late"></p><a id="link" href="/second">Second page</a>
<script>fetch('/late').then((r) => r.text()).then((t) => { document.getElementById('late').textContent = t; });</script>`;

describe('navigator tools in real Chromium', () => {
  let server: http.Server;
  let port: number;
  let origin: string;
  let dataDir: string;
  let sessions: BrowserSessions;
  let tools: Record<string, AnyTool>;
  const hits: string[] = [];
  const hanging: http.ServerResponse[] = [];
  /** Requests for `/late`, held until a test answers them. */
  const late: http.ServerResponse[] = [];
  const logger = createMemoryLogger();

  function html(res: http.ServerResponse, body: string): void {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  }
  function redirect(res: http.ServerResponse, location: string): void {
    res.writeHead(302, { location }).end();
  }

  beforeAll(async () => {
    EXECUTABLE = await testChromium();
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      switch (req.url) {
        case '/page':
          return html(res, PAGE);
        case '/second':
          return html(res, '<title>Second</title><p>The second page.</p>');
        case '/redirect':
          return redirect(res, '/second');
        case '/redirect-denied':
          return redirect(res, 'http://denied.test/landing');
        case '/redirect-loopback':
          return redirect(res, `http://127.0.0.2:${port}/page`);
        case '/redirect-https-denied':
          return redirect(res, 'https://denied.test/landing');
        case '/embeds':
          return html(
            res,
            `<title>Embeds</title><p>Embedding</p><img src="http://denied.test/pixel.png">` +
              `<iframe src="http://127.0.0.2:${port}/page"></iframe>`,
          );
        case '/link-denied':
          return html(res, '<title>Links</title><a id="out" href="http://denied.test/away">away</a>');
        case '/hang':
          hanging.push(res);
          return;
        case '/late-page':
          return html(res, LATE_PAGE);
        case '/late':
          late.push(res);
          return;
        default:
          res.writeHead(404).end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-navigator-'));
    const policy = createHostPolicy({ allow: ['127.0.0.1', '*'], deny: ['denied.test'] });
    sessions = createBrowserSessions({
      executablePath: EXECUTABLE,
      idleTimeoutMs: 60_000,
      navigationTimeoutMs: 10_000,
      actionTimeoutMs: 10_000,
      policy,
      logger,
    });
    const list = createBrowserTools({
      sessions,
      policy,
      dataDir,
      clock: () => new Date('2026-01-02T03:04:05Z'),
      navigationTimeoutMs: 10_000,
      actionTimeoutMs: 10_000,
    });
    tools = Object.fromEntries(list.map((tool) => [tool.name, tool]));
  });

  afterAll(async () => {
    await sessions.close();
    for (const res of [...hanging, ...late]) res.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function ctx(sessionId = 'session-a', signal = new AbortController().signal): ToolContext {
    return { signal, logger, principal: OWNER, sessionId, agentName: 'navigator', approved: false };
  }
  /** Parses the arguments as the runtime does, then runs the tool. */
  async function call(name: string, args: Record<string, unknown>, context = ctx()): Promise<Record<string, unknown>> {
    const tool = tools[name];
    return (await tool.execute(tool.parameters.parse(args), context)) as Record<string, unknown>;
  }

  it('registers exactly browser_navigate, browser_action and browser_screenshot', () => {
    expect(Object.keys(tools)).toEqual(['browser_navigate', 'browser_action', 'browser_screenshot']);
  });

  it('navigates to a loopback page and returns its title, final url, status and text', async () => {
    const result = await call('browser_navigate', { url: `${origin}/page` });
    expect(result).toMatchObject({ url: `${origin}/page`, status: 200, title: 'Test page', truncated: false });
    expect(result.text).toContain('Hello from loopback');
    expect(result.blocked).toBeUndefined();
  });

  it('follows an allowed redirect and reports where it landed', async () => {
    const result = await call('browser_navigate', { url: `${origin}/redirect` }, ctx('session-redirect'));
    expect(result).toMatchObject({ url: `${origin}/second`, status: 200, title: 'Second' });
    expect(result.text).toBe('The second page.');
  });

  it('clicks a button that changes the text, then reads it back', async () => {
    await call('browser_navigate', { url: `${origin}/page` });
    await expect(call('browser_action', { action: 'read_text', selector: '#greet' })).resolves.toMatchObject({
      text: 'Hello from loopback',
      count: 1,
    });
    await expect(call('browser_action', { action: 'click', selector: '#btn' })).resolves.toMatchObject({
      action: 'click',
      url: `${origin}/page`,
      title: 'Test page',
    });
    await expect(call('browser_action', { action: 'read_text', selector: '#greet' })).resolves.toMatchObject({
      text: 'Clicked!',
    });
  });

  it('types into an input and selects an option, as read_element then shows', async () => {
    await call('browser_navigate', { url: `${origin}/page` });
    await expect(call('browser_action', { action: 'type', selector: '#name', text: 'Ada' })).resolves.toMatchObject({
      value: 'Ada',
    });
    await expect(call('browser_action', { action: 'select', selector: '#color', value: 'g' })).resolves.toMatchObject({
      selected: ['g'],
    });
    await expect(call('browser_action', { action: 'read_element', selector: '#name' })).resolves.toMatchObject({
      tag: 'input',
      value: 'Ada',
      attributes: { id: 'name', name: 'name', placeholder: 'your name' },
      visible: true,
      count: 1,
    });
    await expect(call('browser_action', { action: 'read_element', selector: '#color' })).resolves.toMatchObject({
      tag: 'select',
      value: 'g',
    });
  });

  it('reads an element with its attributes and html', async () => {
    await call('browser_navigate', { url: `${origin}/page` });
    const link = await call('browser_action', { action: 'read_element', selector: 'a#link' });
    expect(link).toMatchObject({
      tag: 'a',
      text: 'Second page',
      attributes: { id: 'link', 'data-kind': 'nav', href: '/second' },
    });
    expect(link.html).toBe('<a id="link" data-kind="nav" href="/second">Second page</a>');
  });

  it('waits for text that appears later, and clicking a link follows it', async () => {
    const held = late.length;
    await call('browser_navigate', { url: `${origin}/late-page`, waitUntil: 'domcontentloaded' });
    await waitFor(() => late.length > held, 20_000, 'the page to ask for its late text');
    let settled = false;
    const waited = call('browser_action', { action: 'wait', selector: '#late', text: 'Arrived', timeoutMs: 20_000 });
    void waited.finally(() => (settled = true)).catch(() => {});
    // The text cannot be there yet (the server holds it): the wait is still waiting when the server answers.
    await expect(call('browser_action', { action: 'read_text', selector: '#late' })).resolves.toMatchObject({
      text: '',
    });
    expect(settled).toBe(false);
    late.at(-1)!.writeHead(200, { 'content-type': 'text/plain' }).end('Arrived late');
    expect(await waited).toMatchObject({ waitedMs: expect.any(Number) });
    await expect(call('browser_action', { action: 'click', selector: '#link' })).resolves.toMatchObject({
      url: `${origin}/second`,
      title: 'Second',
    });
  });

  it('fails an action on a missing element within its timeout, with a short reason', async () => {
    await call('browser_navigate', { url: `${origin}/page` });
    // The element never appears: only the 300 ms timeout can end the click, and the reason names it.
    const failure = call('browser_action', { action: 'click', selector: '#nope', timeoutMs: 300 });
    await expect(failure).rejects.toThrow(ToolExecutionError);
    await expect(failure).rejects.toThrow(/^click #nope failed: .*Timeout 300ms exceeded/);
    await expect(call('browser_action', { action: 'type', selector: '#name' })).rejects.toThrow(
      'browser_action type needs "text"',
    );
  });

  it('saves a screenshot as a real PNG under dataDir/screenshots and returns its path', async () => {
    await call('browser_navigate', { url: `${origin}/page` }, ctx('shot/../session'));
    const shot = await call('browser_screenshot', {}, ctx('shot/../session'));
    expect(shot.file).toMatch(/^screenshots\/shot____session-2026-01-02T03-04-05-000Z-[0-9a-f]{6}\.png$/);
    expect(shot.path).toBe(path.join(dataDir, shot.file as string));
    const png = fs.readFileSync(shot.path as string);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.length).toBe(shot.bytes);
    expect(png.length).toBeGreaterThan(1_000);
    expect(shot).toMatchObject({ width: 1280, height: 800, url: `${origin}/page` });

    const element = await call('browser_screenshot', { selector: '#btn' }, ctx('shot/../session'));
    expect(element.width).toBeLessThan(1280);
    expect(JSON.stringify(shot)).not.toMatch(/base64|iVBOR/);
  });

  it('refuses a denied host and a loopback host that is not allowed, without loading them', async () => {
    await expect(call('browser_navigate', { url: 'http://denied.test/' })).rejects.toThrow(
      'navigation refused: host denied.test is denied by tools.browser.deny ("denied.test")',
    );
    await expect(call('browser_navigate', { url: `http://127.0.0.2:${port}/page` })).rejects.toThrow(
      /navigation refused: 127\.0\.0\.2 is a loopback address \(127\.0\.0\.0\/8\), not public; open it with tools\.browser\.allow/,
    );
  });

  it('refuses a redirect to a denied host, over http and over https', async () => {
    await expect(call('browser_navigate', { url: `${origin}/redirect-denied` })).rejects.toThrow(
      'navigation refused: host denied.test is denied by tools.browser.deny ("denied.test") (http://denied.test/landing)',
    );
    await expect(call('browser_navigate', { url: `${origin}/redirect-https-denied` })).rejects.toThrow(
      /navigation refused: host denied\.test is denied by tools\.browser\.deny/,
    );
  });

  it('refuses a redirect onto a loopback address that is not allowed', async () => {
    const before = hits.length;
    await expect(call('browser_navigate', { url: `${origin}/redirect-loopback` })).rejects.toThrow(
      /navigation refused: 127\.0\.0\.2 is a loopback address/,
    );
    expect(hits.slice(before)).toEqual(['/redirect-loopback']);
  });

  it('blocks frames and images from refused hosts and lists them', async () => {
    const result = await call('browser_navigate', { url: `${origin}/embeds` }, ctx('session-embeds'));
    expect(result).toMatchObject({ status: 200, title: 'Embeds' });
    const blocked = (result.blocked as Array<{ url: string; reason: string }>).map((b) => b.url).sort();
    expect(blocked).toEqual(['http://127.0.0.2:' + port + '/page', 'http://denied.test/pixel.png'].sort());
  });

  it('reports a click that tries to leave for a denied host', async () => {
    await call('browser_navigate', { url: `${origin}/link-denied` }, ctx('session-click-out'));
    const clicked = await call('browser_action', { action: 'click', selector: '#out' }, ctx('session-click-out'));
    expect(clicked.blocked).toEqual([
      { url: 'http://denied.test/away', reason: 'host denied.test is denied by tools.browser.deny ("denied.test")' },
    ]);
  });

  it('keeps one page per session', async () => {
    await call('browser_navigate', { url: `${origin}/page` }, ctx('session-one'));
    await call('browser_navigate', { url: `${origin}/second` }, ctx('session-two'));
    const one = await call('browser_action', { action: 'read_text', selector: 'h1' }, ctx('session-one'));
    expect(one.text).toBe('Hello from loopback');
    const two = await call('browser_action', { action: 'read_text' }, ctx('session-two'));
    expect(two.text).toBe('The second page.');
    expect(sessions.openSessions()).toEqual(expect.arrayContaining(['session-one', 'session-two']));
  });

  it('stops a navigation when the signal aborts and closes that session page', async () => {
    await call('browser_navigate', { url: `${origin}/second` }, ctx('session-abort'));
    const controller = new AbortController();
    const hangingBefore = hanging.length;
    const navigation = call('browser_navigate', { url: `${origin}/hang` }, ctx('session-abort', controller.signal));
    // Abort once the server holds the request, so the load is surely in flight.
    await waitFor(() => hanging.length > hangingBefore, 20_000, 'the server to hold the navigation');
    // The server never answers (its navigation timeout is 10 s): the call ends by the abort, and says so.
    controller.abort();
    await expect(navigation).rejects.toThrow('the browser call was cancelled; the session page was closed');
    await waitFor(() => !sessions.openSessions().includes('session-abort'), 20_000, 'the session page to close');
  });

  it('refuses a call whose signal is already aborted without opening a page', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      call('browser_navigate', { url: `${origin}/page` }, ctx('session-aborted-early', controller.signal)),
    ).rejects.toThrow('the browser call was cancelled');
    expect(sessions.openSessions()).not.toContain('session-aborted-early');
  });

  it('closes an idle page, and the browser with its last page', async () => {
    const policy = createHostPolicy({ allow: ['127.0.0.1'], deny: [] });
    const idle = createBrowserSessions({
      executablePath: EXECUTABLE,
      idleTimeoutMs: 200,
      navigationTimeoutMs: 10_000,
      actionTimeoutMs: 10_000,
      policy,
      logger,
    });
    try {
      const title = await idle.use('idle-session', new AbortController().signal, async ({ page }) => {
        await page.goto(`${origin}/second`);
        return page.title();
      });
      expect(title).toBe('Second');
      expect(idle.openSessions()).toEqual(['idle-session']);
      expect(idle.isBrowserRunning()).toBe(true);
      await waitFor(
        () => idle.openSessions().length === 0 && !idle.isBrowserRunning(),
        20_000,
        'the idle session and browser to close',
      );
      expect(idle.openSessions()).toEqual([]);
      expect(idle.isBrowserRunning()).toBe(false);
    } finally {
      await idle.close();
    }
  });
});
