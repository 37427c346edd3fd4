import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';

/**
 * Two callers with their own bearer tokens against one node (offline model,
 * real SDK clients over HTTP): each is a named caller, and nothing one
 * creates — conversations, pending approvals, secrets, jobs — reaches the
 * other. The owner (here the CLI's side: the runner as OWNER) sees every
 * caller's rows through listings.
 */
describe('principals over A2A: two callers, one node', () => {
  let dataDir: string;
  let app: LangoApp;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-principals-'));
    const config = resolveConfig({
      server: { port: 0 },
      dataDir,
      a2a: {
        auth: {
          // Both may use every tool family: this suite is about whose rows they reach, not what they may call.
          callers: [
            { name: 'alice', bearerTokens: ['alice-token-0123456789'], grant: { toolFamilies: 'all' } },
            { name: 'bob', bearerTokens: ['bob-token-9876543210'], grant: { toolFamilies: 'all' } },
          ],
        },
      },
      tools: { browser: { enabled: false }, exec: { policy: 'ask', allow: ['echo'] } },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
    const url = await app.listen();
    alice = await a2aClient(url, 'JSONRPC', { authorization: 'Bearer alice-token-0123456789' });
    bob = await a2aClient(url, 'JSONRPC', { authorization: 'Bearer bob-token-9876543210' });
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const send = async (client: Client, text: string, ids: { contextId?: string; taskId?: string } = {}) =>
    asTask(await client.sendMessage(textRequest(text, ids)));

  it("keeps a caller's conversation and pending approval its own, even under the same contextId", async () => {
    const file = path.join(dataDir, 'workspace', 'alice.txt');
    const asked = await send(alice, 'exec_shell {"command": "touch alice.txt"}', { contextId: 'shared-ctx' });
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    // Bob uses the same contextId and says yes: that is his own, new conversation, with nothing to approve.
    const bobs = await send(bob, 'yes', { contextId: 'shared-ctx' });
    expect(bobs.id).not.toBe(asked.id);
    expect(bobs.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(fs.existsSync(file)).toBe(false);
    // Nor can he answer Alice's task by its id: it is not his.
    await expect(send(bob, 'yes', { contextId: 'shared-ctx', taskId: asked.id })).rejects.toThrow();
    expect(fs.existsSync(file)).toBe(false);

    const answered = await send(alice, 'yes', { contextId: 'shared-ctx', taskId: asked.id });
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(fs.existsSync(file)).toBe(true);

    // Two conversations stored under one contextId, one per caller; the owner lists both.
    const sessions = await app.stores.sessions.list(OWNER);
    const shared = sessions.filter((s) => s.id === 'shared-ctx').map((s) => s.owner);
    expect(shared).toHaveLength(2);
    expect(shared.sort()).toEqual(['alice', 'bob']);
    expect(await app.stores.sessions.messages(OWNER, 'shared-ctx')).toEqual([]);
  });

  it("keeps a caller's secrets and background jobs from the other caller", async () => {
    const stored = await send(alice, 'secrets_store {"name": "ALICE_TOKEN", "value": "alice-private-value-42"}');
    expect(answerText(stored)).toContain('"stored":true');
    const alicesList = await send(alice, 'secrets_list {}');
    expect(answerText(alicesList)).toContain('ALICE_TOKEN');
    const bobsList = await send(bob, 'secrets_list {}');
    expect(bobsList.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(bobsList)).not.toContain('ALICE_TOKEN');
    const bobsGet = await send(bob, 'secrets_get {"name": "ALICE_TOKEN"}');
    expect(answerText(bobsGet)).toContain('unknown secret "ALICE_TOKEN"');

    const submitted = await send(alice, 'bg_submit {"prompt": "hello"}');
    const id = /"id":"(bg-[0-9a-f]{8})"/.exec(answerText(submitted))?.[1];
    expect(id).toMatch(/^bg-/);
    const bobsStatus = await send(bob, `bg_status {"id": "${id}"}`);
    expect(answerText(bobsStatus)).toContain(`no background job with id "${id}"`);
    const bobsJobs = await send(bob, 'bg_list {}');
    expect(bobsJobs.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(bobsJobs)).not.toContain(id!);
    // The owner sees both callers' secrets and Alice's job.
    expect((await app.stores.vault.listSecrets(OWNER)).map((s) => s.name)).toContain('ALICE_TOKEN');
    expect(await app.stores.background.get(OWNER, id!)).toMatchObject({ owner: 'alice' });
  });
});
