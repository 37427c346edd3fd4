import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import type { TaskSummary } from '../../src/observe/consoleTasks';
import {
  say,
  scriptedAgent,
  startOpenAIServer,
  type OpenAIServer,
  type ScriptedCompletion,
} from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

const OWNER_TOKEN = 'owner-console-token-0123';
const GUEST_TOKEN = 'guest-console-token-4567';

/**
 * The console's HTTP surface on a real node (createApp on 127.0.0.1, its
 * model a scripted OpenAI-compatible server): the
 * shell, its assets and API for the loopback owner, and with `a2a.auth` the
 * sign-in by owner token, its session cookie, and the clear HTML refusals
 * (wrong token, a caller that is not the owner, an expired session).
 * Needs `npm run build` (the script and styles are served from dist/console).
 */
describe('the console over HTTP', () => {
  let app: LangoApp | undefined;
  let model: OpenAIServer | undefined;
  let dir: string;
  let now = Date.parse('2026-11-25T20:00:00Z');
  afterEach(async () => {
    await app?.close();
    app = undefined;
    expect(model?.unexpected).toEqual([]);
    await model?.close();
    model = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A whole node whose model is a scripted OpenAI-compatible server playing `answers`. */
  async function node(input: LangoConfigInput, answers: ScriptedCompletion[] = [say('Hello there.')]): Promise<string> {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-console-'));
    model = await startOpenAIServer(answers);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      agent: scriptedAgent(model),
      ...input,
    });
    app = await createApp(config, { logger: createMemoryLogger(), clock: () => new Date(now) });
    return app.listen();
  }

  const authed: LangoConfigInput = {
    a2a: {
      auth: { bearerTokens: [GUEST_TOKEN], callers: [{ name: 'admin', owner: true, bearerTokens: [OWNER_TOKEN] }] },
    },
  };

  const signIn = (url: string, token: string) =>
    fetch(`${url}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
      redirect: 'manual',
    });

  it('serves the loopback owner the shell, its script and styles, the agents and a live stream of task changes', async () => {
    const url = await node({});
    const shell = await fetch(`${url}/console`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await shell.text();
    expect(html).toContain('<script type="module" src="/console/assets/console.js">');
    expect(html).not.toMatch(/<script>|style=/);
    expect((await fetch(`${url}/console/assets/console.js`)).headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${url}/console/assets/console.css`)).status).toBe(200);
    // Only what the build wrote is served: a name that is an object's own property is no asset either, and a
    // path that escapes its segment is no route at all.
    for (const name of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty']) {
      const asset = await fetch(`${url}/console/assets/${name}`);
      expect([name, asset.status]).toEqual([name, 404]);
      expect(((await asset.json()) as { error: { message: string } }).error.message).toBe('no such console asset');
    }
    const escaping = await fetch(`${url}/console/assets/..%2Fconsole.ts`);
    expect(escaping.status).toBe(404);
    expect(((await escaping.json()) as { error: { message: string } }).error.message).toMatch(/^no route for GET/);
    expect((await fetch(`${url}/console/assets/elk.js`)).headers.get('content-type')).toMatch(/javascript/);

    const graph = (await (await fetch(`${url}/console/api/agents`)).json()) as { agents: Array<{ name: string }> };
    expect(graph.agents.map((a) => a.name)).toEqual(
      expect.arrayContaining(['operator', 'vault', 'librarian', 'automator', 'planner', 'chronicler']),
    );
    const svg = await fetch(`${url}/console/api/agents.svg`);
    expect(svg.headers.get('content-type')).toMatch(/image\/svg\+xml/);
    expect(await svg.text()).toContain('data-agent="librarian"');
    expect((await fetch(`${url}/console/api/agents/nobody/card`)).status).toBe(404);

    const stream = new AbortController();
    const events = await fetch(`${url}/console/api/events`, { signal: stream.signal });
    expect(events.headers.get('content-type')).toMatch(/text\/event-stream/);
    let received = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of events.body as unknown as AsyncIterable<Uint8Array>) received += decoder.decode(chunk);
    })().catch(() => {});
    await waitFor(() => received.includes('event: ready'), 20_000, 'the stream to open');
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'c-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
      }),
    });
    const taskId = ((await reply.json()) as { result: { task: { id: string } } }).result.task.id;
    await waitFor(() => received.includes(`"what":"end","taskId":"${taskId}"`), 20_000, 'the end of the turn streamed');
    expect(received).toContain(`"what":"turn","taskId":"${taskId}"`);
    stream.abort();
    await reading;

    const { tasks } = (await (await fetch(`${url}/console/api/tasks?state=completed&caller=owner`)).json()) as {
      tasks: TaskSummary[];
    };
    expect(tasks).toEqual([expect.objectContaining({ taskId, state: 'completed', caller: 'owner', timeline: true })]);
    const none = (await (await fetch(`${url}/console/api/tasks?state=failed`)).json()) as { tasks: TaskSummary[] };
    expect(none.tasks).toEqual([]);
  });

  it("lists every caller's stored tasks with what was asked and their stored timelines, filtered by state and exact caller", async () => {
    const url = await node(authed, [say('First answer.'), say('Second answer.')]);
    const send = async (token: string, text: string) => {
      const reply = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } },
        }),
      });
      return ((await reply.json()) as { result: { task: { id: string } } }).result.task.id;
    };
    const list = async (query: string) => {
      const res = await fetch(`${url}/console/api/tasks${query}`, {
        headers: { authorization: `Bearer ${OWNER_TOKEN}` },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { tasks: TaskSummary[] }).tasks;
    };
    const first = await send(OWNER_TOKEN, 'first');
    now += 1000;
    const second = await send(GUEST_TOKEN, 'second');

    const all = await list('');
    expect(all.map((t) => t.taskId)).toEqual([second, first]);
    expect(all[1]).toEqual(
      expect.objectContaining({ taskId: first, caller: 'owner', state: 'completed', timeline: true, asked: 'first' }),
    );
    const guest = all[0].caller;
    expect(guest).toMatch(/^bearer:/);
    expect(all[0]).toEqual(expect.objectContaining({ state: 'completed', timeline: true, agent: expect.any(String) }));

    expect((await list('?caller=owner')).map((t) => t.taskId)).toEqual([first]);
    expect((await list(`?caller=${encodeURIComponent(guest)}&state=completed`)).map((t) => t.taskId)).toEqual([second]);
    expect(await list('?caller=own')).toEqual([]);
    expect(await list('?state=failed')).toEqual([]);
    const unknown = await fetch(`${url}/console/api/tasks?state=done`, {
      headers: { authorization: `Bearer ${OWNER_TOKEN}` },
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('state: no task state');
  });

  it('asks for the owner token, refuses a wrong one and a non-owner with clear HTML pages, and admits the owner by cookie', async () => {
    const url = await node(authed);
    const first = await fetch(`${url}/console`);
    expect(first.status).toBe(401);
    expect(first.headers.get('content-type')).toMatch(/text\/html/);
    expect(await first.text()).toContain('<form method="post" action="/console/login"');
    expect((await fetch(`${url}/console/api/tasks`)).status).toBe(401);

    const wrong = await signIn(url, 'not-a-token');
    expect(wrong.status).toBe(401);
    const wrongPage = await wrong.text();
    expect(wrongPage).toContain('that token is not one this node accepts');
    expect(wrongPage).not.toMatch(/ at .*\.(js|ts):\d+/);
    const guest = await signIn(url, GUEST_TOKEN);
    expect(guest.status).toBe(403);
    expect(await guest.text()).toContain('only the node owner may look');
    expect(guest.headers.get('set-cookie')).toBeNull();

    const owner = await signIn(url, OWNER_TOKEN);
    expect(owner.status).toBe(303);
    const cookie = owner.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^lango_console=[\w-]{40,}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    expect(cookie).not.toContain(OWNER_TOKEN);
    const session = cookie.split(';')[0];
    const shell = await fetch(`${url}/console`, { headers: { cookie: session } });
    expect(shell.status).toBe(200);
    expect(await shell.text()).toContain('data-auth="true"');
    expect((await fetch(`${url}/console/api/tasks`, { headers: { cookie: session } })).status).toBe(200);
    expect((await fetch(`${url}/console/api/timelines`, { headers: { cookie: session } })).status).toBe(200);
    // A bearer header speaks for the owner too (scripts), and the cookie reaches nothing outside /console.
    expect(
      (await fetch(`${url}/console/api/tasks`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } })).status,
    ).toBe(200);
    expect((await fetch(`${url}/tasks`, { headers: { cookie: session, 'A2A-Version': '1.0' } })).status).toBe(401);

    const crossSite = await fetch(`${url}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://evil.example' },
      body: `token=${OWNER_TOKEN}`,
      redirect: 'manual',
    });
    expect(crossSite.status).toBe(403);

    const second = (await signIn(url, OWNER_TOKEN)).headers.get('set-cookie')!.split(';')[0];
    const signOut = await fetch(`${url}/console/logout`, {
      method: 'POST',
      headers: { cookie: second },
      redirect: 'manual',
    });
    expect(signOut.status).toBe(303);
    expect(signOut.headers.get('set-cookie')).toMatch(/^lango_console=; .*Max-Age=0$/);
    expect((await fetch(`${url}/console/api/tasks`, { headers: { cookie: second } })).status).toBe(401);
    expect((await fetch(`${url}/console/api/events`, { headers: { cookie: second } })).status).toBe(401);

    now += 9 * 3600_000;
    const expired = await fetch(`${url}/console`, { headers: { cookie: session } });
    expect(expired.status).toBe(401);
    expect(await expired.text()).toContain('your console session expired or is unknown: sign in again');
  });
});
