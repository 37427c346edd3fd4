import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import type { TaskSummary } from '../../src/observe/consoleTasks';
import type { TaskTimeline } from '../../src/observe/timeline';
import { deadPort } from '../support/federationPeers';
import {
  callTool,
  say,
  scriptedAgent,
  startOpenAIServer,
  transferTo,
  type OpenAIServer,
  type ScriptedCompletion,
} from '../support/openaiServer';

const OWNER_TOKEN = 'owner-api-token-0123';
const GUEST_TOKEN = 'guest-api-token-4567';

/**
 * The console's JSON API on a real node (createApp on 127.0.0.1, a real
 * SQLite file, its model a scripted OpenAI-compatible server): timelines kept across a restart, the tool runner and the
 * probe as owner-only changes from the console's own origin, conversations,
 * memory and knowledge read per caller, and every route refused to a caller
 * that is not the owner.
 */
describe('the console API', () => {
  let app: LangoApp | undefined;
  let dir: string;
  /** The scripted model servers of this test's nodes (a restarted node gets one of its own). */
  const models: OpenAIServer[] = [];
  afterEach(async () => {
    await app?.close();
    app = undefined;
    for (const model of models.splice(0)) {
      expect(model.unexpected).toEqual([]);
      await model.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A whole node whose model is a scripted OpenAI-compatible server playing `answers`. */
  async function node(input: LangoConfigInput, answers: ScriptedCompletion[] = [], keepDir = false): Promise<string> {
    if (!keepDir) dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-console-api-'));
    const model = await startOpenAIServer(answers);
    models.push(model);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      agent: scriptedAgent(model),
      ...input,
    });
    app = await createApp(config, { logger: createMemoryLogger(), cwd: dir });
    return app.listen();
  }

  const send = async (url: string, text: string, headers: Record<string, string> = {}) => {
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } },
      }),
    });
    return ((await reply.json()) as { result: { task: { id: string; contextId: string } } }).result.task;
  };
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it("keeps each task's timeline across a restart: the console lists it with what was asked and shows its steps", async () => {
    let url = await node({}, [
      transferTo('librarian'),
      callTool('save_knowledge', { kind: 'fact', content: 'x' }),
      say('Saved.'),
    ]);
    const task = await send(url, 'remember x');
    await app!.close();
    app = undefined;

    url = await node({}, [], true);
    const timeline = await fetch(`${url}/console/api/timelines/${task.id}`);
    expect(timeline.status).toBe(200);
    const { turns } = (await timeline.json()) as { turns: TaskTimeline[] };
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ taskId: task.id, asked: 'remember x', status: 'completed', agent: 'librarian' });
    expect(turns[0].steps.map((s) => `${s.kind} ${s.name}`)).toEqual(
      expect.arrayContaining(['transfer librarian', 'tool save_knowledge']),
    );
    const { tasks } = (await (await fetch(`${url}/console/api/tasks`)).json()) as { tasks: TaskSummary[] };
    expect(tasks).toEqual([
      expect.objectContaining({ taskId: task.id, asked: 'remember x', agent: 'librarian', timeline: true }),
    ]);
    expect(tasks[0].ms).toEqual(expect.any(Number));
  });

  it('runs a tool as the owner through the runner: parsed by its schema, observed in a timeline, errors named', async () => {
    const url = await node({});
    const { tools } = (await (await fetch(`${url}/console/api/tools`)).json()) as {
      tools: Array<{ name: string; agent: string; schema: { required?: string[]; properties: object } }>;
    };
    const save = tools.find((t) => t.name === 'save_knowledge')!;
    expect(save.agent).toBe('librarian');
    expect(save.schema.required).toEqual(expect.arrayContaining(['kind', 'content']));

    const run = await post(`${url}/console/api/tools/save_knowledge/run`, {
      arguments: { kind: 'rule', content: 'Deploy on Tuesdays' },
    });
    expect(run.status).toBe(200);
    const result = (await run.json()) as { status: string; agent: string; text: string };
    expect(result).toMatchObject({ status: 'completed', agent: 'librarian' });
    expect(JSON.parse(result.text)).toMatchObject({ saved: { owner: 'owner', content: 'Deploy on Tuesdays' } });
    const knowledge = (await (await fetch(`${url}/console/api/knowledge`)).json()) as {
      knowledge: Array<{ content: string }>;
    };
    expect(knowledge.knowledge.map((k) => k.content)).toEqual(['Deploy on Tuesdays']);

    // The tool's schema speaks for it: a bad argument is the tool's failure, named as a model would see it.
    const bad = (await (
      await post(`${url}/console/api/tools/save_knowledge/run`, { arguments: { kind: 'opinion', content: 'x' } })
    ).json()) as { status: string; text: string };
    expect(bad.status).toBe('failed');
    expect(bad.text).toMatch(/^tool save_knowledge failed: invalid arguments: kind: /);
    const unknown = await post(`${url}/console/api/tools/no_such_tool/run`, { arguments: {} });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { text: string }).text).toBe('no tool named no_such_tool on this node');
    const malformed = await post(`${url}/console/api/tools/save_knowledge/run`, { arguments: [], extra: 1 });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toMatch(/^arguments: /);

    // Each run is a turn of its own in the timelines, as the owner's.
    const { timelines } = (await (await fetch(`${url}/console/api/timelines`)).json()) as { timelines: TaskTimeline[] };
    expect(timelines[0]).toMatchObject({ caller: 'owner', sessionId: 'console:tools' });
    expect(timelines.some((t) => t.steps.some((s) => s.kind === 'tool' && s.name === 'save_knowledge'))).toBe(true);
  });

  it('refuses a change from another site or not sent as JSON, and a probe of an unknown agent', async () => {
    const url = await node(
      {
        a2a: {
          cardFetchTimeoutMs: 10_000,
          remoteAgents: [{ name: 'ghost', baseUrl: `http://127.0.0.1:${await deadPort()}` }],
        },
      },
      [],
    );
    const crossSite = await post(
      `${url}/console/api/tools/save_knowledge/run`,
      { arguments: {} },
      { origin: 'http://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    const form = await fetch(`${url}/console/api/peers/ghost/probe`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(form.status).toBe(415);
    expect((await post(`${url}/console/api/peers/nobody/probe`, {})).status).toBe(404);

    const probed = await post(`${url}/console/api/peers/ghost/probe`, {});
    expect(probed.status).toBe(200);
    const { peer } = (await probed.json()) as {
      peer: { state: string; lastProbe?: { at: string; ok: boolean }; lastError?: string };
    };
    expect(peer).toMatchObject({ state: 'skipped', lastProbe: { at: expect.any(String), ok: false } });
    expect(peer.lastError).toMatch(/ECONNREFUSED/);
    expect(await (await fetch(`${url}/console/api/replicas`)).json()).toEqual({ clustered: false, replicas: [] });
  });

  it("lists conversations by their first words and reads each caller's own, with a pending approval", async () => {
    const url = await node(
      {
        a2a: {
          auth: { bearerTokens: [GUEST_TOKEN], callers: [{ name: 'admin', owner: true, bearerTokens: [OWNER_TOKEN] }] },
        },
        tools: { browser: { enabled: false }, exec: { sandbox: 'off' } },
      },
      [transferTo('operator'), callTool('exec_shell', { command: 'echo hi' }), say('Hello guest.')],
    );
    const owner = { authorization: `Bearer ${OWNER_TOKEN}` };
    const asked = await send(url, 'please run echo hi', owner);
    await send(url, 'hello from a guest', { authorization: `Bearer ${GUEST_TOKEN}` });
    const { conversations } = (await (await fetch(`${url}/console/api/conversations`, { headers: owner })).json()) as {
      conversations: Array<{ id: string; caller: string; firstWords?: string }>;
    };
    expect(conversations.map((c) => c.firstWords).sort()).toEqual(['hello from a guest', 'please run echo hi']);
    const guest = conversations.find((c) => c.caller !== 'owner')!;

    const mine = (await (
      await fetch(`${url}/console/api/conversations/${asked.contextId}`, { headers: owner })
    ).json()) as {
      messages: Array<{ role: string; text: string }>;
      pendingApproval?: { tool: string; question: string };
    };
    expect(mine.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(mine.pendingApproval).toMatchObject({ tool: 'exec_shell', question: expect.stringContaining('echo hi') });
    // The guest's conversation is read as the guest: asked as the owner, it is not the owner's.
    expect((await fetch(`${url}/console/api/conversations/${guest.id}`, { headers: owner })).status).toBe(404);
    const theirs = await fetch(
      `${url}/console/api/conversations/${guest.id}?caller=${encodeURIComponent(guest.caller)}`,
      { headers: owner },
    );
    expect(((await theirs.json()) as { messages: Array<{ text: string }> }).messages[0].text).toBe(
      'hello from a guest',
    );
    const callers = (await (await fetch(`${url}/console/api/callers`, { headers: owner })).json()) as {
      callers: string[];
    };
    expect(callers.callers).toEqual(['owner', guest.caller]);
    const memory = await fetch(`${url}/console/api/memory?caller=${encodeURIComponent(guest.caller)}`, {
      headers: owner,
    });
    expect(await memory.json()).toMatchObject({ caller: guest.caller, observations: [], reflections: [] });

    // Every console route is the owner's: the guest's own token is refused, and so is no token.
    const routes = [
      '/console/api/conversations',
      `/console/api/conversations/${guest.id}`,
      '/console/api/callers',
      '/console/api/memory',
      '/console/api/knowledge',
      '/console/api/tools',
      '/console/api/peers',
      '/console/api/replicas',
      '/console/api/tasks',
      '/console/api/timelines',
    ];
    for (const route of routes) {
      expect([route, (await fetch(`${url}${route}`)).status]).toEqual([route, 401]);
      const asGuest = await fetch(`${url}${route}`, { headers: { authorization: `Bearer ${GUEST_TOKEN}` } });
      expect([route, asGuest.status]).toEqual([route, 403]);
    }
    const guestRun = await post(
      `${url}/console/api/tools/save_knowledge/run`,
      { arguments: { kind: 'fact', content: 'x' } },
      { authorization: `Bearer ${GUEST_TOKEN}` },
    );
    expect(guestRun.status).toBe(403);
  });
});
