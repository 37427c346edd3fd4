import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import {
  edgesThroughBoxes,
  launchChromium,
  openConsole,
  seriousViolations,
  showView,
  watchedPage,
} from '../support/consolePage';
import { deadPort } from '../support/federationPeers';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

const OWNER_TOKEN = 'owner-browser-token-0123';
const GUEST_TOKEN = 'guest-browser-token-4567';
/** The model's API key: a registered secret, masked wherever it would show. */
const API_KEY = 'sk-console-secret-0987';
const SPECIALISTS = ['operator', 'navigator', 'vault', 'librarian', 'automator', 'planner', 'chronicler'];
/** The latest chat exchange. */
const LAST = '#chat-log .exchange:last-child';
const ANSWER = `${LAST} .answer`;

/**
 * The console in Debian's Chromium (playwright-core): a hub node with
 * `a2a.auth`, the scripted OpenAI-compatible model and commands that always
 * ask first, federating a second lango node on 127.0.0.1 and an address
 * where nothing listens. Each flow a person uses, with no console error and
 * no serious axe violation in any view. (The README's screenshots come from
 * a real session: `npm run screenshots`.) Needs `npm run build` (the console
 * is served from dist/console).
 */
describe('the console in Chromium', () => {
  const apps: LangoApp[] = [];
  const dirs: string[] = [];
  let model: OpenAIServer;
  let hubUrl: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  async function node(name: string, input: LangoConfigInput, withModel?: OpenAIServer): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-console-${name}-`));
    dirs.push(dir);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      ...input,
      ...(withModel
        ? { agent: { provider: 'openai', apiKey: API_KEY, baseUrl: withModel.baseURL, model: 'scripted' } }
        : {}),
      a2a: { agentName: name, ...input.a2a },
    });
    const app = await createApp(config, { logger: createMemoryLogger(), cwd: dir });
    apps.push(app);
    return app.listen();
  }

  /** Sends a chat message and waits for its turn to settle in `state`. */
  async function say(text: string, state = 'completed'): Promise<void> {
    await page.fill('#chat-input', text);
    await page.press('#chat-input', 'Enter');
    await page.waitForSelector(`${ANSWER}[data-state="${state}"]`, { timeout: 20_000, state: 'attached' });
    await page.waitForSelector('#chat-send:not([disabled])');
  }

  beforeAll(async () => {
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
          cardFetchTimeoutMs: 10_000,
          remoteAgents: [
            { name: 'peer-node', baseUrl: peerUrl },
            { name: 'ghost', baseUrl: `http://127.0.0.1:${await deadPort()}` },
          ],
        },
        tools: { exec: { sandbox: 'off' } },
      },
      model,
    );
    browser = await launchChromium();
    ({ page, errors } = await watchedPage(browser));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    while (apps.length) await apps.pop()!.close();
    await model?.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  afterEach(() => {
    // Every flow on the console page: no console error, no uncaught exception.
    expect(errors).toEqual([]);
    expect(model.unexpected).toEqual([]);
  });

  it('shows a wrong token and a caller that is not the owner a clear page, never a stack trace', async () => {
    const { page: other } = await watchedPage(browser);
    try {
      expect((await other.goto(`${hubUrl}/console`))?.status()).toBe(401);
      await other.fill('#token', 'not-the-token');
      const [wrong] = await Promise.all([other.waitForNavigation(), other.press('#token', 'Enter')]);
      expect(wrong?.status()).toBe(401);
      expect(await other.locator('[role=alert]').textContent()).toBe('that token is not one this node accepts');
      await other.click('text=Back to the sign-in form');
      await other.fill('#token', GUEST_TOKEN);
      const [guest] = await Promise.all([other.waitForNavigation(), other.click('button[type=submit]')]);
      expect(guest?.status()).toBe(403);
      expect(await other.locator('[role=alert]').textContent()).toBe('only the node owner may look');
      expect(await other.content()).not.toMatch(/\bat .+\.(js|ts):\d+/);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('streams an answer with its transfer and tool call as cards, keeps the newest reply in view, and lists the conversation', async () => {
    await openConsole(page, errors, hubUrl, OWNER_TOKEN);
    const pieces = ['Noted:', ' your cat', ' is Tom.'];
    let shownBeforeNext = 0;
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'librarian' } }] },
      {
        toolCalls: [{ name: 'save_knowledge', arguments: { kind: 'fact', content: `my cat is Tom (key ${API_KEY})` } }],
      },
      {
        chunks: pieces,
        // Each chunk is held until the page shows the one before: the answer arrives in pieces.
        before: async (i) => {
          if (i === 0) return;
          await waitFor(
            async () => Number(await page.getAttribute(ANSWER, 'data-chunks')) >= i,
            20_000,
            `the page to show chunk ${i}`,
          );
          if ((await page.getAttribute(ANSWER, 'data-state')) !== 'completed') shownBeforeNext++;
        },
      },
    );
    await say('remember that my cat is Tom');
    expect(await page.textContent(ANSWER)).toBe('Noted: your cat is Tom.');
    expect(Number(await page.getAttribute(ANSWER, 'data-chunks'))).toBe(3);
    expect(shownBeforeNext).toBe(2);
    const cards = await page.$$eval(`${LAST} li.card`, (items) =>
      items.map((i) => `${i.className}|${i.textContent}|${i.getAttribute('data-state') ?? ''}`),
    );
    expect(cards[0]).toMatch(/^card transfer\|transfer.*lango-orchestrator → librarian/);
    expect(cards[1]).toMatch(/^card tool\|tool.*librarian · save_knowledge.*my cat is Tom.*→ .*\|ok$/);
    // The tool's arguments are masked as in the timeline: the registered secret never reaches the page.
    expect(cards.join('\n')).not.toContain(API_KEY);
    expect(cards[1]).toContain('[REDACTED]');
    await waitFor(
      async () => (await page.textContent(`${LAST} .acting`))?.includes('answered by librarian'),
      20_000,
      'the chat to name the answering agent',
    );
    expect(await page.textContent(`${LAST} .bubble.agent .who`)).toBe('librarian');
    expect(await page.textContent('#chat-title')).toBe('remember that my cat is Tom');
    await page.locator('#conversation-groups a.conversation', { hasText: 'remember that my cat is Tom' }).waitFor();

    // Two more exchanges: the log scrolls so the newest reply is in view and the first is not.
    model.push({ text: `A longer answer.\n${'More detail.\n'.repeat(40)}` }, { text: 'Third answer.' });
    await say('tell me more');
    await say('and one more thing');
    const view = await page.evaluate<{ lastVisible: boolean; firstVisible: boolean; scrolled: boolean }>(`(() => {
      const log = document.getElementById('chat-log').getBoundingClientRect();
      const exchanges = document.querySelectorAll('#chat-log .exchange');
      const visible = (e) => { const r = e.getBoundingClientRect(); return r.bottom > log.top + 2 && r.top < log.bottom - 2; };
      const last = exchanges[exchanges.length - 1].querySelector('.answer').getBoundingClientRect();
      return { lastVisible: last.bottom <= log.bottom + 1 && last.top >= log.top - 1, firstVisible: visible(exchanges[0]),
        scrolled: document.getElementById('chat-log').scrollTop > 0 };
    })()`);
    expect(view).toEqual({ lastVisible: true, firstVisible: false, scrolled: true });

    // The conversation is listed by its first words, and marked as the one open.
    const listed = page.locator('#conversation-groups a.conversation', { hasText: 'remember that my cat is Tom' });
    await listed.waitFor();
    expect(await listed.getAttribute('aria-current')).toBe('true');
  }, 90_000);

  it('reopens a conversation from the list and continues it with the same contextId', async () => {
    await page.click('#new-conversation');
    expect(await page.locator('#chat-log .exchange').count()).toBe(0);
    model.push({ text: 'A fresh start.' });
    await say('a separate question');
    await page.locator('#conversation-groups a.conversation', { hasText: 'a separate question' }).waitFor();

    await page.click('#conversation-groups a.conversation:has-text("remember that my cat is Tom")');
    await page.locator('#chat-log .exchange .said', { hasText: 'and one more thing' }).waitFor();
    const said = await page.$$eval('#chat-log .exchange .said', (items) => items.map((i) => i.textContent));
    expect(said).toEqual(['remember that my cat is Tom', 'tell me more', 'and one more thing']);
    expect(await page.textContent('#chat-log .exchange:first-child .answer')).toBe('Noted: your cat is Tom.');
    model.push((body) => {
      // The reopened conversation's history went to the model: the same session (contextId) continues.
      const history = body.messages.map((m) => m.content ?? '').join('\n');
      return { text: history.includes('my cat is Tom') ? 'Still Tom.' : 'I do not know.' };
    });
    await say('what is my cat called?');
    expect(await page.textContent(ANSWER)).toBe('Still Tom.');
    expect(await page.locator('#conversation-groups [data-kind="chat"] li[data-context]').count()).toBe(2);
  }, 60_000);

  it('asks for approval inline: Approve runs the held command, Deny declines another', async () => {
    await page.click('#new-conversation');
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
      { toolCalls: [{ name: 'exec_shell', arguments: { command: 'echo approved-from-the-console' } }] },
    );
    await say('run echo for me', 'input-required');
    // The exchange that asked (approving appends the next one).
    const asked = (await page.locator('#chat-log .exchange').count()) - 1;
    const approval = page.locator('#chat-log .exchange').nth(asked).locator('li.card.approval');
    await approval.waitFor();
    expect(await approval.locator('.title').textContent()).toBe('operator asks to run exec_shell');
    expect(await approval.locator('.question').textContent()).toContain('echo approved-from-the-console');
    expect(await page.getAttribute(`${LAST} li.card.tool`, 'data-state')).toBe('approval');

    model.push((body) => {
      const result = body.messages.find((m) => m.role === 'tool' && m.content?.includes('approved-from-the-console'));
      return { text: result ? 'It printed approved-from-the-console.' : 'It did not run.' };
    });
    await approval.locator('button.approve').click();
    await page.waitForSelector(`${ANSWER}[data-state="completed"]`, { timeout: 20_000 });
    expect(await approval.getAttribute('data-state')).toBe('approved');
    expect(await page.textContent(`${LAST} .said`)).toBe('Approved');
    expect(await page.textContent('#chat-title')).toBe('run echo for me');
    expect(await page.textContent(ANSWER)).toBe('It printed approved-from-the-console.');

    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
      { toolCalls: [{ name: 'exec_shell', arguments: { command: 'echo never' } }] },
    );
    await say('and run echo never', 'input-required');
    model.push((body) => {
      const declined = body.messages.some((m) => m.role === 'tool' && /declin/i.test(m.content ?? ''));
      return { text: declined ? 'Understood, I did not run it.' : 'It ran.' };
    });
    await page.locator(`${LAST} li.card.approval button.deny`).click();
    await page.waitForSelector(`${ANSWER}[data-state="completed"]`, { timeout: 20_000 });
    expect(await page.textContent(`${LAST} .said`)).toBe('Denied');
    expect(await page.textContent(ANSWER)).toBe('Understood, I did not run it.');
  }, 60_000);

  it('shows a delegation to a federated peer as a remote-call card', async () => {
    model.push({ toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'peer-node' } }] });
    await say('plan my week');
    // The hub's model is the scripted one: an offline-model answer came from the peer node.
    expect(await page.textContent(ANSWER)).toMatch(/^I'm \w+ on the offline model/);
    // One card for the call, naming the peer's endpoint, its progress as it went, and how it ended.
    const remote = page.locator(`${LAST} li.card.remote`);
    expect(await remote.count()).toBe(1);
    expect(await remote.locator('.title').textContent()).toMatch(/^peer-node at http:\/\/127\.0\.0\.1:\d+\/?$/);
    expect(await remote.locator('.detail').textContent()).toMatch(/^started → sending → .*completed$/);
    expect(await remote.getAttribute('data-state')).toBe('completed');
  }, 60_000);

  it('lists tasks with what was asked, agent, state, duration and replica, and opens a timeline', async () => {
    await showView(page, 'tasks');
    const row = page.locator('#task-rows tr', { hasText: 'remember that my cat is Tom' });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    // Asked, state, agent, caller, replica (none: SQLite), started, took.
    expect(cells[0]).toBe('remember that my cat is Tom');
    expect(cells.slice(1, 5)).toEqual(['completed', 'librarian', 'owner', '—']);
    expect(cells[6]).toMatch(/^\d+(\.\d)? m?s$/);
    // Approve answered the task that asked: one task, completed, its two turns in its timeline.
    const approved = page.locator('#task-rows tr', { hasText: 'run echo for me' });
    expect((await approved.locator('td').allTextContents()).slice(0, 3)).toEqual([
      'run echo for me',
      'completed',
      'operator',
    ]);
    expect(await page.locator('#task-rows tr', { hasText: /^yes/ }).count()).toBe(0);
    await approved.locator('a.open-task').click();
    await waitFor(async () => (await page.locator('#turns details.turn').count()) === 2, 20_000, 'two turns');
    expect(await page.textContent('#turns details.turn >> nth=0')).toContain('input-required');
    expect(await page.textContent('#turns details.turn >> nth=1')).toContain('completed, answered by operator');
    await row.locator('a.open-task').click();
    await page.waitForSelector('#turns details.turn[open] table.waterfall');
    const steps = await page.$$eval('#turns table.waterfall tr.span', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    const names = steps.map((s) => s[0].replace(/ inspect$/, ''));
    expect(names).toEqual(expect.arrayContaining(['transfer librarian', 'tool save_knowledge']));
    expect(steps.find((s) => s[0] === 'tool save_knowledge')![1]).toMatch(/^\d+(\.\d)? m?s$/);
    // The tool step opens in the inspector: its agent, its arguments masked, the registered secret never shown.
    await page.locator('#turns a.step-link', { hasText: 'tool save_knowledge' }).click();
    await page.locator('#inspector-title', { hasText: 'tool save_knowledge' }).waitFor();
    expect(await page.locator('#inspector-body dd').first().textContent()).toBe('librarian');
    expect(await page.textContent('#inspector-body')).toContain('my cat is Tom');
    expect(await page.textContent('#inspector-body')).not.toContain(API_KEY);
    await page.selectOption('#filter-state', 'failed');
    await waitFor(async () => (await page.locator('#task-rows tr td.state').count()) === 0, 20_000, 'no failed task');
    await page.selectOption('#filter-state', '');
    await row.waitFor();
  }, 60_000);

  it('lays the agent graph out with elkjs, no edge through a box, and opens an agent card', async () => {
    await showView(page, 'agents');
    await page.waitForSelector('#graph g.agent[data-agent="peer-node"]');
    const agents = await page.$$eval('#graph g.agent', (nodes) =>
      nodes.map((n) => `${n.getAttribute('data-agent')}|${n.getAttribute('aria-label')}`),
    );
    for (const name of SPECIALISTS) expect(agents.some((a) => a.startsWith(`${name}|`))).toBe(true);
    expect(agents.find((a) => a.startsWith('peer-node|'))).toBe('peer-node|peer-node (remote), healthy');
    expect(agents.find((a) => a.startsWith('ghost|'))).toMatch(/^ghost\|ghost \(remote\), skipped: .*ECONNREFUSED/);
    // The families are the family table's: the operator's exec and fs; the librarian's one family.
    expect(agents.find((a) => a.startsWith('operator|'))).toMatch(/: exec, fs$/);
    expect(agents.find((a) => a.startsWith('librarian|'))).toMatch(/: librarian$/);
    expect(agents.join('\n')).not.toMatch(/_\*/);
    const layout = await edgesThroughBoxes(page);
    expect(layout.edges).toBeGreaterThan(SPECIALISTS.length + 2);
    expect(layout.crossings).toEqual([]);

    await page.focus('#graph g.agent[data-agent="peer-node"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#card:not([hidden])');
    expect(await page.textContent('#card-body')).toContain('"name": "peer-node"');
    expect(await page.evaluate('document.activeElement.id')).toBe('card-close');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#card', { state: 'hidden' });
  }, 60_000);

  it('shows each remote agent with health, breaker and probes, and probes one now', async () => {
    const peer = page.locator('#peer-rows tr[data-peer="peer-node"]');
    const ghost = page.locator('#peer-rows tr[data-peer="ghost"]');
    await peer.waitFor();
    expect(await peer.locator('td.health').textContent()).toBe('healthy');
    expect(await peer.locator('td.breaker').textContent()).toBe('closed');
    expect(await ghost.locator('td.health').textContent()).toMatch(/^skipped since \d/);
    expect(await ghost.locator('td.io').textContent()).toMatch(/ECONNREFUSED/);
    // The probe at start-up, then one asked for now: its time and what the card said.
    expect(await peer.locator('td.last-probe').textContent()).toMatch(/ · answered in \d+ ms$/);
    await peer.locator('button', { hasText: 'Probe now' }).click();
    await page.locator('#peers-status', { hasText: 'peer-node probed just now.' }).waitFor();
    await waitFor(
      async () => /^just now · answered in \d+ ms$/.test((await peer.locator('td.last-probe').textContent()) ?? ''),
      20_000,
      'the new probe to show',
    );
    expect(await peer.locator('td.health').textContent()).toBe('healthy');
    await ghost.locator('button', { hasText: 'Probe now' }).click();
    await page.locator('#peers-status', { hasText: 'ghost probed just now.' }).waitFor();
    expect(await ghost.locator('td.last-probe').textContent()).toBe('just now · failed');
    expect(await ghost.locator('td.health').textContent()).toMatch(/^skipped since /);
    expect(await page.isVisible('#replicas-alone')).toBe(true);
  }, 60_000);

  it('runs a tool from a form generated from its argument schema, and the memory view shows what it saved', async () => {
    await showView(page, 'tools');
    await page.waitForSelector('#tool-select option[value="save_knowledge"]', { state: 'attached' });
    await page.selectOption('#tool-select', 'save_knowledge');
    // The form follows the schema: the kind is a choice of its enum, the content required.
    const kinds = await page.$$eval('#arg-kind option', (options) => options.map((o) => o.getAttribute('value')));
    expect(kinds).toEqual(expect.arrayContaining(['fact', 'rule', 'definition', 'preference']));
    expect(await page.getAttribute('#arg-content', 'required')).toBe('');
    await page.selectOption('#arg-kind', 'preference');
    await page.fill('#arg-content', 'Deploys happen on Tuesdays');
    await page.fill('#arg-tags', 'ops\nrelease');
    await page.fill('#arg-triples', '[{"subject":"deploys","predicate":"happen_on","object":"tuesday"}]');
    await page.click('#tool-run');
    await page.waitForSelector('#tool-result[data-status="completed"]');
    expect(await page.textContent('#tool-result-title')).toBe('save_knowledge returned');
    expect(await page.textContent('#tool-result')).toContain('Deploys happen on Tuesdays');

    // A tool that asks first: its question, then Approve and run.
    await page.selectOption('#tool-select', 'exec_shell');
    await page.fill('#arg-command', 'echo from-the-tool-runner');
    await page.click('#tool-run');
    await page.waitForSelector('#tool-result[data-status="approval-required"]');
    expect(await page.textContent('#tool-result')).toContain('echo from-the-tool-runner');
    await page.click('#tool-approval button.approve');
    await page.waitForSelector('#tool-result[data-status="completed"]');
    expect(await page.textContent('#tool-result')).toContain('from-the-tool-runner');

    await showView(page, 'memory');
    const saved = page.locator('#knowledge-list li', { hasText: 'Deploys happen on Tuesdays' });
    await saved.waitFor();
    expect(await saved.locator('.badge').textContent()).toBe('preference');
    await page.locator('#knowledge-list li', { hasText: 'my cat is Tom' }).waitFor();
    expect(await page.textContent('#triple-list')).toBe('deploys happen_on tuesday');
    await page.fill('#knowledge-query', 'Tuesdays');
    await waitFor(async () => (await page.locator('#knowledge-list li.row').count()) === 1, 20_000, 'one match');
    await page.fill('#knowledge-query', '');
    await waitFor(async () => (await page.locator('#knowledge-list li.row').count()) === 2, 20_000, 'both again');
  }, 60_000);

  it("browses another caller's memory and knowledge as that caller: none of the owner's rows", async () => {
    model.push({ text: 'Hello, guest.' });
    const reply = await fetch(hubUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${GUEST_TOKEN}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'guest-1', role: 'ROLE_USER', parts: [{ text: 'hello from a guest' }] } },
      }),
    });
    expect(reply.status).toBe(200);
    await page.reload();
    await page.waitForSelector('#memory-caller option[value^="bearer:"]', { state: 'attached' });
    const guest = (await page.getAttribute('#memory-caller option[value^="bearer:"]', 'value'))!;
    await page.selectOption('#memory-caller', guest);
    await page.locator('#knowledge-list li', { hasText: 'No knowledge saved.' }).waitFor();
    expect(await page.textContent('#knowledge-list')).not.toContain('Tuesdays');
    await page.selectOption('#memory-caller', 'owner');
    await page.locator('#knowledge-list li', { hasText: 'Tuesdays' }).waitFor();
  }, 60_000);

  it('walks the tabs by keyboard and has no serious or critical axe violation in any view', async () => {
    await showView(page, 'chat');
    await page.focus('#tab-chat');
    for (const view of ['tasks', 'agents', 'tools', 'memory']) {
      await page.keyboard.press('ArrowRight');
      expect(await page.evaluate('document.activeElement.id')).toBe(`tab-${view}`);
      await page.waitForSelector(`#view-${view}:not([hidden])`);
    }
    await page.keyboard.press('Home');
    expect(await page.evaluate('document.activeElement.id')).toBe('tab-chat');
    // Tab from the tabs reaches the chat's controls.
    await page.keyboard.press('Tab');
    const reached: string[] = [];
    for (let i = 0; i < 40; i++) {
      reached.push(await page.evaluate<string>('document.activeElement.id || document.activeElement.className'));
      await page.keyboard.press('Tab');
    }
    expect(reached).toEqual(expect.arrayContaining(['new-conversation', 'chat-input']));

    for (const view of ['chat', 'tasks', 'agents', 'tools', 'memory'] as const) {
      await showView(page, view);
      if (view === 'agents') await page.waitForSelector('#graph g.agent');
      if (view === 'tasks') await page.waitForSelector('#task-rows tr a.open-task');
      expect([view, await seriousViolations(page)]).toEqual([view, []]);
    }
  }, 90_000);
});
