import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createApp, type LangoApp } from '../../../src/app';
import { resolveConfig } from '../../../src/config/load';
import type { LangoConfigInput } from '../../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../../src/log/logger';
import { SecretRegistry } from '../../../src/log/redact';
import { OWNER } from '../../../src/principal';
import { openSqliteStorage } from '../../../src/store/sqlite/storage';
import { openVault } from '../../../src/vault/vault';
import { a2aClient, answerText, asTask, partsText, textRequest } from '../../support/a2aClient';
import { startOpenAIServer, type OpenAIServer } from '../../support/openaiServer';
import { tempDir } from './context';

/**
 * The operator and vault tools through a whole node: the real `openai` client
 * against a scripted server, a real `@a2a-js/sdk` client, the real runtime.
 */
describe('operator and vault tools over A2A', () => {
  let dir: string;
  let cleanup: () => void;
  let model: OpenAIServer;
  let app: LangoApp | undefined;
  let logger: MemoryLogger;

  async function start(extra: LangoConfigInput = {}): Promise<string> {
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      agent: { provider: 'openai', apiKey: 'sk-roundtrip-key', baseUrl: model.baseURL, model: 'scripted' },
      tools: { browser: { enabled: false }, ...(extra.tools ?? {}) },
    });
    logger = createMemoryLogger();
    app = await createApp(config, { logger });
    return app.listen();
  }

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('lango-op-a2a-'));
    model = await startOpenAIServer();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await model.close();
    cleanup();
  });

  it('asks before running a command outside the allow-list and runs it after the yes (policy ask)', async () => {
    const url = await start({ tools: { exec: { policy: 'ask', allow: ['echo'] } } });
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
      { toolCalls: [{ name: 'exec_shell', arguments: { command: 'touch approved.txt' } }] },
      (body) => {
        const result = JSON.parse(body.messages.filter((m) => m.role === 'tool').pop()?.content ?? '{}');
        return { text: `done, exit code ${result.exitCode}` };
      },
    );
    const client = await a2aClient(url, 'JSONRPC');
    const asked = asTask(await client.sendMessage(textRequest('create approved.txt in the workspace')));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(partsText(asked.status?.message?.parts)).toContain('touch approved.txt');
    const file = path.join(dir, 'workspace', 'approved.txt');
    expect(fs.existsSync(file)).toBe(false);

    const answered = asTask(
      await client.sendMessage(textRequest('yes', { contextId: asked.contextId, taskId: asked.id })),
    );
    expect(answered.id).toBe(asked.id);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(answered)).toBe('done, exit code 0');
    expect(fs.existsSync(file)).toBe(true);
    expect(model.unexpected).toEqual([]);
  });

  it('lets the model use a secret by reference: the command gets the value, prompts, task history and logs never do', async () => {
    const value = `sk-live-${crypto.randomBytes(12).toString('hex')}`;
    const storage = openSqliteStorage({
      file: path.join(dir, 'lango.db'),
      logger: createMemoryLogger(),
      clock: () => new Date(),
    });
    const vault = await openVault({
      store: storage.stores.vault,
      dataDir: dir,
      secrets: new SecretRegistry(),
      clock: () => new Date(),
      logger: createMemoryLogger(),
    });
    await vault.storeSecret(OWNER, 'DEPLOY_TOKEN', value);
    await storage.close();

    const url = await start();
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'vault' } }] },
      { toolCalls: [{ name: 'secrets_get', arguments: { name: 'DEPLOY_TOKEN' } }] },
      { text: 'The reference is {{secret:DEPLOY_TOKEN}}; the operator can use it.' },
    );
    const client = await a2aClient(url, 'JSONRPC');
    const first = asTask(await client.sendMessage(textRequest('get me a reference to DEPLOY_TOKEN')));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
      {
        toolCalls: [
          {
            name: 'exec_shell',
            arguments: {
              command: 'printf %s "{{secret:DEPLOY_TOKEN}}" > token.txt; echo "using {{secret:DEPLOY_TOKEN}}"',
            },
          },
        ],
      },
      (body) => ({
        text: `output: ${JSON.parse(body.messages.filter((m) => m.role === 'tool').pop()?.content ?? '{}').stdout}`,
      }),
    );
    const second = asTask(
      await client.sendMessage(textRequest('write the token to token.txt', { contextId: first.contextId })),
    );
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(second)).toBe('output: using [REDACTED]\n');
    expect(fs.readFileSync(path.join(dir, 'workspace', 'token.txt'), 'utf8')).toBe(value);

    const history = await client.getTask({ id: second.id, historyLength: 100, tenant: '' });
    expect(JSON.stringify(history)).not.toContain(value);
    expect(JSON.stringify(first)).not.toContain(value);
    expect(JSON.stringify(model.requests)).not.toContain(value);
    expect(JSON.stringify(logger.records)).not.toContain(value);
    expect(JSON.stringify(await (await fetch(`${url}/.well-known/agent-card.json`)).json())).not.toContain(value);
    await app?.close();
    app = undefined;
    for (const name of fs.readdirSync(dir).filter((f) => f.startsWith('lango.db'))) {
      expect(fs.readFileSync(path.join(dir, name)).includes(value)).toBe(false);
    }
    expect(model.unexpected).toEqual([]);
  });
});
