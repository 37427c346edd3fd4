import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { testChromium } from '../support/chromium';
import { deadPort } from '../support/federationPeers';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

const OWNER_TOKEN = 'owner-browser-token-0123';
const GUEST_TOKEN = 'guest-browser-token-4567';
const SPECIALISTS = ['operator', 'navigator', 'vault', 'librarian', 'automator', 'planner', 'chronicler'];
/** The answer of the latest chat exchange. */
const ANSWER = '#chat-log .exchange:last-child .answer';
const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'console');

/**
 * The console in Debian's Chromium (playwright-core): a hub node with
 * `a2a.auth` and the scripted OpenAI-compatible model, federating a second
 * lango node on 127.0.0.1 (and an address where nothing listens). Signs in with the owner token, sees the tree and
 * the peer, chats (the answer streams chunk by chunk), follows the task into
 * its timeline, walks every control by keyboard, runs axe-core, and shows a
 * wrong credential its page. Screenshots go to test-artifacts/console/.
 * Needs `npm run build` (the console script is served from dist/console).
 */
describe('the console in Chromium', () => {
  const apps: LangoApp[] = [];
  const dirs: string[] = [];
  let model: OpenAIServer;
  let hubUrl: string;
  let browser: Browser;

  async function node(name: string, input: LangoConfigInput, withModel?: OpenAIServer): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-console-${name}-`));
    dirs.push(dir);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      ...input,
      ...(withModel
        ? { agent: { provider: 'openai', apiKey: 'sk-console', baseUrl: withModel.baseURL, model: 'scripted' } }
        : {}),
      a2a: { agentName: name, ...input.a2a },
    });
    const app = await createApp(config, { logger: createMemoryLogger() });
    apps.push(app);
    return app.listen();
  }

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    model = await startOpenAIServer();
    const peerUrl = await node('peer-node', { tools: { browser: { enabled: false } } });
    hubUrl = await node(
      'hub-node',
      {
        a2a: {
          auth: {
            bearerTokens: [GUEST_TOKEN],
            callers: [{ name: 'admin', owner: true, bearerTokens: [OWNER_TOKEN] }],
          },
          cardFetchTimeoutMs: 2000,
          remoteAgents: [
            { name: 'peer-node', baseUrl: peerUrl },
            { name: 'ghost', baseUrl: `http://127.0.0.1:${await deadPort()}` },
          ],
        },
      },
      model,
    );
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
    while (apps.length) await apps.pop()!.close();
    await model?.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  /** A page whose console errors and uncaught exceptions are collected. */
  async function watchedPage(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => errors.push(error.message));
    return { page, errors };
  }

  it('shows a wrong token and a caller that is not the owner a clear page, never a stack trace', async () => {
    const { page } = await watchedPage();
    try {
      const first = await page.goto(`${hubUrl}/console`);
      expect(first?.status()).toBe(401);
      await page.screenshot({ path: path.join(ARTIFACTS, 'signin.png') });
      await page.fill('#token', 'not-the-token');
      const [wrong] = await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
      expect(wrong?.status()).toBe(401);
      await expect(page.locator('h1').textContent()).resolves.toBe('401 · Not signed in');
      expect(await page.locator('[role=alert]').textContent()).toBe('that token is not one this node accepts');
      await page.screenshot({ path: path.join(ARTIFACTS, 'refused-401.png') });

      await page.click('text=Back to the sign-in form');
      await page.fill('#token', GUEST_TOKEN);
      const [guest] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      expect(guest?.status()).toBe(403);
      expect(await page.locator('[role=alert]').textContent()).toBe('only the node owner may look');
      expect(await page.content()).not.toMatch(/\bat .+\.(js|ts):\d+/);
      await page.screenshot({ path: path.join(ARTIFACTS, 'refused-403.png') });
    } finally {
      await page.close();
    }
  }, 60_000);

  it('signs the owner in, draws the tree and the peer, streams a chat answer, and shows its task and timeline', async () => {
    const { page, errors } = await watchedPage();
    try {
      await page.goto(`${hubUrl}/console`);
      await page.fill('#token', OWNER_TOKEN);
      const [signedIn] = await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
      expect(signedIn?.status()).toBe(200);
      // The sign-in page's own 401 is the browser's to log; from the console on, nothing may be.
      errors.length = 0;
      await page.waitForSelector('#graph g.agent[data-agent="peer-node"]');
      await page.locator('#live', { hasText: 'live: updates' }).waitFor();

      // (a) the tree: the orchestrator, the seven specialists with their families, the healthy peer.
      const agents = await page.$$eval('#graph g.agent', (nodes) =>
        nodes.map((n) => `${n.getAttribute('data-agent')}|${n.getAttribute('aria-label')}`),
      );
      for (const name of SPECIALISTS) expect(agents.some((a) => a.startsWith(`${name}|`))).toBe(true);
      expect(agents.find((a) => a.startsWith('peer-node|'))).toBe('peer-node|peer-node (remote), healthy');
      expect(agents.find((a) => a.startsWith('operator|'))).toMatch(/exec_\*/);
      // A peer that never answered is drawn too, skipped, with the reason.
      expect(agents.find((a) => a.startsWith('ghost|'))).toMatch(/^ghost\|ghost \(remote\), skipped: .*ECONNREFUSED/);
      await page.locator('#agents').screenshot({ path: path.join(ARTIFACTS, 'agents.png') });

      // The peer's card, one keypress away.
      await page.focus('#graph g.agent[data-agent="peer-node"]');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#card:not([hidden])');
      expect(await page.textContent('#card-body')).toContain('"name": "peer-node"');
      expect(await page.evaluate('document.activeElement.id')).toBe('card-close');
      await page.locator('#agents').screenshot({ path: path.join(ARTIFACTS, 'agent-card.png') });
      await page.keyboard.press('Enter');
      await page.waitForSelector('#card', { state: 'hidden' });

      // (d) the chat: each chunk is held until the page shows the one before, so the answer arrives in pieces.
      const pieces = ['Noted:', ' your cat', ' is Tom.'];
      let shownBeforeNext = 0;
      model.push(
        { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'librarian' } }] },
        { toolCalls: [{ name: 'save_knowledge', arguments: { kind: 'fact', content: 'my cat is Tom' } }] },
        {
          chunks: pieces,
          before: async (i) => {
            if (i === 0) return;
            // Polled from here: the console's CSP forbids the eval behind a string waitForFunction.
            await waitFor(
              async () => Number(await page.getAttribute(ANSWER, 'data-chunks')) >= i,
              10_000,
              `the page to show chunk ${i}`,
            );
            const state = await page.getAttribute(ANSWER, 'data-state');
            if (state !== 'completed') shownBeforeNext++;
          },
        },
      );
      await page.fill('#chat-input', 'remember that my cat is Tom');
      await page.press('#chat-input', 'Enter');
      const answer = page.locator(ANSWER);
      await page.waitForSelector(`${ANSWER}[data-state="completed"]`, { timeout: 20_000 });
      expect(await answer.textContent()).toBe('Noted: your cat is Tom.');
      expect(Number(await answer.getAttribute('data-chunks'))).toBe(3);
      expect(shownBeforeNext).toBe(2);
      // The line is rewritten when the stream closes, just after the completed state shows.
      await waitFor(
        async () =>
          (await page.textContent('#chat-log .exchange:last-child .acting'))?.includes('answered by librarian'),
        10_000,
        'the chat to name the answering agent (librarian)',
      );
      await page.locator('#chat').screenshot({ path: path.join(ARTIFACTS, 'chat.png') });

      // (b) the task in the list, live (no reload), and (c) its timeline naming the agent and the tool.
      const row = page.locator('#task-rows tr', { hasText: 'librarian' });
      await row.waitFor();
      expect(await row.locator('td.state').textContent()).toBe('completed');
      // An owner caller runs as the owner.
      expect(await row.textContent()).toContain('owner');
      await row.locator('button').press('Enter');
      await page.waitForSelector('#timeline-table:not([hidden])');
      const steps = await page.$$eval('#timeline-rows tr.step', (rows) =>
        rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')),
      );
      expect(steps.map((s) => s[1])).toEqual(expect.arrayContaining(['transfer librarian', 'tool save_knowledge']));
      const tool = steps.find((s) => s[1] === 'tool save_knowledge')!;
      expect(tool[2]).toBe('librarian');
      expect(tool[3]).toMatch(/^\d+ ms$/);
      expect(tool[5]).toContain('my cat is Tom');
      expect(tool[5]).not.toContain('error:');
      expect(await page.textContent('#timeline-rows tr.turn')).toContain('answered by librarian');
      await page.locator('#tasks').screenshot({ path: path.join(ARTIFACTS, 'tasks.png') });
      await page.locator('#timeline').screenshot({ path: path.join(ARTIFACTS, 'timeline.png') });

      // Filters: no failed task; the caller filter narrows by name.
      await page.selectOption('#filter-state', 'failed');
      await waitFor(async () => (await page.locator('#task-rows tr').count()) === 0, 5000, 'no rows');
      await page.selectOption('#filter-state', '');
      await page.fill('#filter-caller', 'owner');
      await waitFor(async () => (await page.locator('#task-rows tr').count()) === 1, 5000, 'one row');
      await page.fill('#filter-caller', 'bearer:');
      await waitFor(async () => (await page.locator('#task-rows tr').count()) === 0, 5000, 'no rows');
      await page.fill('#filter-caller', '');

      // A delegation to the federated peer: the timeline shows the remote call and its hops.
      model.push({ toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'peer-node' } }] });
      await page.fill('#chat-input', 'plan my week');
      await page.press('#chat-input', 'Enter');
      await page.waitForSelector(`${ANSWER}[data-state="completed"]`, { timeout: 20_000 });
      // The hub's model is the scripted one: an offline-model answer came from the peer node.
      expect(await answer.textContent()).toMatch(/^I'm \w+ on the offline model/);
      // The line is rewritten when the stream closes, just after the completed state shows.
      await waitFor(
        async () =>
          (await page.textContent('#chat-log .exchange:last-child .acting'))?.includes('answered by peer-node'),
        10_000,
        'the chat to name the answering agent (peer-node)',
      );
      await page.click('#chat-log .exchange:last-child .acting button');
      await page.locator('#timeline-rows tr.turn', { hasText: 'answered by peer-node' }).waitFor();
      const remote = await page.$$eval('#timeline-rows tr.step.remote', (rows) =>
        rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')),
      );
      expect(remote).toHaveLength(1);
      expect(remote[0][1]).toBe('remote peer-node');
      expect(remote[0][4]).toMatch(/^\d+ hops?$/);
      expect(model.unexpected).toEqual([]);
      await page.locator('#timeline').screenshot({ path: path.join(ARTIFACTS, 'timeline-remote.png') });
      await page.screenshot({ path: path.join(ARTIFACTS, 'console.png'), fullPage: true });

      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);

  it('reaches every control by Tab and has no serious or critical axe-core violation (contrast included)', async () => {
    const { page, errors } = await watchedPage();
    try {
      await page.goto(`${hubUrl}/console`);
      await page.fill('#token', OWNER_TOKEN);
      await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
      errors.length = 0;
      await page.waitForSelector('#graph g.agent[data-agent="peer-node"]');
      await page.waitForSelector('#task-rows tr button');

      // Every visible control is numbered; Tab must land on each number.
      const controls = await page.evaluate<number>(`(() => {
        const all = [...document.querySelectorAll('button, input, select, [tabindex="0"]')];
        const visible = all.filter((e) => !e.closest('[hidden]') && e.getClientRects().length > 0);
        visible.forEach((e, i) => e.setAttribute('data-control', String(i)));
        return visible.length;
      })()`);
      // The orchestrator, seven specialists, the peer, sign-out, the chat and filter controls, a task.
      expect(controls).toBeGreaterThanOrEqual(SPECIALISTS.length + 8);
      const reached = new Set<string>();
      for (let i = 0; i < controls + 3; i++) {
        await page.keyboard.press('Tab');
        const id = await page.evaluate<string | null>("document.activeElement.getAttribute('data-control')");
        if (id !== null) reached.add(id);
      }
      expect(reached.size).toBe(controls);

      const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
      await page.evaluate(axeSource);
      const violations = await page.evaluate<string[]>(`axe
        .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] } })
        .then((result) => result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => v.id + ' (' + v.impact + ') x' + v.nodes.length))`);
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
