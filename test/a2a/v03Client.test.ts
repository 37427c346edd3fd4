import { randomUUID } from 'node:crypto';
import { ClientFactory, ClientFactoryOptions, type Client } from '@a2a-js/sdk-v03/client';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';

/** A v0.3 client (`@a2a-js/sdk` 0.3.14 under an npm alias) talking to the node through the SDK's compat layer. */
async function v03Client(url: string, transport: 'JSONRPC' | 'HTTP+JSON'): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }),
  );
  return factory.createFromUrl(url);
}

const send = (text: string, ids: { contextId?: string; taskId?: string } = {}) => ({
  message: {
    kind: 'message' as const,
    messageId: randomUUID(),
    role: 'user' as const,
    parts: [{ kind: 'text' as const, text }],
    ...ids,
  },
});

type AnyEvent = {
  kind: string;
  status?: { state: string; message?: { parts: { kind: string; text?: string }[] } };
  id?: string;
  taskId?: string;
  artifacts?: { parts: { kind: string; text?: string }[] }[];
  artifact?: unknown;
  final?: boolean;
};
const textOf = (parts: { kind: string; text?: string }[] | undefined) =>
  (parts ?? []).map((p) => p.text ?? '').join('');

describe.each(['JSONRPC', 'HTTP+JSON'] as const)('the node through the v0.3 client over %s', (transport) => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('reads the v0.3 card and completes message/send with the answer as an artifact', async () => {
    const client = await v03Client(node.url, transport);
    const task = (await client.sendMessage(send('hello from 0.3'))) as AnyEvent;
    expect(task.kind).toBe('task');
    expect(task.status?.state).toBe('completed');
    expect(textOf(task.artifacts?.[0]?.parts)).toBe('echo: hello from 0.3');
  });

  it('streams task, working updates and text chunks, the closing answer chunk and a final completed update in order', async () => {
    const client = await v03Client(node.url, transport);
    const kinds: string[] = [];
    for await (const event of client.sendMessageStream(send('stream in 0.3')) as AsyncGenerator<AnyEvent>) {
      kinds.push(event.kind === 'status-update' ? `status:${event.status?.state}` : event.kind);
    }
    expect(kinds[0]).toBe('task');
    expect(kinds.slice(1, -2).every((k) => k === 'status:working' || k === 'artifact-update')).toBe(true);
    expect(kinds.slice(-2)).toEqual(['artifact-update', 'status:completed']);
  });

  it('gets, cancels mid-stream and resumes input-required tasks', async () => {
    const client = await v03Client(node.url, transport);
    let taskId = '';
    let last = '';
    for await (const event of client.sendMessageStream(send('[hold] cancel in 0.3')) as AsyncGenerator<AnyEvent>) {
      if (event.kind === 'task') taskId = event.id!;
      else if (event.kind === 'status-update' && event.status?.state === 'working' && taskId && !last) {
        last = 'cancel-sent';
        await client.cancelTask({ id: taskId });
      }
      if (event.kind === 'status-update') last = event.status?.state ?? last;
    }
    expect(last).toBe('canceled');
    expect(((await client.getTask({ id: taskId })) as AnyEvent).status?.state).toBe('canceled');

    const asked = (await client.sendMessage(send('approve in 0.3'))) as AnyEvent & { contextId: string };
    expect(asked.status?.state).toBe('input-required');
    const answered = (await client.sendMessage(
      send('yes', { taskId: asked.id, contextId: asked.contextId }),
    )) as AnyEvent;
    expect(answered.status?.state).toBe('completed');
  });

  it('sets, gets, lists and deletes push-notification configs', async () => {
    const client = await v03Client(node.url, transport);
    const task = (await client.sendMessage(send('push in 0.3'))) as AnyEvent;
    const config = {
      taskId: task.id!,
      pushNotificationConfig: { id: 'v03-hook', url: 'http://127.0.0.1:9/hook', token: 'tok' },
    };
    const set = await client.setTaskPushNotificationConfig(config);
    expect(set.pushNotificationConfig.url).toBe('http://127.0.0.1:9/hook');
    // The 0.3 client types this parameter as TaskIdParams; the wire format takes the config id too.
    const got = await client.getTaskPushNotificationConfig({ id: task.id!, pushNotificationConfigId: 'v03-hook' } as {
      id: string;
    });
    expect(got.pushNotificationConfig.id).toBe('v03-hook');
    expect(
      (await client.listTaskPushNotificationConfig({ id: task.id! })).map((c) => c.pushNotificationConfig.id),
    ).toEqual(['v03-hook']);
    await client.deleteTaskPushNotificationConfig({ id: task.id!, pushNotificationConfigId: 'v03-hook' });
    expect(await client.listTaskPushNotificationConfig({ id: task.id! })).toEqual([]);

    // A v0.3 config set without an id is stored as `default`, where v0.3 peers look for it.
    const unnamed = await client.setTaskPushNotificationConfig({
      taskId: task.id!,
      pushNotificationConfig: { url: 'http://127.0.0.1:9/other' },
    });
    expect(unnamed.pushNotificationConfig.id).toBe('default');
    const fetched = await client.getTaskPushNotificationConfig({
      id: task.id!,
      pushNotificationConfigId: 'default',
    } as { id: string });
    expect(fetched.pushNotificationConfig.url).toBe('http://127.0.0.1:9/other');
  });
});
