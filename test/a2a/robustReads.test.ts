import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { grpcCall, type GrpcAnswer } from '../support/grpcCall';
import { LIST_PAGE_BYTES, READ_DEPTH } from '../../src/a2a/tasks/readableTasks';

/**
 * Issue 37 §3: nothing one caller stored can break another caller's reads.
 * The owner's ListTasks holds every caller's tasks, so one task that cannot
 * be answered — a value nested deeper than any encoder writes, stored before
 * the limits held requests to 100 levels — or a page too large for a gRPC
 * client (4 MiB by default) would fail it for everyone.
 */

const OWNER = 'owner-token';
const ALICE = 'alice-token';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let node: A2ATestNode;
beforeAll(async () => {
  node = await startA2ANode({
    grpc: true,
    config: {
      a2a: {
        auth: {
          callers: [
            { name: 'boss', bearerTokens: [OWNER], owner: true },
            { name: 'alice', bearerTokens: [ALICE] },
          ],
        },
      },
    },
  });
});
afterAll(() => node.close());

const send = (text: string, token = ALICE) =>
  grpcCall(
    node.grpcAddress!,
    'SendMessage',
    { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } },
    bearer(token),
  );
const taskIdOf = (answer: GrpcAnswer) =>
  (answer.messages[0] as { payload?: { value?: { id?: string } } } | undefined)?.payload?.value?.id ?? '';
const tasksOf = (answer: GrpcAnswer) => (answer.messages[0] as { tasks: Array<{ id: string }> }).tasks;
const nextPageOf = (answer: GrpcAnswer) => (answer.messages[0] as { nextPageToken: string }).nextPageToken;

describe('reads of what callers stored', () => {
  it('answers a task stored nesting 1,500 levels deep, and every list holding it, on gRPC and JSON-RPC', async () => {
    const taskId = taskIdOf(await send('stored before the limits'));
    // As a node without the limits stored it: metadata 1,500 levels deep in the row.
    let deep: unknown = 'leaf';
    for (let level = 0; level < 1_500; level++) deep = { a: deep };
    node.db.prepare('UPDATE a2a_tasks SET metadata = ? WHERE id = ?').run(JSON.stringify({ deep }), taskId);
    for (const token of [OWNER, ALICE]) {
      const listed = await grpcCall(node.grpcAddress!, 'ListTasks', {}, bearer(token));
      expect(listed.error).toBeUndefined();
      expect(tasksOf(listed).map((task) => task.id)).toContain(taskId);
      const read = await grpcCall(node.grpcAddress!, 'GetTask', { id: taskId }, bearer(token));
      expect(read.error).toBeUndefined();
      const rpc = await fetch(`${node.url}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...bearer(token) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }),
      });
      const answer = (await rpc.json()) as { result: { id: string; metadata: unknown } };
      expect(answer.result.id).toBe(taskId);
      // What nests past the read depth is answered as null; the levels above it stand.
      const text = JSON.stringify(answer.result.metadata);
      expect(text.split('{"a":').length - 1).toBeLessThan(READ_DEPTH);
      expect(text).toContain('null');
    }
  });

  it('pages the owner’s ListTasks under what a gRPC client takes, however large each caller’s tasks are', async () => {
    // Forty tasks of 95 KB each: 3.8 MB in one page of 50, near the 4 MiB a gRPC client takes by default.
    const big = 'b'.repeat(95 * 1024);
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) ids.add(taskIdOf(await send(`${i} ${big}`)));
    const seen = new Set<string>();
    let pageToken = '';
    let pages = 0;
    do {
      const page = await grpcCall(node.grpcAddress!, 'ListTasks', { pageSize: 50, pageToken }, bearer(OWNER));
      expect(page.error).toBeUndefined();
      const tasks = tasksOf(page);
      expect(tasks.length).toBeGreaterThan(0);
      expect(JSON.stringify(page.messages[0]).length).toBeLessThan(LIST_PAGE_BYTES + 200 * 1024);
      for (const task of tasks) {
        expect(seen.has(task.id)).toBe(false);
        seen.add(task.id);
      }
      pageToken = nextPageOf(page);
      pages++;
    } while (pageToken !== '' && pages < 20);
    expect(pages).toBeGreaterThan(1);
    for (const id of ids) expect(seen.has(id)).toBe(true);
  });
});
