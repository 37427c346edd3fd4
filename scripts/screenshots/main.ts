/**
 * Regenerates the console's screenshots (docs/console-*.png, the README's
 * hero among them) from a real session: real lango nodes (`createApp`, a
 * SQLite file each, the node's own offline model unless
 * `LANGO_SCREENSHOT_MODEL_URL` names an OpenAI-compatible endpoint), a second
 * lango node federated as a remote agent, the real `lango` CLI for a one-shot
 * chat, and Debian's Chromium typing into the console what a person types.
 * Nothing on the pictures is scripted but the words typed: every answer,
 * card, step and prompt is what the node did. With PostgreSQL server
 * binaries on the machine, two replicas of one node on a throwaway database
 * give the cluster's pictures too.
 *
 * Run: `npm run screenshots` (builds first). `LANGO_SCREENSHOT_MODEL_URL`,
 * `LANGO_SCREENSHOT_MODEL` and `LANGO_SCREENSHOT_API_KEY` choose a real model.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { LangoApp } from '../../src/app';
import type { LangoConfigInput } from '../../src/config/schema';
import { launchChromium, openConsole, showView, watchedPage } from '../../test/support/consolePage';
import { postgresUnavailable, startTestPostgres } from '../../test/support/postgres';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..', '..');
const DOCS = path.join(ROOT, 'docs');
/** The built node (dist/, as `npm start` runs it, its console served from dist/console). */
async function builtNode() {
  const load = async <T>(file: string) => (await import(path.join(ROOT, 'dist', file))) as T;
  const [{ createApp }, { resolveConfig }, { createMemoryLogger }] = await Promise.all([
    load<typeof import('../../src/app')>('app.js'),
    load<typeof import('../../src/config/load')>('config/load.js'),
    load<typeof import('../../src/log/logger')>('log/logger.js'),
  ]);
  return { createApp, resolveConfig, createMemoryLogger };
}
let node: Awaited<ReturnType<typeof builtNode>>;

/** The longest a typed message's answer is waited for. */
const ANSWER_MS = 60_000;

/** The model the hub runs on: a real endpoint when the environment names one, else the node's offline model. */
function modelConfig(): LangoConfigInput['agent'] {
  const baseUrl = process.env.LANGO_SCREENSHOT_MODEL_URL;
  if (!baseUrl) return {};
  return {
    provider: 'openai',
    baseUrl,
    model: process.env.LANGO_SCREENSHOT_MODEL ?? 'gpt-4o-mini',
    apiKey: process.env.LANGO_SCREENSHOT_API_KEY ?? 'none',
  };
}

/** A node on 127.0.0.1 in a folder of its own. */
async function startNode(
  name: string,
  input: LangoConfigInput,
  dirs: string[],
): Promise<{ app: LangoApp; url: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-shot-${name}-`));
  dirs.push(dir);
  const config = node.resolveConfig({
    server: { port: 0, host: '127.0.0.1' },
    dataDir: dir,
    ...input,
    a2a: { agentName: name, ...input.a2a },
  });
  const app = await node.createApp(config, { logger: node.createMemoryLogger(), cwd: dir });
  return { app, url: await app.listen() };
}

/** Types a message into the chat and waits for its turn to settle (in `state`). */
async function say(page: Page, text: string, state = 'completed'): Promise<void> {
  await page.fill('#chat-input', text);
  await page.press('#chat-input', 'Enter');
  await page.waitForSelector(`#chat-log .exchange:last-child .answer[data-state="${state}"]`, {
    timeout: ANSWER_MS,
    state: 'attached',
  });
  await page.waitForSelector('#chat-send:not([disabled])', { timeout: ANSWER_MS });
}

/** `lango --url <hub> chat "<message>"`: the real CLI's one-shot chat. */
function cliChat(url: string, message: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cli = spawn(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), '--url', url, 'chat', message], {
      stdio: 'ignore',
      cwd: os.tmpdir(),
    });
    const timer = setTimeout(() => cli.kill(), ANSWER_MS);
    cli.on('error', reject);
    cli.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`lango chat exited ${code}`));
    });
  });
}

async function shot(page: Page, file: string, selector?: string): Promise<void> {
  const to = path.join(DOCS, file);
  if (selector) await page.locator(selector).screenshot({ path: to });
  else await page.screenshot({ path: to });
  process.stdout.write(`wrote ${path.relative(ROOT, to)}\n`);
}

/** The single node's session: chat, approval, a remote agent, tasks, waterfall, inspector, replay, graph, tools, memory. */
async function nodeSession(page: Page, hub: string): Promise<void> {
  await say(page, 'save_knowledge kind=fact content="The team picnic is on Saturday at the lake"');
  await say(page, 'search_knowledge query=picnic');
  await page.locator('#chat-log .exchange:last-child li.card.tool details.result').waitFor();
  await shot(page, 'console-chat.png');

  await page.click('#new-conversation');
  await say(page, 'exec_shell echo "packing list ready"', 'input-required');
  await page.locator('#chat-log li.card.approval').waitFor();
  await shot(page, 'console-approval.png');
  await page.click('#chat-log li.card.approval button.approve');
  await page.waitForSelector('#chat-log .exchange:last-child .answer[data-state="completed"]', { timeout: ANSWER_MS });

  await page.click('#new-conversation');
  await page.selectOption('#chat-agent', 'garden');
  await say(page, 'what can you do?');
  await page.selectOption('#chat-agent', '');
  await cliChat(hub, 'hello');
  await cliChat(hub, 'search_knowledge query=lake');

  await showView(page, 'tasks');
  const task = page.locator('#task-rows tr', { hasText: 'save_knowledge' }).first();
  await task.locator('a.open-task').click();
  await page.waitForSelector('#turns details.turn[open] table.waterfall');
  await page.locator('#turns tr.span.model a.step-link').last().click();
  await page.locator('#inspector-body details.inspect-part').first().waitFor();
  await shot(page, 'console-tasks.png');

  await page.locator('#turns a[data-replay]').first().click();
  await page.locator('#replay-form').waitFor();
  await page.fill('#replay-message', 'search_knowledge query=lake');
  await page.click('#replay-run');
  await page.locator('#replay-result .compare').waitFor({ timeout: ANSWER_MS });
  await page.locator('#replay').scrollIntoViewIfNeeded();
  await shot(page, 'console-replay.png', '#replay');

  await showView(page, 'agents');
  await page.waitForSelector('#graph g.agent[data-agent="garden"]');
  await shot(page, 'console-graph.png', '#agents');
  await page.locator('#peer-rows tr[data-peer="garden"]').waitFor();
  await shot(page, 'console-peers.png', '#peers');

  await showView(page, 'tools');
  await page.waitForSelector('#tool-select option[value="save_knowledge"]', { state: 'attached' });
  await page.selectOption('#tool-select', 'save_knowledge');
  await page.selectOption('#arg-kind', 'preference');
  await page.fill('#arg-content', 'Bring sunscreen to every picnic');
  await page.fill('#arg-tags', 'picnic');
  await page.click('#tool-run');
  await page.waitForSelector('#tool-result[data-status="completed"]');
  await shot(page, 'console-tools.png');

  await showView(page, 'memory');
  await page.locator('#knowledge-list li', { hasText: 'sunscreen' }).waitFor();
  await shot(page, 'console-memory.png');

  await showView(page, 'chat');
  await page.locator('#conversation-groups [data-kind="one-shot"] summary').click();
  await page.locator('#conversation-groups [data-kind="one-shot"] a.conversation').first().waitFor();
  await shot(page, 'console-conversations.png', '#view-chat aside');
}

/** Two replicas of one node on a throwaway PostgreSQL: a turn run on one, seen from the other's console. */
async function clusterSession(pageOf: () => Promise<Page>, dirs: string[]): Promise<void> {
  const unavailable = postgresUnavailable();
  if (unavailable) {
    process.stdout.write(`skipped the cluster's pictures: ${unavailable}\n`);
    return;
  }
  const pg = await startTestPostgres();
  const apps: LangoApp[] = [];
  try {
    const url = await pg.createDatabase();
    const replica = async (id: string) => {
      const node = await startNode(
        'hub',
        {
          agent: modelConfig(),
          storage: { url },
          cluster: { replicaId: id, heartbeatInterval: '1s', lease: '5s' },
          security: { masterKey: 'c'.repeat(64) },
          tools: { browser: { enabled: false } },
        },
        dirs,
      );
      apps.push(node.app);
      return node.url;
    };
    const a = await replica('replica-a');
    const b = await replica('replica-b');
    const page = await pageOf();
    await openConsole(page, [], a);
    await say(page, 'save_knowledge kind=fact content="Replicas share one PostgreSQL database"');
    await openConsole(page, [], b);
    await showView(page, 'tasks');
    const row = page.locator('#task-rows tr', { hasText: 'Replicas share' }).first();
    await row.locator('a.open-task').click();
    await page.waitForSelector('#turns details.turn[open] table.waterfall');
    await shot(page, 'console-cluster-tasks.png');
    await showView(page, 'agents');
    await page.locator('#replica-rows tr[data-replica="replica-a"]').waitFor();
    await shot(page, 'console-replicas.png', '#replicas');
  } finally {
    for (const app of apps.reverse()) await app.close();
    await pg.stop();
  }
}

async function main(): Promise<void> {
  node = await builtNode();
  const dirs: string[] = [];
  const apps: LangoApp[] = [];
  const browser = await launchChromium();
  try {
    const peer = await startNode('garden', { tools: { browser: { enabled: false } } }, dirs);
    apps.push(peer.app);
    const hub = await startNode(
      'hub',
      {
        agent: modelConfig(),
        a2a: { remoteAgents: [{ name: 'garden', baseUrl: peer.url }] },
        tools: { exec: { sandbox: 'off' } },
      },
      dirs,
    );
    apps.push(hub.app);
    const { page, errors } = await watchedPage(browser);
    await openConsole(page, errors, hub.url);
    await nodeSession(page, hub.url);
    if (errors.length) throw new Error(`the console logged errors: ${errors.join('; ')}`);
    await clusterSession(async () => (await watchedPage(browser)).page, dirs);
  } finally {
    await browser.close();
    for (const app of apps.reverse()) await app.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
