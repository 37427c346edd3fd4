import { ListTasksRequest, TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { a2aClient, asTask, textRequest, type Binding } from '../support/a2aClient';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';

const ALICE = { authorization: 'Bearer alice-token' };
const OWNER = { authorization: 'Bearer owner-token' };
const BINDINGS: Binding[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

let node: A2ATestNode;
beforeAll(async () => {
  node = await startA2ANode({
    grpc: true,
    config: {
      a2a: {
        tenants: ['acme', 'beta'],
        auth: {
          callers: [
            { name: 'alice', bearerTokens: ['alice-token'] },
            { name: 'boss', bearerTokens: ['owner-token'], owner: true },
          ],
        },
      },
    },
  });
});
afterAll(() => node.close());

describe('the card lists every binding once per tenant', () => {
  it('names the tenant on each interface after the node’s own', async () => {
    const interfaces = (await node.a2a.card()).supportedInterfaces as Array<Record<string, string>>;
    const v1 = interfaces.filter((i) => i.protocolVersion === '1.0');
    expect(v1.map((i) => `${i.tenant ?? ''}:${i.protocolBinding}`)).toEqual([
      ':JSONRPC',
      ':HTTP+JSON',
      ':GRPC',
      'acme:JSONRPC',
      'acme:HTTP+JSON',
      'acme:GRPC',
      'beta:JSONRPC',
      'beta:HTTP+JSON',
      'beta:GRPC',
    ]);
  });
});

describe.each(BINDINGS)('tenants over %s', (binding) => {
  it('keeps a task of one tenant from the same caller in another tenant and in none', async () => {
    const inAcme = await a2aClient(node.url, binding, ALICE, 'acme');
    const inBeta = await a2aClient(node.url, binding, ALICE, 'beta');
    const noTenant = await a2aClient(node.url, binding, ALICE);
    const task = asTask(await inAcme.sendMessage(textRequest(`hello from acme over ${binding}`)));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await inAcme.getTask({ tenant: '', id: task.id, historyLength: 0 })).id).toBe(task.id);
    for (const stranger of [inBeta, noTenant]) {
      await expect(stranger.getTask({ tenant: '', id: task.id, historyLength: 0 })).rejects.toBeInstanceOf(
        TaskNotFoundError,
      );
      await expect(stranger.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(
        TaskNotFoundError,
      );
      const listed = await stranger.listTasks(ListTasksRequest.fromJSON({ pageSize: 100 }));
      expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
      // Continuing it from elsewhere finds no such task either.
      await expect(stranger.sendMessage(textRequest('continue', { taskId: task.id }))).rejects.toBeInstanceOf(
        TaskNotFoundError,
      );
    }
  });

  it('runs the turn as the caller of that tenant (its conversation, memory and jobs are the tenant’s)', async () => {
    const runner = node.runner as ScriptedA2ARunner;
    const inBeta = await a2aClient(node.url, binding, ALICE, 'beta');
    const before = runner.calls.length;
    await inBeta.sendMessage(textRequest('who am i'));
    expect(runner.calls.slice(before).map((call) => call.principal)).toEqual([
      expect.objectContaining({ kind: 'caller', id: 'beta/alice', tenant: 'beta' }),
    ]);
  });

  it("shows the owner of a tenant that tenant's tasks, never another's", async () => {
    const aliceInAcme = await a2aClient(node.url, binding, ALICE, 'acme');
    const ownerOfAcme = await a2aClient(node.url, binding, OWNER, 'acme');
    const ownerOfBeta = await a2aClient(node.url, binding, OWNER, 'beta');
    const task = asTask(await aliceInAcme.sendMessage(textRequest('for the owner to see')));
    expect((await ownerOfAcme.getTask({ tenant: '', id: task.id, historyLength: 0 })).id).toBe(task.id);
    await expect(ownerOfBeta.getTask({ tenant: '', id: task.id, historyLength: 0 })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
  });

  it('echoes the tenant on push configs', async () => {
    const inAcme = await a2aClient(node.url, binding, ALICE, 'acme');
    const task = asTask(await inAcme.sendMessage(textRequest('push me')));
    const created = await inAcme.createTaskPushNotificationConfig({
      tenant: '',
      id: 'hook',
      taskId: task.id,
      url: 'http://127.0.0.1:9/hook',
      token: '',
      authentication: undefined,
    });
    expect(created.tenant).toBe('acme');
    const read = await inAcme.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook' });
    expect(read.tenant).toBe('acme');
  });

  it('answers a tenant it does not serve as not found', async () => {
    const inZeta = await a2aClient(node.url, binding, ALICE, 'acme');
    await expect(inZeta.sendMessage({ ...textRequest('hi'), tenant: 'zeta' })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    await expect(inZeta.getTask({ tenant: 'zeta', id: 'x', historyLength: 0 })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
  });
});

describe('tenant routes of HTTP+JSON', () => {
  it('serves /{tenant}/… and answers an unknown tenant 404 TASK_NOT_FOUND', async () => {
    const body = JSON.stringify({ message: { messageId: 'r-1', role: 'ROLE_USER', parts: [{ text: 'route' }] } });
    const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...ALICE };
    const sent = await rawPost(`${node.url}/acme/message:send`, body, headers);
    expect(sent.status).toBe(200);
    const id = sent.body.task.id as string;
    const read = await fetch(`${node.url}/acme/tasks/${id}`, { headers });
    expect(read.status).toBe(200);
    expect((await fetch(`${node.url}/beta/tasks/${id}`, { headers })).status).toBe(404);
    const unknown = await rawPost(`${node.url}/zeta/message:send`, body, headers);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details[0]).toMatchObject({ reason: 'TASK_NOT_FOUND' });
  });
});
