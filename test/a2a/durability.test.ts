import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { a2aClient, asTask, partsText, textRequest } from '../support/a2aClient';
import { startA2ANode } from '../support/a2aServer';
import { ScriptedA2ARunner } from '../support/a2aRunner';

const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'lango-a2a-restart-'));

describe('tasks survive a restart', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  it('keeps finished tasks, waiting tasks and push configs; fails tasks a dead process left working', async () => {
    const dir = temp();
    const crashDir = temp();
    dirs.push(dir, crashDir);
    const first = await startA2ANode({ dir, runner: new ScriptedA2ARunner() });
    const client = await a2aClient(first.url, 'JSONRPC');
    const done = asTask(await client.sendMessage(textRequest('keep me')));
    const waiting = asTask(await client.sendMessage(textRequest('approve this')));
    await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'kept-hook',
      taskId: waiting.id,
      url: 'http://127.0.0.1:9/hook',
      token: 't',
      authentication: undefined,
    });

    // A turn in flight: take a consistent copy of the database file now, as a crash would leave it.
    const stream = client.sendMessageStream(textRequest('[hold] work in flight'));
    let inFlight = '';
    for await (const event of stream) {
      if (
        event.payload?.$case === 'statusUpdate' &&
        event.payload.value.status?.state === TaskState.TASK_STATE_WORKING
      ) {
        inFlight = event.payload.value.taskId;
        await first.db.backup(path.join(crashDir, 'lango.db'));
        break;
      }
    }
    expect(inFlight).not.toBe('');
    await first.stop();

    // Graceful stop: the running turn was failed, not left working.
    const again = await startA2ANode({ dir });
    try {
      const client2 = await a2aClient(again.url, 'HTTP+JSON');
      const kept = await client2.getTask({ tenant: '', id: done.id });
      expect(kept.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partsText(kept.artifacts[0]?.parts)).toBe('echo: keep me');
      const stopped = await client2.getTask({ tenant: '', id: inFlight });
      expect(stopped.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(partsText(stopped.status?.message?.parts)).toBe('node shutting down');
      const hooks = await client2.listTaskPushNotificationConfig({
        tenant: '',
        taskId: waiting.id,
        pageSize: 10,
        pageToken: '',
      });
      expect(hooks.configs.map((c) => c.id)).toEqual(['kept-hook']);
      // The waiting task is still waiting, and the caller's answer resumes it after the restart.
      expect((await client2.getTask({ tenant: '', id: waiting.id })).status?.state).toBe(
        TaskState.TASK_STATE_INPUT_REQUIRED,
      );
      const resumed = asTask(
        await client2.sendMessage(textRequest('yes', { taskId: waiting.id, contextId: waiting.contextId })),
      );
      expect(resumed.id).toBe(waiting.id);
      expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await again.stop();
    }

    // Crash copy: the task that was working is failed with "node restarted", never left working.
    const crashed = await startA2ANode({ dir: crashDir });
    try {
      const client3 = await a2aClient(crashed.url, 'JSONRPC');
      const orphan = await client3.getTask({ tenant: '', id: inFlight });
      expect(orphan.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(partsText(orphan.status?.message?.parts)).toBe('node restarted');
      expect((await client3.getTask({ tenant: '', id: done.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await crashed.stop();
    }
  });

  it('purges finished tasks older than a2a.taskRetention and keeps unfinished ones', async () => {
    const dir = temp();
    dirs.push(dir);
    const first = await startA2ANode({ dir, config: { a2a: { taskRetention: '1h' } } });
    const client = await a2aClient(first.url, 'JSONRPC');
    const old = asTask(await client.sendMessage(textRequest('old news')));
    const waiting = asTask(await client.sendMessage(textRequest('approve later')));
    await first.stop();

    const twoHoursLater = () => new Date(Date.now() + 2 * 3_600_000);
    const later = await startA2ANode({
      dir,
      config: { a2a: { taskRetention: '1h' } },
      extra: { clock: twoHoursLater },
    });
    try {
      const client2 = await a2aClient(later.url, 'JSONRPC');
      await expect(client2.getTask({ tenant: '', id: old.id })).rejects.toThrow(/not found/i);
      expect((await client2.getTask({ tenant: '', id: waiting.id })).status?.state).toBe(
        TaskState.TASK_STATE_INPUT_REQUIRED,
      );
      expect(later.logger.records.some((r) => r.message === 'finished tasks purged' && r.meta.count === 1)).toBe(true);
    } finally {
      await later.stop();
    }
  });
});
