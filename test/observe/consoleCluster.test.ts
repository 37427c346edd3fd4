import path from 'node:path';
import type { Browser } from 'playwright-core';
import { DOCS, launchChromium, openConsole, seriousViolations, showView, watchedPage } from '../support/consolePage';
import { useReplicaCluster } from '../support/pgReplicas';
import { skipWithoutPostgres } from '../support/prerequisites';
import { waitFor } from '../support/waitFor';

/**
 * The console of one replica of a cluster (two replicas of one node on a
 * throwaway PostgreSQL, the scripted model, Debian's Chromium): a task run
 * on the other replica is listed with what was asked, its agent, duration
 * and replica, and its stored timeline opens; the replicas table shows both
 * replicas' heartbeat age, and a replica that stops leaves it.
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
        await row.waitFor();
        const cells = await row.locator('td').allTextContents();
        expect(cells.slice(0, 5)).toEqual(['remember this on a', 'completed', 'librarian', 'owner', 'a']);
        expect(cells[6]).toMatch(/^\d+(\.\d)? m?s$/);
        await row.locator('button').click();
        await page.locator('#timeline-rows tr.turn', { hasText: 'on a: completed, answered by librarian' }).waitFor();
        expect(await page.locator('#timeline-rows tr.step', { hasText: 'tool save_knowledge' }).count()).toBe(1);
        await page.screenshot({ path: path.join(DOCS, 'console-cluster-tasks.png') });

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
        await page.locator('#replicas').screenshot({ path: path.join(DOCS, 'console-replicas.png') });
        expect(await seriousViolations(page)).toEqual([]);

        // A replica that stops removes its heartbeat: the table, polled, no longer lists it.
        await a.close();
        await waitFor(async () => (await replica('a').count()) === 0, 15_000, 'replica a to leave the table');
        expect(await replica('b').locator('td.health').textContent()).toBe('live');
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    }, 90_000);
  });
}
