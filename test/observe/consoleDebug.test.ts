import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { CLI_MAIN } from '../support/cliProcess';
import { launchChromium, openConsole, seriousViolations, showView, watchedPage } from '../support/consolePage';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

/** The model's API key: a registered secret, never shown. */
const API_KEY = 'sk-debug-browser-0987';
const LAST = '#chat-log .exchange:last-child';
const ANSWER = `${LAST} .answer`;

/** An answer a hostile model could give: markup, a script, a bad link, a table, huge and deep JSON, a long word. */
function hostileAnswer(): string {
  const huge = JSON.stringify({ items: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `item ${i}` })) });
  let deep: unknown = 'bottom';
  for (let i = 0; i < 200; i++) deep = { level: deep };
  return [
    '# Report <script>window.__pwned = 1</script>',
    '<img src=x onerror="window.__pwned = 2"> **bold** and _soft_ and `code`',
    '[click me](javascript:window.__pwned=3) and [docs](https://example.com/a?b=c)',
    '',
    '| name | value |',
    '|---|---|',
    '| <b>x</b> | `y` |',
    '',
    '```html',
    '<script>window.__pwned = 4</script>',
    '```',
    '',
    huge,
    '',
    JSON.stringify(deep),
    '',
    `a-very-long-word-${'x'.repeat(20_000)}`,
  ].join('\n');
}

/**
 * The console as a debugger, in Debian's Chromium (playwright-core): a node
 * on the scripted OpenAI-compatible model, no `a2a.auth` (the loopback
 * owner, so the real `lango` CLI talks to it too), federating a second lango
 * node on the offline model. The model inspector opened from the chat and
 * from the task table, the waterfall (a remote call nested under its
 * agent), a replay side by side, a hostile answer rendered safely,
 * conversations chosen, renamed, found, deleted and grouped, and deep links
 * followed at any time; no console error, no serious axe violation. Needs
 * `npm run build` (the console is served from dist/console, the CLI from dist).
 */
describe('debugging agents in the console', () => {
  const apps: LangoApp[] = [];
  const dirs: string[] = [];
  let model: OpenAIServer;
  let hubUrl: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  async function node(name: string, input: LangoConfigInput, withModel?: OpenAIServer): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-debug-${name}-`));
    dirs.push(dir);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
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

  async function say(text: string, state = 'completed'): Promise<void> {
    await page.fill('#chat-input', text);
    await page.press('#chat-input', 'Enter');
    await page.waitForSelector(`${ANSWER}[data-state="${state}"]`, { timeout: 20_000, state: 'attached' });
    await page.waitForSelector('#chat-send:not([disabled])');
  }

  /** The address the last exchange's "inspect this turn" link names. */
  async function inspectLink(): Promise<URLSearchParams> {
    const href = (await page.locator(`${LAST} a.inspect`).getAttribute('href'))!;
    return new URLSearchParams(href.slice(1));
  }

  /** `lango --url <hub> chat "<message>"`, the real CLI's one-shot chat; resolves with its exit code. */
  function cliChat(message: string): Promise<number | null> {
    return new Promise((resolve, reject) => {
      const cli = spawn(process.execPath, [CLI_MAIN, '--url', hubUrl, 'chat', message], {
        cwd: os.tmpdir(),
        env: { PATH: process.env.PATH, HOME: os.tmpdir() },
        stdio: 'ignore',
      });
      cli.on('error', reject);
      cli.on('exit', (code) => resolve(code));
    });
  }

  beforeAll(async () => {
    model = await startOpenAIServer();
    const peerUrl = await node('peer-node', {});
    // No memory observer: it would call the scripted model after a long turn, off the test's script.
    hubUrl = await node(
      'hub-node',
      { a2a: { remoteAgents: [{ name: 'peer-node', baseUrl: peerUrl }] }, observationalMemory: { enabled: false } },
      model,
    );
    browser = await launchChromium();
    ({ page, errors } = await watchedPage(browser));
    await openConsole(page, errors, hubUrl);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    while (apps.length) await apps.pop()!.close();
    await model?.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(errors).toEqual([]);
    expect(model.unexpected).toEqual([]);
  });

  let inspected: URLSearchParams;

  it('inspects a model step from the chat: its system prompt, messages, tools offered, answer, tool calls, tokens and latency', async () => {
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'librarian' } }] },
      { toolCalls: [{ name: 'save_knowledge', arguments: { kind: 'fact', content: `the key is ${API_KEY}` } }] },
      { text: '**Saved** the `fact`.', usage: { prompt_tokens: 321, completion_tokens: 12 } },
    );
    await say('remember the picnic is on Saturday');
    // The tool card gets its result in full once the turn ends, rendered as foldable JSON.
    const result = page.locator(`${LAST} li.card.tool details.result`);
    await result.waitFor();
    await result.locator(':scope > summary').click();
    expect(await result.locator('.json-view details').count()).toBeGreaterThan(0);
    inspected = await inspectLink();
    expect(inspected.get('view')).toBe('tasks');
    await page.click(`${LAST} a.inspect`);
    await page.waitForSelector('#view-tasks:not([hidden])');
    await page.locator('#inspector-title', { hasText: 'model openai:scripted' }).waitFor();
    // The first model step: the orchestrator's, offered the transfer, answering with it.
    let body = page.locator('#inspector-body');
    expect(await body.locator('dd').first().textContent()).toBe('lango-orchestrator');
    expect(await body.locator('ul.tools-offered > li > details > summary').allTextContents()).toEqual([
      'transfer_to_agent',
    ]);
    expect(await body.locator('.inspect-answer ul.tool-calls').textContent()).toContain('librarian');

    // The librarian's last call: what it was sent (the user's message, its tool call, the tool's result) and said.
    const lastModel = page.locator('#turns details.turn[open] tr.span.model a.step-link').last();
    await lastModel.click();
    await page.locator('#turns tr.span.selected').waitFor();
    body = page.locator('#inspector-body');
    await waitFor(async () => (await body.textContent())?.includes('321 in / 12 out'), 20_000, 'the last model step');
    expect(await body.locator('dd').nth(2).textContent()).toMatch(/^\d+(\.\d)? m?s$/);
    expect(await body.locator('.inspect-answer strong').textContent()).toBe('Saved');
    const messages = await body
      .locator('ol.messages > li')
      .evaluateAll((items) => items.map((li) => `${li.className}|${li.querySelector('.badge')?.textContent}`));
    expect(messages).toEqual([
      'message user|user',
      'message assistant|lango-orchestrator',
      'message tool|tool transfer_to_agent',
      'message assistant|librarian',
      'message tool|tool save_knowledge',
    ]);
    expect(await body.locator('ol.messages > li').first().textContent()).toContain(
      'remember the picnic is on Saturday',
    );
    await body.locator('summary', { hasText: 'System prompt' }).click();
    expect(await body.locator('pre.prompt').textContent()).toContain('librarian');
    await body.locator('summary', { hasText: /^Tools offered/ }).click();
    expect(await body.locator('ul.tools-offered > li > details > summary').allTextContents()).toContain(
      'save_knowledge',
    );
    // Secrets stay out: the registered key is redacted wherever it was sent or answered.
    const shown = (await page.textContent('#view-tasks'))!;
    expect(shown).not.toContain(API_KEY);
    expect(shown).toContain('[REDACTED]');
    expect([await seriousViolations(page)]).toEqual([[]]);
  }, 90_000);

  it('opens the inspector from the task table, and draws a turn as a waterfall with a remote call nested under its agent, and the remote’s own steps under the call', async () => {
    model.push({ toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'peer-node' } }] });
    await showView(page, 'chat');
    await page.click('#new-conversation');
    await say('ask the peer for its tools');
    await showView(page, 'tasks');
    const row = page.locator('#task-rows tr', { hasText: 'ask the peer for its tools' });
    await row.locator('a.open-task').click();
    const table = page.locator('#turns details.turn[open] table.waterfall');
    await table.waitFor();
    const spans = await page.evaluate<Array<{ name: string; depth: number; left: number; width: number }>>(`
      [...document.querySelectorAll('#turns details.turn[open] table.waterfall tr.span')].map((r) => {
        const name = r.querySelector('td.span-name');
        const bar = r.querySelector('.bar');
        return {
          name: name.childNodes[0].textContent,
          depth: Number(name.style.getPropertyValue('--depth')),
          left: parseFloat(bar.style.left),
          width: parseFloat(bar.style.width),
        };
      })`);
    expect(spans.map((s) => `${'  '.repeat(s.depth)}${s.name}`)).toEqual([
      'turn',
      '  agent lango-orchestrator',
      '    model openai:scripted',
      '    transfer peer-node',
      '  agent peer-node',
      '    remote peer-node',
      // The peer is a lango node: its own account's steps nest under the call, named by the node that ran them.
      '      agent lango-orchestrator',
    ]);
    const nested = table.locator('tr.span', { has: page.locator('.remote-node') });
    expect(await nested.count()).toBe(1);
    expect(await nested.locator('.remote-node').textContent()).toMatch(/^on \S+/);
    for (const span of spans) {
      expect(span.left).toBeGreaterThanOrEqual(0);
      expect(span.width).toBeGreaterThan(0);
      expect(span.left + span.width).toBeLessThanOrEqual(100.5);
    }
    // The remote call's row: its hop; its step opens in the inspector with its result.
    const remote = table.locator('tr.span.remote');
    expect(await remote.locator('td').nth(2).textContent()).toMatch(/^\d+ in \/ \d+ out · 1 hop$/);
    await remote.locator('a.step-link').click();
    await page.locator('#inspector-title', { hasText: 'remote peer-node' }).waitFor();
    expect(await page.textContent('#inspector-body')).toContain('Hops1');
    // A model step of the table's task opens its exchange.
    await table.locator('tr.span.model a.step-link').click();
    await page.locator('#inspector-body .inspect-answer').waitFor();
    expect([await seriousViolations(page)]).toEqual([[]]);
  }, 90_000);

  it('replays a turn with an agent’s prompt edited and another model, side by side, the original conversation untouched', async () => {
    const original = inspected;
    await page.evaluate(`location.hash = ${JSON.stringify(`#view=chat`)}`);
    await page.goto(`${hubUrl}/console#view=tasks&task=${original.get('task')}&turn=${original.get('turn')}&replay=1`);
    await page.locator('#replay-form').waitFor();
    errors.length = 0;
    expect(await page.inputValue('#replay-message')).toBe('remember the picnic is on Saturday');
    await page.selectOption('#replay-agent', 'librarian');
    expect(await page.inputValue('#replay-instruction')).toContain('librarian');
    await page.fill('#replay-instruction', 'You are a terse librarian.');
    await page.fill('#replay-model', 'other-model');
    const seen: Array<{ model: string; system: string }> = [];
    const record = (body: { model: string; messages: Array<{ role: string; content?: string | null }> }) =>
      seen.push({ model: body.model, system: body.messages[0]?.content ?? '' });
    model.push(
      (body) => (record(body), { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'librarian' } }] }),
      (body) => (record(body), { text: 'Terse: saved.' }),
    );
    const before = await (await fetch(`${hubUrl}/console/api/conversations`)).json();
    await page.click('#replay-run');
    await page.locator('#replay-result .compare').waitFor({ timeout: 20_000 });
    expect(seen).toEqual([
      { model: 'other-model', system: expect.not.stringContaining('terse') },
      { model: 'other-model', system: 'You are a terse librarian.' },
    ]);
    const sides = page.locator('#replay-result .side');
    expect(await sides.nth(0).locator('h3').textContent()).toBe('Original');
    expect(await sides.nth(0).locator('.side-answer strong').textContent()).toBe('Saved');
    expect(await sides.nth(1).locator('h3').textContent()).toBe('Replay (scratch)');
    expect(await sides.nth(1).locator('.side-answer').textContent()).toBe('Terse: saved.');
    expect(await sides.nth(1).textContent()).toContain('openai:other-model');
    expect(await sides.nth(1).textContent()).toMatch(/Conversationreplay:/);
    expect(await page.textContent('#replay-status')).toBe(
      'Replayed: the system prompt of librarian edited, the model other-model.',
    );
    // The original conversation is as it was: one more conversation, the replay's, and no more messages.
    const after = (await (await fetch(`${hubUrl}/console/api/conversations`)).json()) as {
      conversations: Array<{ id: string; kind: string }>;
    };
    const added = after.conversations.filter((c) => !(before as typeof after).conversations.some((b) => b.id === c.id));
    expect(added.map((c) => c.kind)).toEqual(['replay']);
    expect([await seriousViolations(page)]).toEqual([[]]);
    // The replay's own waterfall opens from its side.
    await sides.nth(1).locator('a', { hasText: 'open its waterfall' }).click();
    await page.locator('#turns details.turn[open] table.waterfall').waitFor();
    expect(await page.textContent('#turns details.turn[open] summary')).toContain('(a replay)');
  }, 90_000);

  it('renders a hostile answer safely: no markup runs, links are http(s) only, huge and deep JSON folded, long text kept inside its card', async () => {
    await showView(page, 'chat');
    await page.click('#new-conversation');
    model.push(
      {
        toolCalls: [
          {
            name: 'save_knowledge',
            arguments: { kind: 'fact', content: '<script>window.__pwned = 5</script><img src=x onerror=alert(1)>' },
          },
        ],
      },
      { text: hostileAnswer() },
    );
    await page.selectOption('#chat-agent', 'librarian');
    await say('show me something dangerous');
    await page.selectOption('#chat-agent', '');
    const answer = page.locator(ANSWER);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('#chat-log script, #chat-log img, #chat-log b').count()).toBe(0);
    expect(await answer.locator('h4').textContent()).toBe('Report <script>window.__pwned = 1</script>');
    expect(await answer.locator('strong').first().textContent()).toBe('bold');
    const links = await answer
      .locator('a')
      .evaluateAll((as) => as.map((a) => `${a.textContent}|${a.getAttribute('href')}|${a.getAttribute('rel')}`));
    expect(links).toEqual(['docs|https://example.com/a?b=c|noopener noreferrer nofollow']);
    expect(await answer.textContent()).toContain('click me');
    expect(await answer.locator('table th').allTextContents()).toEqual(['name', 'value']);
    expect(await answer.locator('pre.code code').textContent()).toBe('<script>window.__pwned = 4</script>');
    const views = answer.locator('.json-view');
    expect(await views.count()).toBe(2);
    expect(await views.nth(0).locator('.note').textContent()).toBe('Only the first 3000 values are drawn.');
    expect(await views.nth(1).textContent()).toContain('nested deeper than 40 levels: not drawn');
    // Folded: a closed branch opens on a click.
    const closed = (await views.nth(0).locator('details:not([open])').first().elementHandle())!;
    await (await closed.$(':scope > summary'))!.click();
    expect(await closed.getAttribute('open')).toBe('');
    // Long content wraps or scrolls inside its card: the chat log never scrolls sideways, the answer scrolls itself.
    const fit = await page.evaluate<{ log: boolean; scrolls: boolean }>(`(() => {
      const log = document.getElementById('chat-log');
      const rendered = document.querySelector('#chat-log .exchange:last-child .answer .rendered');
      return { log: log.scrollWidth <= log.clientWidth + 1, scrolls: rendered.scrollHeight > rendered.clientHeight };
    })()`);
    expect(fit).toEqual({ log: true, scrolls: true });
    // The tool's hostile result is text inside its card too, and so is the answer in the inspector.
    expect(await page.locator(`${LAST} li.card.tool`).textContent()).toContain('<script>window.__pwned = 5</script>');
    expect(await page.textContent(`${LAST} .bubble.agent .who`)).toBe('librarian');
    expect(await page.locator(`${LAST} li.card.transfer`).count()).toBe(0);
    await page.click(`${LAST} a.inspect`);
    await page.locator('#inspector-body .inspect-answer .json-view').first().waitFor();
    expect(await page.locator('#view-tasks script, #view-tasks img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect([await seriousViolations(page)]).toEqual([[]]);
  }, 90_000);

  it('chooses the agent to talk to, groups one-shot CLI chats apart, and renames, finds and deletes conversations', async () => {
    await showView(page, 'chat');
    await page.click('#new-conversation');
    // A remote agent the owner's grant offers: the turn goes straight to it.
    const options = await page
      .locator('#chat-agent option')
      .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    expect(options).toEqual(
      expect.arrayContaining(['', 'operator', 'librarian', 'planner', 'automator', 'vault', 'peer-node']),
    );
    await page.selectOption('#chat-agent', 'peer-node');
    await say('hello peer');
    await page.selectOption('#chat-agent', '');
    expect(await page.locator(`${LAST} li.card.remote`).count()).toBe(1);
    expect(await page.textContent(`${LAST} .bubble.agent .who`)).toBe('peer-node');

    model.push({ text: 'Hello from the hub.' });
    expect(await cliChat('hello from a one-shot CLI chat')).toBe(0);
    await page.fill('#conversation-search', '');
    await page.click('#new-conversation');
    const oneShot = page.locator('#conversation-groups [data-kind="one-shot"]');
    await waitFor(async () => (await oneShot.count()) === 1, 20_000, 'the one-shot group');
    await oneShot.locator('summary').click();
    expect(await oneShot.locator('a.conversation').allTextContents()).toEqual(['hello from a one-shot CLI chat']);
    const chats = page.locator('#conversation-groups [data-kind="chat"] a.conversation');
    expect(await chats.allTextContents()).not.toContain('hello from a one-shot CLI chat');

    // Rename the conversation that is open: the list and the chat's title take the name.
    await page.click('#conversation-groups [data-kind="chat"] a.conversation:has-text("hello peer")');
    await page.locator('#chat-log .said', { hasText: 'hello peer' }).waitFor();
    const item = page.locator('#conversation-groups li[data-context]', { hasText: 'hello peer' });
    await item.locator('button', { hasText: 'Rename' }).click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Talking to the peer');
    expect([await seriousViolations(page)]).toEqual([[]]);
    await page.keyboard.press('Enter');
    await page.locator('#conversation-groups a.conversation', { hasText: 'Talking to the peer' }).waitFor();
    expect(await page.textContent('#chat-title')).toBe('Talking to the peer');

    // Search: by the new name, by words, and nothing.
    await page.fill('#conversation-search', 'talking');
    await waitFor(
      async () => (await page.locator('#conversation-groups li[data-context]').count()) === 1,
      20_000,
      'one match',
    );
    await page.fill('#conversation-search', 'picnic');
    await waitFor(
      async () =>
        (await page.locator('#conversation-groups li[data-context]').allTextContents()).every((t) => /picnic/i.test(t)),
      20_000,
      'only the picnic conversations',
    );
    await page.fill('#conversation-search', 'no conversation says this');
    await page.locator('#conversation-groups li', { hasText: 'Nothing matches' }).waitFor();
    await page.fill('#conversation-search', '');

    // Delete the open conversation: asked once more, then gone, and the chat starts afresh.
    const renamed = page.locator('#conversation-groups li[data-context]', { hasText: 'Talking to the peer' });
    await renamed.locator('button', { hasText: 'Delete' }).click();
    await renamed.locator('button', { hasText: 'Delete for good' }).click();
    await waitFor(async () => (await renamed.count()) === 0, 20_000, 'the conversation to leave the list');
    expect(await page.textContent('#chat-title')).toBe('New conversation');
    expect(await page.locator('#chat-log .exchange').count()).toBe(0);
    expect([await seriousViolations(page)]).toEqual([[]]);
  }, 90_000);

  it('follows deep links at any time: on load, a hash changed later, and the back button', async () => {
    const { page: linked, errors: linkErrors } = await watchedPage(browser);
    try {
      const step = inspected.get('step');
      await linked.goto(
        `${hubUrl}/console#view=tasks&task=${inspected.get('task')}&turn=${inspected.get('turn')}&step=${step}`,
      );
      await linked.locator('#inspector-title', { hasText: 'model openai:scripted' }).waitFor();
      expect(await linked.locator(`#turns tr.span.selected`).getAttribute('data-step')).toBe(step);

      const { conversations } = (await (await fetch(`${hubUrl}/console/api/conversations?q=picnic`)).json()) as {
        conversations: Array<{ id: string; kind: string }>;
      };
      const picnic = conversations.find((c) => c.kind === 'chat')!;
      await linked.evaluate(`location.hash = '#view=chat&conversation=${picnic.id}&caller=owner'`);
      await linked.locator('#chat-log .said', { hasText: 'remember the picnic is on Saturday' }).waitFor();
      expect(await linked.isHidden('#view-tasks')).toBe(true);

      await linked.evaluate(`location.hash = '#view=agents&agent=peer-node'`);
      await linked.waitForSelector('#card:not([hidden])');
      expect(await linked.textContent('#card-title')).toBe('Card of peer-node');

      await linked.evaluate(`location.hash = '#view=tools&tool=save_knowledge'`);
      await linked.waitForSelector('#arg-content');
      expect(await linked.inputValue('#tool-select')).toBe('save_knowledge');

      await linked.goBack();
      await linked.waitForSelector('#view-agents:not([hidden])');
      await linked.goBack();
      await linked.waitForSelector('#view-chat:not([hidden])');
      // The old form of a link still opens its view.
      await linked.evaluate(`location.hash = '#memory'`);
      await linked.waitForSelector('#view-memory:not([hidden])');
      expect(await linked.getAttribute('#tab-memory', 'aria-selected')).toBe('true');
      expect(linkErrors).toEqual([]);
    } finally {
      await linked.close();
    }
  }, 90_000);
});
