import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { SecretRegistry } from '../../src/log/redact';
import { OWNER } from '../../src/principal';
import { createWinstonLogger } from '../../src/log/winston';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import {
  callTool,
  say,
  scriptedAgent,
  startOpenAIServer,
  transferTo,
  type ChatRequestBody,
  type OpenAIServer,
} from '../support/openaiServer';
import { waitFor } from '../support/waitFor';

/**
 * Callers against one node over loopback, through the real @a2a-js/sdk
 * client (issue 11 A and G): each caller's turn is offered only what its
 * grant allows, a tool call outside the grant is refused before it runs,
 * one caller reaches none of another's rows, and a secret a caller stored
 * is found in no task row, task answer, push payload or log line. The
 * model is a scripted OpenAI-compatible server, reached by the node's own
 * Chat Completions client.
 */

const TOKENS = {
  alice: 'alice-token-4f1c9a7e2b',
  mallory: 'mallory-token-8d3e6b0a5c',
  bob: 'bob-token-2a7f4c9e1d',
  carol: 'carol-token-6b8d0e3f7a',
  boss: 'boss-key-1c5a9e7d3b',
};
const SECRET_VALUE = 'sk-live-5e0f3a9c8b7d6e1f';

/** A webhook on loopback that keeps every body it receives. */
async function webhook(): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('principals: grants, refusals and scoping over A2A', () => {
  let dataDir: string;
  let app: LangoApp;
  let model: OpenAIServer;
  const logText = new PassThrough();
  let logs = '';
  const clients = {} as Record<keyof typeof TOKENS, Client>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-grants-'));
    logText.on('data', (chunk: Buffer) => (logs += chunk.toString('utf8')));
    const secrets = new SecretRegistry();
    model = await startOpenAIServer();
    const config = resolveConfig({
      server: { port: 0 },
      dataDir,
      agent: scriptedAgent(model),
      logLevel: 'debug',
      a2a: {
        pushNotifications: { allowPrivateNetworks: true },
        auth: {
          callers: [
            { name: 'alice', bearerTokens: [TOKENS.alice], grant: { toolFamilies: 'all' } },
            { name: 'mallory', bearerTokens: [TOKENS.mallory], grant: { toolFamilies: 'all' } },
            { name: 'bob', bearerTokens: [TOKENS.bob] },
            {
              name: 'carol',
              bearerTokens: [TOKENS.carol],
              grant: { specialists: ['librarian', 'planner'], remoteAgents: [], toolFamilies: ['librarian'] },
            },
            { name: 'boss', apiKeys: [TOKENS.boss], owner: true },
          ],
        },
      },
      tools: { browser: { enabled: false } },
    });
    app = await createApp(config, {
      secrets,
      logger: createWinstonLogger({ level: 'debug', pretty: false, secrets, stream: logText }),
    });
    const url = await app.listen();
    for (const name of ['alice', 'mallory', 'bob', 'carol'] as const)
      clients[name] = await a2aClient(url, 'JSONRPC', { authorization: `Bearer ${TOKENS[name]}` });
    clients.boss = await a2aClient(url, 'JSONRPC', { 'x-api-key': TOKENS.boss });
  });
  afterEach(() => expect(model.unexpected).toEqual([]));
  afterAll(async () => {
    await app.close();
    await model.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const send = async (client: Client, text: string, ids: { contextId?: string; taskId?: string } = {}) =>
    asTask(await client.sendMessage(textRequest(text, ids)));

  /** The orchestrator's first request of a turn, as the model endpoint received it: what the caller was offered. */
  async function offered(who: keyof typeof TOKENS): Promise<{ body: ChatRequestBody; instruction: string }> {
    let request: ChatRequestBody | undefined;
    model.push((body) => {
      request = body;
      return say('hello');
    });
    await send(clients[who], 'hello');
    const system = request!.messages.find((m) => m.role === 'system');
    return { body: request!, instruction: String(system?.content ?? '') };
  }
  const transferChoices = ({ body }: { body: ChatRequestBody }) => {
    const transfer = body.tools?.find((t) => t.function.name === 'transfer_to_agent');
    return (transfer?.function.parameters as { properties: { agent_name: { enum: string[] } } }).properties.agent_name
      .enum;
  };

  /** Has `who` ask `agent` to call `tool` with `args`; resolves with the tool's result as the model saw it. */
  async function runTool(
    who: keyof typeof TOKENS,
    agent: string,
    tool: string,
    args: unknown,
    contextId?: string,
  ): Promise<string> {
    let result = '';
    model.push(transferTo(agent), callTool(tool, args), (body) => {
      const last = body.messages.at(-1);
      result = last?.role === 'tool' ? String(last.content) : '';
      return say('done');
    });
    const task = await send(clients[who], `please run ${tool}`, { contextId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    return result;
  }

  it('offers a caller only the specialists its grant allows, in the routing table and in transfer_to_agent', async () => {
    const owner = await offered('boss');
    expect(transferChoices(owner)).toEqual(['operator', 'vault', 'librarian', 'automator', 'planner', 'chronicler']);

    // The default grant: no commands, files, skills, keys, secrets or payments, so no operator and no vault.
    const bob = await offered('bob');
    expect(transferChoices(bob)).toEqual(['librarian', 'automator', 'planner', 'chronicler']);
    expect(bob.instruction).not.toContain('### operator');
    expect(bob.instruction).not.toContain('### vault');

    const carol = await offered('carol');
    expect(transferChoices(carol)).toEqual(['librarian', 'planner']);
    expect(carol.instruction).toContain('### librarian');
    expect(carol.instruction).not.toMatch(/### (automator|chronicler|operator)/);
  });

  it('refuses a tool call outside the grant before it runs, with a note saying why', async () => {
    const target = path.join(dataDir, 'workspace', 'pwned.txt');
    let note = '';
    model.push(callTool('exec_shell', { command: `touch ${target}` }), (body) => {
      const last = body.messages.at(-1);
      note = last?.role === 'tool' ? String(last.content) : '';
      return say('I may not run commands for you.');
    });
    await send(clients.bob, 'run touch');
    expect(note).toBe(
      'tool exec_shell refused: the caller "bob" is not granted the "exec" tool family; it was not run. ' +
        'Tell the user this node does not allow it for them (the owner grants it in a2a.auth.callers).',
    );
    expect(fs.existsSync(target)).toBe(false);

    // A specialist the caller reaches still has only the tools of its granted families.
    const refused = await runTool('carol', 'librarian', 'cron_add', {
      name: 'x',
      schedule: 'every 1h',
      prompt: 'hi',
    });
    expect(refused).toMatch(/^tool cron_add refused: the caller "carol" is not granted the "cron" tool family/);
    expect(await app.stores.cron.list(OWNER)).toEqual([]);
  });

  it("keeps every store's rows from another caller: conversation, secrets, memory, knowledge, jobs", async () => {
    const ctx = 'shared-context';
    expect(
      await runTool('alice', 'vault', 'secrets_store', { name: 'ALICE_KEY', value: 'alice-only-3b9d' }, ctx),
    ).toContain('"stored":true');
    await runTool('alice', 'librarian', 'save_knowledge', { kind: 'fact', content: 'alice likes zebra-quartz' });
    await runTool('alice', 'chronicler', 'observe_event', { content: 'alice planned the heron-launch' });
    await runTool('alice', 'automator', 'cron_add', { name: 'alice-job', schedule: 'every 1h', prompt: 'ping' });

    // Mallory has every tool family, uses the same contextId, and still reaches none of it.
    let history: ChatRequestBody['messages'] = [];
    model.push((body) => {
      history = body.messages;
      return say('hi');
    });
    await send(clients.mallory, 'what did we say?', { contextId: ctx });
    expect(history.map((m) => m.content).join('\n')).not.toContain('secrets_store');
    expect(await runTool('mallory', 'vault', 'secrets_get', { name: 'ALICE_KEY' })).toContain(
      'unknown secret "ALICE_KEY"',
    );
    expect(await runTool('mallory', 'vault', 'secrets_list', {})).not.toContain('ALICE_KEY');
    expect(await runTool('mallory', 'librarian', 'search_knowledge', { query: 'zebra-quartz' })).toContain(
      '"results":[]',
    );
    expect(await runTool('mallory', 'chronicler', 'memory_recall', { query: 'heron-launch' })).not.toContain(
      'heron-launch',
    );
    expect(await runTool('mallory', 'automator', 'cron_list', {})).not.toContain('alice-job');
    await runTool('mallory', 'automator', 'cron_remove', { name: 'alice-job' });

    // The owner sees everyone's.
    // Mallory's remove reached nothing of Alice's; the owner sees everyone's.
    expect(await runTool('boss', 'automator', 'cron_list', {})).toContain('alice-job');
    expect(await runTool('boss', 'librarian', 'search_knowledge', { query: 'zebra-quartz' })).toContain('zebra-quartz');
  });

  it('keeps a stored secret out of GetTask, ListTasks, the task table, push payloads and logs', async () => {
    const hook = await webhook();
    try {
      model.push(
        transferTo('vault'),
        callTool('secrets_store', { name: 'DEPLOY_KEY', value: SECRET_VALUE }),
        say('Stored as {{secret:DEPLOY_KEY}}.'),
      );
      const sent = asTask(
        await clients.alice.sendMessage(
          textRequest(
            `store my deploy key ${SECRET_VALUE} as DEPLOY_KEY`,
            {},
            {
              taskPushNotificationConfig: { id: 'hook', url: hook.url, token: 'hook-token' },
            },
          ),
        ),
      );
      const taskId = sent.id;
      const completed = await waitFor(
        () => hook.bodies.find((body) => body.includes('TASK_STATE_COMPLETED')),
        20_000,
        'the push of the completed task',
      );
      expect(completed).not.toContain(SECRET_VALUE);

      const got = await clients.alice.getTask({ tenant: '', id: taskId, historyLength: 100 });
      expect(got.history.length).toBeGreaterThan(0);
      expect(JSON.stringify(got)).not.toContain(SECRET_VALUE);
      const listed = await clients.alice.listTasks({
        tenant: '',
        contextId: got.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 50,
        pageToken: '',
        historyLength: 100,
        includeArtifacts: true,
        statusTimestampAfter: undefined,
      });
      expect(listed.tasks.map((t) => t.id)).toContain(taskId);
      expect(JSON.stringify(listed)).not.toContain(SECRET_VALUE);

      // The owner sees the caller's task, redacted like everyone's; another caller does not see it at all.
      const bosses = await clients.boss.getTask({ tenant: '', id: taskId, historyLength: 100 });
      expect(bosses.id).toBe(taskId);
      expect(JSON.stringify(bosses)).not.toContain(SECRET_VALUE);
      const everyone = await clients.boss.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 100,
        pageToken: '',
        historyLength: 0,
        includeArtifacts: false,
        statusTimestampAfter: undefined,
      });
      expect(everyone.tasks.map((t) => t.id)).toContain(taskId);
      await expect(clients.mallory.getTask({ tenant: '', id: taskId, historyLength: 0 })).rejects.toThrow(/not found/i);

      // The task table, read from the file by another connection.
      const db = new Database(path.join(dataDir, 'lango.db'), { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare('SELECT * FROM a2a_tasks').all();
        expect(JSON.stringify(rows)).toContain(taskId);
        expect(JSON.stringify(rows)).not.toContain(SECRET_VALUE);
        const sessions = db.prepare('SELECT * FROM session_messages').all();
        expect(JSON.stringify(sessions)).not.toContain(SECRET_VALUE);
      } finally {
        db.close();
      }
      expect(logs).toContain('"message":"vault opened"');
      expect(logs).not.toContain(SECRET_VALUE);
    } finally {
      await hook.close();
    }
  });
});
