import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { RetryingPushSender } from '../../src/a2a/tasks/pushNotifications';
import { createMemoryLogger } from '../../src/log/logger';
import type { PushDelivery } from '../../src/store/taskRows';
import { collectGarbageEvery } from '../support/gc';

/**
 * A push receiver that takes the request and never answers (issue 37): each
 * attempt ends at its deadline and the delivery is recorded failed. On Node
 * 20 a deadline made of `AbortSignal.timeout` inside `AbortSignal.any` is
 * collected before it fires and the delivery stays pending forever; the
 * collector runs throughout here to prove the deadline is held.
 */
describe('a push receiver that never answers', () => {
  let server: http.Server;
  let url: string;
  const requests: http.IncomingMessage[] = [];
  beforeAll(async () => {
    // Reads the body, then holds the request open without a word.
    server = http.createServer((req) => {
      requests.push(req);
      req.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('gets its delivery failed after the attempt deadline, each attempt, with the collector running', async () => {
    const recorded: PushDelivery[] = [];
    let delivered!: () => void;
    const done = new Promise<void>((resolve) => (delivered = resolve));
    const config = { id: 'silent', url, token: 'tok-silent', taskId: 'task-1' } as TaskPushNotificationConfig;
    const store = {
      save: async () => undefined,
      load: async () => [config],
      loadWithMetadata: async () => [{ config, wireVersion: '1.0' }],
      delete: async () => undefined,
      recordDelivery: async (
        _taskId: string,
        _context: ServerCallContext,
        _configId: string,
        delivery: PushDelivery,
      ) => {
        recorded.push(delivery);
        delivered();
      },
    } as unknown as PushNotificationStore;
    const sender = new RetryingPushSender({
      store,
      logger: createMemoryLogger(),
      allowPrivateNetworks: true,
      maxAttempts: 2,
      baseDelayMs: 10,
      timeoutMs: 200,
    });
    const stop = collectGarbageEvery(5);
    try {
      await sender.send(statusEvent(), { requestedVersion: '1.0' } as unknown as ServerCallContext);
      await done;
    } finally {
      stop();
      await sender.close();
    }
    expect(recorded).toEqual([
      expect.objectContaining({ outcome: 'failed', attempts: 2, error: 'timed out after 200ms' }),
    ]);
    // The receiver took the first attempt and never answered it (a later one may end before its request is read).
    expect(requests.length).toBeGreaterThanOrEqual(1);
  });
});

function statusEvent(): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: { taskId: 'task-1', contextId: 'ctx-1', status: undefined, metadata: undefined },
    },
  } as unknown as StreamResponse;
}
