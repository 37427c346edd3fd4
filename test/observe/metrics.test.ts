import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { scriptedAgent, startOpenAIServer, type OpenAIServer, type ScriptedCompletion } from '../support/openaiServer';
import { parseScrape } from '../support/prometheus';

/**
 * Real nodes on loopback (createApp; a model call's node plays its model with a scripted OpenAI-compatible
 * server), scraped over HTTP and parsed by a Prometheus text-format parser.
 */
describe('GET /metrics', () => {
  const apps: LangoApp[] = [];
  const dirs: string[] = [];
  const models: OpenAIServer[] = [];
  afterEach(async () => {
    while (apps.length) await apps.pop()!.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
    while (models.length) await models.pop()!.close();
  });

  /** A node; with `answers`, its model is a scripted OpenAI-compatible server playing them. */
  async function node(input: LangoConfigInput, answers?: ScriptedCompletion[]): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-metrics-'));
    dirs.push(dir);
    const model = answers ? await startOpenAIServer(answers) : undefined;
    if (model) models.push(model);
    const config = resolveConfig({
      dataDir: dir,
      tools: { browser: { enabled: false } },
      ...input,
      ...(model ? { agent: { ...scriptedAgent(model), ...input.agent } } : {}),
      server: { port: 0, ...input.server },
    });
    const app = await createApp(config, { logger: createMemoryLogger() });
    apps.push(app);
    const url = await app.listen();
    return url.replace('0.0.0.0', '127.0.0.1');
  }

  const send = (url: string, text: string, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: text,
        method: 'SendMessage',
        params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } },
      }),
    });

  it('counts requests by method and status, tasks by state, turns, model calls and tokens, and the counters move', async () => {
    const answer = { text: 'Hello.', usage: { prompt_tokens: 10, completion_tokens: 4 } };
    const url = await node({ agent: { multiAgent: false } }, [answer, answer, answer]);
    expect((await send(url, 'one')).status).toBe(200);
    expect((await send(url, 'two')).status).toBe(200);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const first = await fetch(`${url}/metrics`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/plain');
    const before = parseScrape(await first.text());
    expect(before.family('lango_a2a_requests_total').type).toBe('COUNTER');
    expect(before.value('lango_a2a_requests_total', { method: 'SendMessage', status: '200' })).toBe(2);
    expect(before.value('lango_a2a_requests_total', { method: 'healthz', status: '200' })).toBe(1);
    expect(before.value('lango_a2a_tasks', { state: 'TASK_STATE_COMPLETED' })).toBe(2);
    expect(before.count('lango_turn_duration_seconds', { status: 'completed' })).toBe(2);
    expect(before.count('lango_model_call_duration_seconds', { model: 'openai:scripted', outcome: 'ok' })).toBe(2);
    expect(before.value('lango_model_tokens_total', { model: 'openai:scripted', direction: 'input' })).toBe(20);
    expect(before.value('lango_model_tokens_total', { model: 'openai:scripted', direction: 'output' })).toBe(8);
    expect(before.count('lango_store_write_duration_seconds')).toBeGreaterThan(0);
    expect(before.family('lango_nodejs_eventloop_lag_seconds').type).toBe('GAUGE');

    await send(url, 'three');
    const after = parseScrape(await (await fetch(`${url}/metrics`)).text());
    expect(after.value('lango_a2a_requests_total', { method: 'SendMessage', status: '200' })).toBe(3);
    expect(after.value('lango_a2a_requests_total', { method: 'metrics', status: '200' })).toBe(1);
    expect(after.value('lango_model_tokens_total', { model: 'openai:scripted', direction: 'input' })).toBe(30);
    expect(after.value('lango_a2a_tasks', { state: 'TASK_STATE_COMPLETED' })).toBe(3);
  });

  it('with a2a.auth: refuses no credential (401) and a caller (403), serves the metrics token', async () => {
    const url = await node({
      a2a: { auth: { bearerTokens: ['caller-token-1'] } },
      observability: { metricsToken: 'scrape-token-1' },
    });
    const none = await fetch(`${url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    const caller = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer caller-token-1' } });
    expect(caller.status).toBe(403);
    const scraper = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer scrape-token-1' } });
    expect(scraper.status).toBe(200);
    expect(parseScrape(await scraper.text()).family('lango_a2a_requests_total').type).toBe('COUNTER');
  });

  it('on a non-loopback bind without auth: refused without the metrics token, served with it', async () => {
    const url = await node({
      server: { host: '0.0.0.0' },
      a2a: { allowUnauthenticated: true },
      observability: { metricsToken: 'scrape-token-2' },
    });
    const anonymous = await fetch(`${url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain('lango_');
    const scraper = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer scrape-token-2' } });
    expect(scraper.status).toBe(200);
  });

  it('is not served when observability.metrics is off', async () => {
    const url = await node({ observability: { metrics: false } });
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
  });
});
