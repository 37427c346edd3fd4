import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { Agent } from 'undici';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { createMemoryLogger } from '../../src/log/logger';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { AUTH_REQUEST, startPeer, type TestPeer } from '../support/federationPeers';
import { baseOptions, drain, entries } from '../support/federationRun';

/**
 * A remote agent that answers TASK_STATE_AUTH_REQUIRED (A2A §7.6, issue
 * 26): the delegated call does not fail; the node's own task goes to
 * auth-required with the remote's message, so its caller learns what is
 * needed (§7.6.2), and the caller's next message continues the remote task.
 */

const messageText = (task: {
  status?: { message?: { parts?: Array<{ content?: { $case: string; value?: unknown } }> } };
}) =>
  (task.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');

describe.each([true, false])('a remote agent asking for authorization (streaming: %s)', (streaming) => {
  let peer: TestPeer;
  let dispatcher: Agent;
  beforeAll(async () => {
    peer = await startPeer({ name: 'Calendar', behaviour: 'auth', streaming });
    dispatcher = new Agent();
  });
  afterAll(async () => {
    await peer.close();
    await dispatcher.destroy();
  });

  it('ends the call auth-required with its message, and the next call continues the remote task', async () => {
    const { agents } = await loadRemoteAgents({
      ...baseOptions(createMemoryLogger()),
      dispatcher,
      entries: entries({ name: 'calendar', baseUrl: peer.url }),
    });
    const state: Record<string, unknown> = {};
    const first = await drain(agents[0], { text: 'book Friday', state });
    expect(first.outcome).toEqual({ status: 'auth-required', text: AUTH_REQUEST });
    const second = await drain(agents[0], { text: 'done', state });
    expect(second.outcome).toEqual({ status: 'completed', text: 'authorized: done' });
    const sends = peer.requests.filter((r) => /SendMessage|SendStreamingMessage/.test(r.method));
    const taskIds = sends.map((r) => (r.params.message as { taskId?: string }).taskId);
    // The answer went to the remote task that asked, not to a new one.
    expect(taskIds).toHaveLength(2);
    expect(taskIds[0]).toBeFalsy();
    expect(taskIds[1]).toBeTruthy();
  });
});

describe("the node's own task when its remote agent asks for authorization", () => {
  let peer: TestPeer;
  let app: LangoApp;
  let dir: string;
  beforeAll(async () => {
    peer = await startPeer({ name: 'Calendar', behaviour: 'auth' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-authreq-'));
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      a2a: { remoteAgents: [{ name: 'calendar', baseUrl: peer.url }] },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
  });
  afterAll(async () => {
    await app.close();
    await peer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("goes to auth-required with the remote's message; the caller's next message completes it", async () => {
    const client = await a2aClient(await app.listen(), 'JSONRPC');
    const asked = asTask(await client.sendMessage(textRequest('calendar: book Friday at ten')));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(messageText(asked)).toBe(AUTH_REQUEST);
    // Read back as stored, too.
    const stored = await client.getTask({ tenant: '', id: asked.id, historyLength: 0 });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);

    const answered = asTask(
      await client.sendMessage(textRequest('done', { taskId: asked.id, contextId: asked.contextId })),
    );
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(answered)).toContain('authorized: done');
  });
});
