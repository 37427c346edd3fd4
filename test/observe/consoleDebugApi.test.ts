import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import type { TaskSummary } from '../../src/observe/consoleTasks';
import type { WaterfallSpan } from '../../src/observe/waterfall';
import type { ModelExchange, TaskTimeline } from '../../src/store/timelines';
import {
  callTool,
  say,
  scriptedAgent,
  startOpenAIServer,
  transferTo,
  type ChatRequestBody,
  type OpenAIServer,
  type ScriptedCompletion,
} from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

const OWNER_TOKEN = 'owner-debug-token-0123';
const GUEST_TOKEN = 'guest-debug-token-4567';
/** A registered secret (the model's API key): masked wherever the console would show it. */
const SECRET = 'sk-debug-secret-0987';

/**
 * The console's debugging API on a real node (createApp on 127.0.0.1, a
 * real SQLite file, its model a scripted OpenAI-compatible server played
 * through the node's own client): a turn read with its
 * waterfall and model exchanges, replays in a scratch conversation,
 * conversations renamed, searched, deleted and grouped by kind, the agent a
 * chat starts at, and why a task ended badly. Every route is the owner's.
 */
describe('the console debugging API', () => {
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

  /** A whole node whose model is a scripted OpenAI-compatible server playing `answers` (its key the secret). */
  async function node(answers: ScriptedCompletion[], input: LangoConfigInput = {}, keepDir = false) {
    if (!keepDir) dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-console-debug-'));
    const model = await startOpenAIServer(answers);
    models.push(model);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      agent: { ...scriptedAgent(model), apiKey: SECRET },
      ...input,
    });
    app = await createApp(config, { logger: createMemoryLogger(), cwd: dir });
    return { url: await app.listen(), model };
  }

  const send = async (
    url: string,
    text: string,
    more: { contextId?: string; metadata?: object; headers?: object } = {},
  ) => {
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...more.headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: {
            messageId: `m-${Math.random()}`,
            role: 'ROLE_USER',
            parts: [{ text }],
            ...(more.contextId ? { contextId: more.contextId } : {}),
            ...(more.metadata ? { metadata: more.metadata } : {}),
          },
        },
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
  const json = async <T>(res: Response | Promise<Response>) => (await (await res).json()) as T;
  const turnOf = async (url: string, taskId: string) =>
    (await json<{ turns: TaskTimeline[] }>(fetch(`${url}/console/api/timelines/${taskId}`))).turns.at(-1)!;

  interface TurnDetail {
    turn: TaskTimeline;
    waterfall: WaterfallSpan;
    exchanges: ModelExchange[];
    replay: { message: string; startAgent?: string; ready: boolean; model: string; otherModels: boolean };
  }

  it('reads a turn as a waterfall with each model step’s exchange, redacted, and the turn’s replay draft', async () => {
    const { url } = await node([
      transferTo('librarian'),
      callTool('save_knowledge', { kind: 'fact', content: `key ${SECRET}` }),
      { text: 'Saved.', usage: { prompt_tokens: 7, completion_tokens: 2 } },
    ]);
    const task = await send(url, `remember the key ${SECRET}`);
    const { id } = await turnOf(url, task.id);
    const detail = await json<TurnDetail>(fetch(`${url}/console/api/turns/${id}`));
    expect(JSON.stringify(detail)).not.toContain(SECRET);
    expect(detail.turn).not.toHaveProperty('exchanges');
    const agents = detail.waterfall.children.map((a) => `${a.name}: ${a.children.map((c) => c.kind).join(' ')}`);
    expect(agents).toEqual(['lango-orchestrator: model transfer', 'librarian: model tool model']);
    const models = detail.turn.steps.flatMap((s, i) => (s.kind === 'model' ? [i] : []));
    expect(detail.exchanges.map((e) => e.step)).toEqual(models);
    const last = detail.exchanges.at(-1)!;
    expect(last.answer).toEqual({ text: 'Saved.', toolCalls: [] });
    expect(last.instruction).toContain('librarian');
    expect(last.tools.map((t) => t.name)).toContain('save_knowledge');
    expect(last.messages[0]).toEqual({ role: 'user', content: 'remember the key [REDACTED]' });
    expect(last.messages.find((m) => m.role === 'tool' && m.name === 'save_knowledge')?.content).toContain(
      '[REDACTED]',
    );
    expect(detail.turn.steps[models.at(-1)!]).toMatchObject({
      inputTokens: 7,
      outputTokens: 2,
      ms: expect.any(Number),
    });
    expect(detail.replay).toEqual({
      message: 'remember the key [REDACTED]',
      startAgent: 'lango-orchestrator',
      ready: true,
      model: 'openai:scripted',
      otherModels: true,
    });
    expect((await fetch(`${url}/console/api/turns/no-such-turn`)).status).toBe(404);
  });

  it('keeps no exchange when `observability.timeline.exchanges` is off: the waterfall stays', async () => {
    const { url } = await node([say('Hi.')], { observability: { timeline: { exchanges: false } } });
    const task = await send(url, `hello ${SECRET}`);
    const detail = await json<TurnDetail>(fetch(`${url}/console/api/turns/${(await turnOf(url, task.id)).id}`));
    expect(detail.exchanges).toEqual([]);
    expect(detail.waterfall.children.map((a) => a.children.map((c) => c.kind))).toEqual([['model']]);
  });

  it('replays a turn in a scratch conversation with its message and one agent’s prompt edited, the original untouched', async () => {
    // The request is the system instruction, the conversation's earlier messages and the (edited) message.
    const replayed = (body: ChatRequestBody) =>
      say(`replayed with "${body.messages[0].content}" after ${body.messages.length - 2} earlier messages`);
    const { url, model } = await node([say('First answer.'), say('Second answer.')]);
    const first = await send(url, 'hello');
    const second = await send(url, 'and the second', { contextId: first.contextId });
    const { id } = await turnOf(url, second.id);
    const before = await json<{ messages: unknown[] }>(fetch(`${url}/console/api/conversations/${first.contextId}`));

    model.push(replayed);
    const outcome = await json<{
      original: { answer: string; turnId: string };
      replay: { answer: string; status: string; sessionId: string; turnId: string };
      changed: unknown;
    }>(
      post(`${url}/console/api/turns/${id}/replay`, {
        message: 'and the second, edited',
        instruction: { agent: 'lango-orchestrator', text: 'You are terse.' },
      }),
    );
    expect(outcome.original).toMatchObject({ answer: 'Second answer.', turnId: id });
    // The earlier exchange of the conversation came along (2 messages before the edited one); the prompt is the edit.
    expect(outcome.replay).toMatchObject({
      answer: 'replayed with "You are terse." after 2 earlier messages',
      status: 'completed',
      sessionId: expect.stringMatching(/^replay:/),
    });
    expect(outcome.changed).toEqual({ message: true, instruction: 'lango-orchestrator' });
    expect(model.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'and the second, edited' });
    // The original conversation is as it was; the scratch one is the owner's, listed as a replay.
    expect(await json(fetch(`${url}/console/api/conversations/${first.contextId}`))).toEqual(before);
    const { conversations } = await json<{ conversations: Array<{ id: string; kind: string }> }>(
      fetch(`${url}/console/api/conversations`),
    );
    expect(conversations.find((c) => c.id === outcome.replay.sessionId)?.kind).toBe('replay');
    const scratch = await json<TurnDetail>(fetch(`${url}/console/api/turns/${outcome.replay.turnId}`));
    expect(scratch.turn).toMatchObject({ sessionId: outcome.replay.sessionId, caller: 'owner', status: 'completed' });

    // Another model: the node's client asks for it by name (a client that cannot switch fails the replay, saying
    // why: test/agent/replay.test.ts).
    model.push(say('Answered by the other model.'));
    const other = await json<{ replay: { status: string; answer: string } }>(
      post(`${url}/console/api/turns/${id}/replay`, { model: 'gpt-4o-mini' }),
    );
    expect(other.replay).toMatchObject({ status: 'completed', answer: 'Answered by the other model.' });
    expect(model.requests.at(-1)!.body.model).toBe('gpt-4o-mini');

    const bad = async (body: unknown) => {
      const res = await post(`${url}/console/api/turns/${id}/replay`, body);
      return [res.status, (await json<{ error: { message: string } }>(res)).error.message];
    };
    expect(await bad({ model: 'gpt 4; rm -rf' })).toEqual([400, expect.stringMatching(/^model: a model name/)]);
    expect(await bad({ temperature: 2 })).toEqual([400, expect.stringMatching(/^body: /)]);
    expect(await bad({ instruction: { agent: 'x' } })).toEqual([400, expect.stringMatching(/^instruction\.text: /)]);
    expect((await post(`${url}/console/api/turns/nope/replay`, {})).status).toBe(404);
    expect((await post(`${url}/console/api/turns/${id}/replay`, {}, { origin: 'http://evil.example' })).status).toBe(
      403,
    );
  });

  it('renames, finds and deletes conversations, grouping one-shot CLI chats and replays apart', async () => {
    const { url } = await node([say('a'), say('b'), say('c')]);
    const picnic = await send(url, 'plan a picnic');
    await send(url, 'weather: tomorrow', { contextId: 'cli-once:019aa7c2-5d1e-7b3f-9c41-2f6a0e8d1b57' });
    await send(url, 'unrelated');
    const list = async (q = '') =>
      (
        await json<{ conversations: Array<{ id: string; kind: string; title?: string; firstWords?: string }> }>(
          fetch(`${url}/console/api/conversations${q ? `?q=${encodeURIComponent(q)}` : ''}`),
        )
      ).conversations;
    expect((await list()).map((c) => [c.kind, c.firstWords])).toEqual([
      ['chat', 'unrelated'],
      ['one-shot', 'weather: tomorrow'],
      ['chat', 'plan a picnic'],
    ]);

    const renamed = await post(`${url}/console/api/conversations/${picnic.contextId}/rename`, { title: 'Saturday' });
    expect(await renamed.json()).toEqual({ id: picnic.contextId, caller: 'owner', title: 'Saturday' });
    expect((await list('satur')).map((c) => [c.id, c.title])).toEqual([[picnic.contextId, 'Saturday']]);
    expect((await list('PICNIC')).map((c) => c.id)).toEqual([picnic.contextId]);
    expect(await list('nothing like this')).toEqual([]);

    expect((await post(`${url}/console/api/conversations/nope/rename`, { title: 'x' })).status).toBe(404);
    expect((await post(`${url}/console/api/conversations/${picnic.contextId}/rename`, { name: 'x' })).status).toBe(400);
    const deleted = await post(`${url}/console/api/conversations/${picnic.contextId}/delete`, {});
    expect(await deleted.json()).toEqual({ id: picnic.contextId, caller: 'owner', deleted: true });
    expect((await fetch(`${url}/console/api/conversations/${picnic.contextId}`)).status).toBe(404);
    expect((await post(`${url}/console/api/conversations/${picnic.contextId}/delete`, {})).status).toBe(404);
    expect((await list()).map((c) => c.firstWords)).toEqual(['unrelated', 'weather: tomorrow']);
  });

  it("starts the owner's turn at the agent its message names; a guest's naming is not heard", async () => {
    const { url } = await node([say('Librarian here.'), say('Orchestrator here.')], {
      a2a: {
        auth: { bearerTokens: [GUEST_TOKEN], callers: [{ name: 'admin', owner: true, bearerTokens: [OWNER_TOKEN] }] },
      },
    });
    const metadata = { 'lango.agent': 'librarian' };
    const owner = { authorization: `Bearer ${OWNER_TOKEN}` };
    const asOwner = await send(url, 'find my notes', { metadata, headers: owner });
    const asGuest = await send(url, 'find my notes', { metadata, headers: { authorization: `Bearer ${GUEST_TOKEN}` } });
    // The agent each turn started at, as its waterfall (read by the owner) shows it.
    const startedAt = async (taskId: string) => {
      const turns = await json<{ turns: TaskTimeline[] }>(
        fetch(`${url}/console/api/timelines/${taskId}`, { headers: owner }),
      );
      const detail = await json<TurnDetail>(fetch(`${url}/console/api/turns/${turns.turns[0].id}`, { headers: owner }));
      return detail.waterfall.children.map((a) => a.name);
    };
    expect([await startedAt(asOwner.id), await startedAt(asGuest.id)]).toEqual([['librarian'], ['lango-orchestrator']]);
    // The console's new routes are the owner's too.
    for (const route of ['/console/api/turns/x', '/console/api/conversations?q=x']) {
      expect((await fetch(`${url}${route}`, { headers: { authorization: `Bearer ${GUEST_TOKEN}` } })).status).toBe(403);
    }
    const guestReplay = await post(`${url}/console/api/turns/x/replay`, {}, { authorization: `Bearer ${GUEST_TOKEN}` });
    expect(guestReplay.status).toBe(403);
    const guestDelete = await post(
      `${url}/console/api/conversations/x/delete`,
      {},
      { authorization: `Bearer ${GUEST_TOKEN}` },
    );
    expect(guestDelete.status).toBe(403);
  });

  it('lists a task its node stopped in the middle of as failed, with the reason its status gives', async () => {
    // The model call answers its headers and then nothing: the turn is under way until the node stops.
    const { url: first, model } = await node([{ chunks: ['never sent'], before: () => new Promise<void>(() => {}) }]);
    const started = fetch(first, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'hangs', role: 'ROLE_USER', parts: [{ text: 'take your time' }] } },
      }),
    }).catch(() => undefined);
    await waitFor(() => model.requests.length === 1, 20_000, 'the model call under way');
    await app!.close();
    app = undefined;
    await started;
    const { url } = await node([], {}, true);
    const { tasks } = await json<{ tasks: TaskSummary[] }>(fetch(`${url}/console/api/tasks`));
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ asked: 'take your time', state: 'failed', reason: 'node shutting down' });
  });
});
