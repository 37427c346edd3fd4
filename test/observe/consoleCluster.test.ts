import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServe } from '../support/cliProcess';
import { launchChromium, openConsole, seriousViolations, showView, watchedPage } from '../support/consolePage';
import { REPLICA_MASTER_KEY, useReplicaCluster } from '../support/pgReplicas';
import { skipWithoutPostgres } from '../support/prerequisites';
import { waitFor } from '../support/waitFor';

/**
 * The console of one replica of a cluster (two replicas of one node on a
 * throwaway PostgreSQL, the scripted model, Debian's Chromium): a task run
 * on the other replica is listed with what was asked, its agent, duration
 * and replica, and its stored timeline opens; the replicas table shows both
 * replicas' heartbeat age, and a replica that stops leaves it. A task lost
 * with a third replica (a `lango serve` process killed -9 mid-turn) shows
 * that replica and the reason.
 */
if (!skipWithoutPostgres('the console of a cluster replica')) {
  describe('the console of a cluster replica in Chromium', () => {
    const cluster = useReplicaCluster({ replicaIds: ['a', 'b'], heartbeatInterval: '200ms', lease: '1s' });
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    it("lists another replica's task with its agent, duration and replica, opens its timeline, and shows the replicas alive", async () => {
      const [a, b] = cluster().nodes;
      cluster().model.push(
        { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'librarian' } }] },
        { toolCalls: [{ name: 'save_knowledge', arguments: { kind: 'fact', content: 'replicas share a database' } }] },
        { text: 'Saved on replica a.' },
      );
      const reply = await fetch(a.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'c-1', role: 'ROLE_USER', parts: [{ text: 'remember this on a' }] } },
        }),
      });
      const taskId = ((await reply.json()) as { result: { task: { id: string } } }).result.task.id;

      const { page, errors } = await watchedPage(browser);
      try {
        await openConsole(page, errors, b.url);
        await showView(page, 'tasks');
        const row = page.locator(`#task-rows tr[data-task="${taskId}"]`);
        // Replica a writes a turn's timeline up to a second after its answer (TIMELINE_SAVE_DELAY_MS): the
        // table, polled, links the task once it is stored.
        await row.locator('a.open-task').waitFor({ timeout: 20_000 });
        const cells = await row.locator('td').allTextContents();
        expect(cells.slice(0, 5)).toEqual(['remember this on a', 'completed', 'librarian', 'owner', 'a']);
        expect(cells[6]).toMatch(/^\d+(\.\d)? m?s$/);
        await row.locator('a.open-task').click();
        await page.locator('#turns details.turn', { hasText: 'on a: completed, answered by librarian' }).waitFor();
        await page.locator('#turns details.turn[open] table.waterfall').waitFor();
        expect(await page.locator('#turns tr.span.tool', { hasText: 'tool save_knowledge' }).count()).toBe(1);

        await showView(page, 'agents');
        const replica = (id: string) => page.locator(`#replica-rows tr[data-replica="${id}"]`);
        await replica('a').waitFor();
        expect(await replica('a').locator('th').textContent()).toBe('a');
        expect(await replica('b').locator('th').textContent()).toBe('b (this replica)');
        for (const id of ['a', 'b']) {
          expect(await replica(id).locator('td.health').textContent()).toBe('live');
          // Heartbeats every 200 ms: the age stays well within the 1 s lease.
          expect(await replica(id).locator('td.age').textContent()).toMatch(/^\d{1,3} ms$/);
        }
        expect(await seriousViolations(page)).toEqual([]);

        // A replica that stops removes its heartbeat: the table, polled, no longer lists it.
        await a.close();
        await waitFor(async () => (await replica('a').count()) === 0, 20_000, 'replica a to leave the table');
        expect(await replica('b').locator('td.health').textContent()).toBe('live');
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    }, 90_000);

    it('shows a task lost with its replica: the replica that ran it and why it failed', async () => {
      const [, b] = cluster().nodes;
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-replica-c-'));
      fs.writeFileSync(
        path.join(cwd, 'lango.config.yaml'),
        [
          'server:',
          '  host: 127.0.0.1',
          'storage:',
          `  url: ${cluster().databaseUrl}`,
          'cluster:',
          '  replicaId: c',
          '  heartbeatInterval: 200ms',
          '  lease: 1s',
          'security:',
          `  masterKey: "${REPLICA_MASTER_KEY}"`,
          'tools:',
          '  browser:',
          '    enabled: false',
          '',
        ].join('\n'),
      );
      const { serve, url } = await startServe(cwd);
      const streaming = new AbortController();
      try {
        // The offline model runs the command the message names: the turn is still running when c dies.
        const stream = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', accept: 'text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'SendStreamingMessage',
            params: {
              message: {
                messageId: 'lost-1',
                role: 'ROLE_USER',
                parts: [{ text: 'exec_shell {"command": "sleep 20"}' }],
              },
            },
          }),
          signal: streaming.signal,
        });
        const first = await stream.body!.getReader().read();
        const taskId = /"id":"([^"]+)"/.exec(new TextDecoder().decode(first.value))![1];
        const listed = async () =>
          (
            (await (await fetch(`${b.url}/console/api/tasks`)).json()) as {
              tasks: Array<{ taskId?: string; state: string; replica?: string; reason?: string }>;
            }
          ).tasks.find((t) => t.taskId === taskId);
        await waitFor(async () => (await listed())?.replica === 'c', 20_000, 'the task to run on c');
        serve.child.kill('SIGKILL');
        await serve.exited;
        await waitFor(async () => (await listed())?.state === 'failed', 20_000, "b's sweep to fail c's task");
        expect(await listed()).toMatchObject({ state: 'failed', replica: 'c', reason: 'replica lost' });

        const { page, errors } = await watchedPage(browser);
        try {
          await openConsole(page, errors, b.url);
          await showView(page, 'tasks');
          const row = page.locator(`#task-rows tr[data-task="${taskId}"]`);
          await row.waitFor();
          const cells = await row.locator('td').allTextContents();
          expect(cells[0]).toBe('exec_shell {"command": "sleep 20"} (no timeline stored)');
          expect(cells[1]).toBe('failedreplica lost');
          expect(await row.locator('td.state .reason').textContent()).toBe('replica lost');
          expect(await row.locator('td.replica').textContent()).toBe('c');
          expect(await seriousViolations(page)).toEqual([]);
          expect(errors).toEqual([]);
        } finally {
          await page.close();
        }
      } finally {
        streaming.abort();
        await serve.stop();
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    }, 120_000);
  });
}
