import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import Database from 'better-sqlite3';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { a2aClient, asTask, findWorkingTask, listTasksIn, partsText, textRequest } from '../support/a2aClient';
import { freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';
import { processesWith } from '../support/processes';
import { waitFor } from '../support/waitFor';

const SECRET = 's3cr3t-value-for-the-crash-test';

/** The answer text of a completed task (its artifacts). */
function answer(task: Task): string {
  return task.artifacts.map((a) => partsText(a.parts)).join('\n');
}

async function say(client: Client, text: string, contextId?: string): Promise<Task> {
  const task = asTask(await client.sendMessage(textRequest(text, contextId ? { contextId } : {})));
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  return task;
}

describe('kill -9 in the middle of streamed tasks, then restart on the same data dir', () => {
  let cwd: string;
  let node: ServeProcess | undefined;

  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-rel-crash-'));
    fs.writeFileSync(
      path.join(cwd, 'lango.config.yaml'),
      [
        'dataDir: ./data',
        'logLevel: warn',
        'tools:',
        '  browser:',
        '    enabled: false',
        'a2a:',
        '  pushNotifications:',
        '    allowPrivateNetworks: true',
        '',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await node?.kill9();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('keeps sessions, finished tasks, push configs, cron jobs and secrets; fails interrupted tasks with a reason; SQLite intact', async () => {
    const port = await freePort();
    const configFile = path.join(cwd, 'lango.config.yaml');
    node = await spawnServe({ cwd, configFile, port });
    let client = await a2aClient(node.url, 'JSONRPC');

    // Durable state before the crash.
    const contextId = `crash-ctx-${crypto.randomUUID()}`;
    const greeting = await say(client, 'hello', contextId);
    await say(client, 'cron_add {"name": "nightly", "schedule": "0 3 * * *", "prompt": "say hi"}');
    const stored = await say(client, `secrets_store {"name": "api_token", "value": "${SECRET}"}`);
    expect(answer(stored)).not.toContain(SECRET);
    await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'hook-1',
      taskId: greeting.id,
      url: 'http://127.0.0.1:9/hook',
      token: 'tok',
      authentication: undefined,
    });

    // Three streamed tasks running a slow command; crash once all three are working. A minute: all five commands
    // below are still running together however slowly a busy machine starts them (the kill ends them all).
    const running: string[] = [];
    const streams = [1, 2, 3].map(async (i) => {
      try {
        for await (const event of client.sendMessageStream(
          textRequest(`exec_shell {"command": "sleep 60 && echo done-${i}"}`),
        )) {
          const payload = event.payload;
          if (payload?.$case === 'statusUpdate' && payload.value.status?.state === TaskState.TASK_STATE_WORKING) {
            if (!running.includes(payload.value.taskId)) running.push(payload.value.taskId);
          }
        }
        return 'ended';
      } catch {
        return 'broken';
      }
    });
    await waitFor(() => running.length === 3, 30_000, 'three streamed tasks working');
    // Blocking calls in flight too: one another client has listed (so it is on disk), one nobody has seen.
    const blocking = (text: string) =>
      client.sendMessage(textRequest(text)).then(
        () => 'ended',
        () => 'broken',
      );
    const listedCall = blocking('exec_shell {"command": "sleep 60 && echo listed"}');
    const listed = await findWorkingTask(client, (first) => first.includes('echo listed'), 30_000);
    expect(listed).toBeDefined();
    const unseenCall = blocking('exec_shell {"command": "sleep 60 && echo unseen"}');
    // Its command running means the node holds the call: three streamed, listed and unseen.
    await waitFor(() => processesWith('sleep 60').length === 5, 30_000, 'five commands running');
    await node.kill9();
    // Every caller's stream or blocking call ends (broken) instead of hanging.
    expect(await Promise.all(streams)).toEqual(['broken', 'broken', 'broken']);
    expect(await Promise.all([listedCall, unseenCall])).toEqual(['broken', 'broken']);

    node = await spawnServe({ cwd, configFile, port });
    client = await a2aClient(node.url, 'JSONRPC');

    // Finished task, with its answer.
    const again = await client.getTask({ tenant: '', id: greeting.id, historyLength: 10 });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answer(again)).toBe(answer(greeting));
    // Interrupted tasks: failed, with a reason.
    for (const id of running) {
      const task = await client.getTask({ tenant: '', id, historyLength: 0 });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(partsText(task.status?.message?.parts)).toMatch(/restarted/);
    }
    // The listed blocking task was on disk: failed, with a reason. The unseen one left no row.
    const listedAfter = await client.getTask({ tenant: '', id: listed!.id, historyLength: 10 });
    expect(listedAfter.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(partsText(listedAfter.status?.message?.parts)).toMatch(/restarted/);
    const all = await listTasksIn(client, TaskState.TASK_STATE_UNSPECIFIED);
    expect(all.filter((t) => partsText(t.history[0]?.parts).includes('echo unseen'))).toEqual([]);
    // Push config.
    const hook = await client.getTaskPushNotificationConfig({ tenant: '', taskId: greeting.id, id: 'hook-1' });
    expect(hook.url).toBe('http://127.0.0.1:9/hook');
    // Cron job and secret, through the agents.
    expect(answer(await say(client, 'cron_list'))).toMatch(/"name":"nightly".*"status":"active"/s);
    expect(answer(await say(client, 'secrets_list'))).toContain('api_token');
    const digest = crypto.createHash('sha256').update(SECRET).digest('hex');
    expect(answer(await say(client, 'exec_shell {"command": "printf %s {{secret:api_token}} | sha256sum"}'))).toContain(
      digest,
    );
    // Session: the conversation continues in the same context.
    const followUp = await say(client, 'hi again', contextId);
    expect(followUp.contextId).toBe(contextId);

    await node.stop();
    node = undefined;
    const db = new Database(path.join(cwd, 'data', 'lango.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const session = db.prepare('SELECT COUNT(*) AS n FROM session_messages WHERE session_id = ?').get(contextId) as {
        n: number;
      };
      // Two user turns and two answers, at least: the pre-crash turn survived.
      expect(session.n).toBeGreaterThanOrEqual(4);
      const working = db
        .prepare(
          "SELECT COUNT(*) AS n FROM a2a_tasks WHERE status_state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')",
        )
        .get() as { n: number };
      expect(working.n).toBe(0);
    } finally {
      db.close();
    }
  }, 90_000);
});
