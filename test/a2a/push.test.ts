import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { checkPushUrl, isPrivateAddress } from '../../src/a2a/tasks/pushNotifications';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { waitFor } from '../support/waitFor';

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback that answers with the scripted statuses, then 200. */
async function receiver(statuses: number[] = []) {
  const deliveries: Delivery[] = [];
  let attempts = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      attempts++;
      const status = statuses.shift() ?? 200;
      if (status === 200) deliveries.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    attempts: () => attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const stateOf = (d: Delivery) => {
  const event = JSON.parse(d.body);
  return event.task?.status?.state ?? event.statusUpdate?.status?.state ?? (event.artifactUpdate ? 'artifact' : '?');
};

describe('push notifications to a loopback receiver (allowPrivateNetworks: true)', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('delivers every event of the task in order, with the token and an HMAC signature of the body', async () => {
    const hook = await receiver();
    try {
      const client = await a2aClient(node.url, 'JSONRPC');
      const task = asTask(
        await client.sendMessage(
          textRequest(
            'notify me',
            {},
            { taskPushNotificationConfig: { id: 'h1', url: hook.url, token: 'hook-secret' } },
          ),
        ),
      );
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      await waitFor(
        () => hook.deliveries.some((d) => stateOf(d) === 'TASK_STATE_COMPLETED'),
        20_000,
        'the completed push',
      );
      const states = hook.deliveries.map(stateOf);
      expect(states[0]).toBe('TASK_STATE_SUBMITTED');
      expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');
      expect(states.indexOf('artifact')).toBeGreaterThan(states.indexOf('TASK_STATE_WORKING'));
      for (const delivery of hook.deliveries) {
        expect(delivery.headers['x-a2a-notification-token']).toBe('hook-secret');
        const expected = `sha256=${createHmac('sha256', 'hook-secret').update(delivery.body).digest('hex')}`;
        expect(delivery.headers['x-lango-signature']).toBe(expected);
      }
    } finally {
      await hook.close();
    }
  });

  it('delivers the later events of a streamed task to a webhook registered while it runs', async () => {
    const hook = await receiver();
    try {
      const client = await a2aClient(node.url, 'JSONRPC');
      const stream = client.sendMessageStream(textRequest('[hold] hooked late'));
      const first = await stream.next();
      const task = asTask(first.value?.payload?.value);
      // The task's first events were looked up and found without a webhook; the one registered now counts.
      const second = await stream.next();
      expect(second.value?.payload?.$case).toBe('statusUpdate');
      await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'late',
        taskId: task.id,
        url: hook.url,
        token: '',
        authentication: undefined,
      });
      // The turn holds until now: what follows comes after the webhook is registered.
      (node.runner as ScriptedA2ARunner).release('[hold] hooked late');
      for await (const event of stream) void event;
      await waitFor(
        () => hook.deliveries.some((d) => stateOf(d) === 'TASK_STATE_COMPLETED'),
        20_000,
        'the completed push',
      );
      expect(hook.deliveries.map(stateOf)).not.toContain('TASK_STATE_SUBMITTED');
    } finally {
      await hook.close();
    }
  });

  it('retries a failing receiver with backoff until it accepts', async () => {
    const hook = await receiver([503, 503]);
    try {
      const client = await a2aClient(node.url, 'HTTP+JSON');
      // The task waits for an answer; the hook registered now receives the events of its resumption.
      const waiting = asTask(await client.sendMessage(textRequest('approve it')));
      await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'retry',
        taskId: waiting.id,
        url: hook.url,
        token: '',
        authentication: { scheme: 'Bearer', credentials: 'receiver-cred' },
      });
      await client.sendMessage(textRequest('yes', { taskId: waiting.id, contextId: waiting.contextId }));
      await waitFor(() => hook.deliveries.length > 0, 20_000, 'a push delivery');
      expect(hook.attempts()).toBeGreaterThanOrEqual(3);
      expect(hook.deliveries[0].headers.authorization).toBe('Bearer receiver-cred');
    } finally {
      await hook.close();
    }
  });
  it('gives up after a2a.pushNotifications.maxAttempts and logs the undeliverable notification', async () => {
    const hook = await receiver(Array(50).fill(500));
    try {
      const client = await a2aClient(node.url, 'JSONRPC');
      await client.sendMessage(
        textRequest('doomed hook', {}, { taskPushNotificationConfig: { id: 'h', url: hook.url, token: 't' } }),
      );
      const mine = (r: { message: string; meta: Record<string, unknown> }) =>
        r.message === 'push notification undeliverable' && r.meta.url === new URL(hook.url).origin;
      await waitFor(() => node.logger.records.some(mine), 20_000, 'the push failure log line');
      const record = node.logger.records.find(mine);
      expect(record?.meta).toMatchObject({ attempts: 3, last: 'HTTP 500' });
      expect(JSON.stringify(record)).not.toContain('"t"');
    } finally {
      await hook.close();
    }
  });
});

describe('webhook URL checks', () => {
  it('classifies private, loopback and link-local addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
      '100.64.0.1',
    ]) {
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, false]);
  });

  it('refuses non-http schemes, credentials in the URL and private hosts unless allowed', () => {
    expect(() => checkPushUrl('ftp://example.com/x', true)).toThrow(/http\(s\)/);
    expect(() => checkPushUrl('https://user:pw@example.com/x', false)).toThrow(/credentials/);
    expect(() => checkPushUrl('http://localhost:8080/x', false)).toThrow(/private or loopback/);
    expect(() => checkPushUrl('http://[::1]:8080/x', false)).toThrow(/private or loopback/);
    expect(checkPushUrl('http://127.0.0.1:8080/x', true).port).toBe('8080');
    expect(checkPushUrl('https://hooks.example.com/x', false).hostname).toBe('hooks.example.com');
  });

  it('makes a node without allowPrivateNetworks refuse loopback webhooks with -32602', async () => {
    const node = await startA2ANode({
      config: { a2a: { pushNotifications: { allowPrivateNetworks: false, maxAttempts: 1 } } },
    });
    try {
      const client = await a2aClient(node.url, 'JSONRPC');
      const task = asTask(await client.sendMessage(textRequest('guarded')));
      const refused = await rawPost(
        node.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'CreateTaskPushNotificationConfig',
          params: { taskId: task.id, id: 'x', url: 'http://127.0.0.1:9/hook' },
        }),
      );
      expect(refused.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/private or loopback/) });
      const accepted = await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'public',
        taskId: task.id,
        url: 'https://hooks.example.com/x',
        token: '',
        authentication: undefined,
      });
      expect(accepted.url).toBe('https://hooks.example.com/x');
    } finally {
      await node.close();
    }
  });
});
