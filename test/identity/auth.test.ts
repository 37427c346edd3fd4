import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app';
import { LangoConfig } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { assertSafeExposure } from '../../src/identity/identity';
import { ConfigError } from '../../src/errors';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import type { ScriptedA2ARunner } from '../support/a2aRunner';

const ALICE = { Authorization: 'Bearer alice-token-0123' };
const BOB = { 'X-API-Key': 'bob-key-4567' };

describe('caller authentication and per-caller task scoping', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode({
      config: { a2a: { auth: { bearerTokens: ['alice-token-0123'], apiKeys: ['bob-key-4567'] } } },
    });
  });
  afterAll(() => node.close());

  it('refuses a JSON-RPC call without credentials with 401, WWW-Authenticate and a JSON-RPC error', async () => {
    const calls = (node.runner as ScriptedA2ARunner).calls.length;
    const response = await rawPost(
      node.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      }),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="lango", ApiKey/);
    expect(response.body.error.message).toMatch(/authentication required/);
    expect((node.runner as ScriptedA2ARunner).calls.length).toBe(calls);
  });

  it('refuses a wrong bearer token and a wrong API key, over REST too', async () => {
    const wrongToken = await fetch(`${node.url}/tasks/x`, {
      headers: { Authorization: 'Bearer nope', 'A2A-Version': '1.0' },
    });
    expect(wrongToken.status).toBe(401);
    const wrongKey = await fetch(`${node.url}/tasks/x`, { headers: { 'X-API-Key': 'nope', 'A2A-Version': '1.0' } });
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.json()).toMatchObject({ error: { status: 'UNAUTHENTICATED' } });
    const catalog = await fetch(`${node.url}/agents`);
    expect(catalog.status).toBe(401);
  });

  it('keeps the card and health public', async () => {
    expect((await fetch(`${node.url}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
  });

  it('lets each caller see and cancel only its own tasks', async () => {
    const alice = await a2aClient(node.url, 'JSONRPC', ALICE);
    const bob = await a2aClient(node.url, 'HTTP+JSON', BOB);
    const aliceTask = asTask(await alice.sendMessage(textRequest('alice private work')));
    const bobTask = asTask(await bob.sendMessage(textRequest('bob private work')));

    await expect(bob.getTask({ tenant: '', id: aliceTask.id })).rejects.toThrow(/not found/i);
    await expect(alice.getTask({ tenant: '', id: bobTask.id })).rejects.toThrow(/not found/i);
    await expect(bob.cancelTask({ tenant: '', id: aliceTask.id, metadata: undefined })).rejects.toThrow(/not found/i);
    const listAll = {
      tenant: '',
      contextId: '',
      status: 0,
      pageToken: '',
      statusTimestampAfter: undefined,
      pageSize: 100,
    };
    const bobsList = await bob.listTasks(listAll);
    expect(bobsList.tasks.map((t) => t.id)).toContain(bobTask.id);
    expect(bobsList.tasks.map((t) => t.id)).not.toContain(aliceTask.id);
    expect((await alice.getTask({ tenant: '', id: aliceTask.id })).id).toBe(aliceTask.id);
  });

  it('gives authenticated callers the extended card with tool counts and remote card URLs', async () => {
    const alice = await a2aClient(node.url, 'JSONRPC', ALICE);
    const extended = await alice.getAgentCard();
    const operator = extended.skills.find((s) => s.id === 'operator');
    expect(operator?.description).toMatch(/\(2 tools\)/);
    expect(extended.skills.find((s) => s.id === 'peer')?.description).toContain(
      'http://127.0.0.1:9/peer/.well-known/agent-card.json',
    );
    const publicCard = await (
      await fetch(`${node.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json();
    expect(JSON.stringify(publicCard)).not.toContain('tools)');
  });
});

describe('failing closed on exposure', () => {
  const config = (fields: Record<string, unknown>) => LangoConfig.parse(fields);

  it('refuses to serve on a non-loopback address without auth', () => {
    expect(() => assertSafeExposure(config({ server: { host: '0.0.0.0' } }))).toThrow(ConfigError);
    expect(() => assertSafeExposure(config({ server: { host: '192.168.1.20' } }))).toThrow(/without authentication/);
  });

  it('serves on loopback, with auth, or when allowUnauthenticated is set', () => {
    expect(() => assertSafeExposure(config({ server: { host: '127.0.0.1' } }))).not.toThrow();
    expect(() => assertSafeExposure(config({ server: { host: '::1' } }))).not.toThrow();
    expect(() =>
      assertSafeExposure(config({ server: { host: '0.0.0.0' }, a2a: { auth: { bearerTokens: ['x'] } } })),
    ).not.toThrow();
    expect(() =>
      assertSafeExposure(config({ server: { host: '0.0.0.0' }, a2a: { allowUnauthenticated: true } })),
    ).not.toThrow();
  });

  it('treats only loopback literals and localhost as loopback, never a name that merely starts with 127', () => {
    for (const host of ['127.0.0.2', '127.1', 'localhost', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) {
      expect(() => assertSafeExposure(config({ server: { host } }))).not.toThrow();
    }
    for (const host of ['127.example.com', '127.0.0.1.nip.io', 'localhost.evil.com', '128.0.0.1', '::2']) {
      expect(() => assertSafeExposure(config({ server: { host } }))).toThrow(/without authentication/);
    }
  });

  it('makes createApp refuse before it opens the database or contacts a peer', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-exposure-'));
    try {
      const refused = createApp(
        config({
          dataDir: path.join(dir, 'data'),
          server: { host: '0.0.0.0', port: 0 },
          a2a: { remoteAgents: [{ name: 'peer', baseUrl: 'http://127.0.0.1:9' }] },
        }),
        { logger: createMemoryLogger() },
      );
      await expect(refused).rejects.toThrow(ConfigError);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
