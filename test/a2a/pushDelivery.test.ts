import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { waitFor } from '../support/waitFor';

/**
 * Push notifications as A2A §13.2 asks (issue 26): the `authentication`
 * a client configured goes with every notification, failed attempts are
 * retried with backoff and bounded, and how the latest notification went
 * is recorded on the config, readable by the config's owner only.
 */

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook on loopback answering the scripted statuses in turn, then 200. */
async function receiver(statuses: number[]) {
  const accepted: Received[] = [];
  let attempts = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      attempts++;
      const status = statuses.length > 0 ? statuses.shift()! : 200;
      if (status === 200) accepted.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    accepted,
    attempts: () => attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const stateOf = (r: Received) => {
  const event = JSON.parse(r.body);
  return event.task?.status?.state ?? event.statusUpdate?.status?.state ?? (event.artifactUpdate ? 'artifact' : '?');
};

describe('push delivery with credentials, retries and a recorded outcome', () => {
  let node: A2ATestNode;
  const ALICE = 'alice-token-5e1d7c9a3b';
  const BOB = 'bob-token-8f2a6d0c4e';
  beforeAll(async () => {
    node = await startA2ANode({
      config: {
        a2a: {
          auth: {
            callers: [
              { name: 'alice', bearerTokens: [ALICE] },
              { name: 'bob', bearerTokens: [BOB] },
            ],
          },
        },
      },
    });
  });
  afterAll(() => node.close());

  const delivery = async (token: string, taskId: string, configId: string) => {
    const response = await fetch(`${node.url}/tasks/${taskId}/pushNotificationConfigs/${configId}/delivery`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it('delivers each notification once, with its credentials, to an endpoint that fails twice first', async () => {
    const hook = await receiver([503, 503]);
    try {
      const alice = await a2aClient(node.url, 'JSONRPC', { authorization: `Bearer ${ALICE}` });
      const task = asTask(
        await alice.sendMessage(
          textRequest(
            'notify me',
            {},
            {
              taskPushNotificationConfig: {
                id: 'twice',
                url: hook.url,
                token: '',
                authentication: { scheme: 'Bearer', credentials: 'alice-hook-credential' },
              },
            },
          ),
        ),
      );
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      await waitFor(() => hook.accepted.some((r) => stateOf(r) === 'TASK_STATE_COMPLETED'), 20_000, 'the last push');
      // Every notification arrived once (its id is the same on each retry), after two refused attempts.
      const ids = hook.accepted.map((r) => r.headers['x-lango-delivery']);
      expect(new Set(ids).size).toBe(ids.length);
      expect(hook.attempts()).toBe(hook.accepted.length + 2);
      expect(hook.accepted.map(stateOf)[0]).toBe('TASK_STATE_SUBMITTED');
      for (const r of hook.accepted) expect(r.headers.authorization).toBe('Bearer alice-hook-credential');

      // The outcome is on the config, for its owner; another caller does not find the config.
      await waitFor(
        async () => (await delivery(ALICE, task.id, 'twice')).body.delivery?.outcome === 'delivered',
        20_000,
        'the recorded delivery',
      );
      const mine = await delivery(ALICE, task.id, 'twice');
      expect(mine).toMatchObject({
        status: 200,
        body: { taskId: task.id, configId: 'twice', url: hook.url, delivery: { outcome: 'delivered', status: 200 } },
      });
      expect(JSON.stringify(mine.body)).not.toContain('alice-hook-credential');
      expect((await delivery(BOB, task.id, 'twice')).status).toBe(404);
      const anonymous = await fetch(`${node.url}/tasks/${task.id}/pushNotificationConfigs/twice/delivery`);
      expect(anonymous.status).toBe(401);
    } finally {
      await hook.close();
    }
  });

  it('records a notification that failed every attempt, with the last reason', async () => {
    const hook = await receiver(Array(50).fill(503));
    try {
      const alice = await a2aClient(node.url, 'JSONRPC', { authorization: `Bearer ${ALICE}` });
      const task = asTask(
        await alice.sendMessage(
          textRequest('doomed', {}, { taskPushNotificationConfig: { id: 'never', url: hook.url, token: 't' } }),
        ),
      );
      await waitFor(
        async () => (await delivery(ALICE, task.id, 'never')).body.delivery?.outcome === 'failed',
        20_000,
        'the recorded failure',
      );
      // startA2ANode bounds the attempts at 3 (a2a.pushNotifications.maxAttempts).
      expect((await delivery(ALICE, task.id, 'never')).body.delivery).toMatchObject({
        outcome: 'failed',
        attempts: 3,
        status: 503,
        error: 'HTTP 503',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    } finally {
      await hook.close();
    }
  });
});
