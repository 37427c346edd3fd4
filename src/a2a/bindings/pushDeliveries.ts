import express from 'express';
import { resolveUserScope } from '@a2a-js/sdk/server';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import type { PushConfigRows } from '../../store/taskRows';
import { userOfRequest } from './httpCall';

/**
 * Where the owner of a push config reads how its latest notification went
 * (A2A §13.2, issue 26): `GET
 * /tasks/{taskId}/pushNotificationConfigs/{configId}/delivery`. The A2A
 * push config has no field for it (v1.0 `TaskPushNotificationConfig` is
 * url, token, authentication), so it is a resource of its own under the
 * config's REST path, read with the caller's credentials and scoped like
 * the config: another caller's config is not found.
 *
 * The answer: `{ taskId, configId, url, delivery }`, `delivery` being
 * `{ outcome: delivered | refused | failed, attempts, status?, error?, at }`
 * or `null` before the first notification.
 */

/** The path {@link pushDeliveryRoute} answers. */
export const PUSH_DELIVERY_PATH = '/tasks/:taskId/pushNotificationConfigs/:configId/delivery';

/**
 * @example
 * app.get(PUSH_DELIVERY_PATH, ...gate, pushDeliveryRoute({ rows: taskRows.pushConfigs, logger }));
 */
export function pushDeliveryRoute(options: { rows: PushConfigRows; logger: Logger }): express.RequestHandler {
  return (req, res) => {
    const { taskId, configId } = req.params as { taskId: string; configId: string };
    void (async () => {
      const user = userOfRequest(req);
      // The scope the config was saved under: the SDK's user scope of the caller (`taskStore.ts` `scopeOf`).
      const scope = { tenant: '', owner: resolveUserScope({ user } as Parameters<typeof resolveUserScope>[0]) };
      const stored = (await options.rows.load(scope, taskId)).find((s) => s.config.id === configId);
      if (!stored) {
        res.status(404).json({
          error: { code: 404, status: 'NOT_FOUND', message: `push notification config ${configId} not found` },
        });
        return;
      }
      res.json({ taskId, configId, url: stored.config.url, delivery: stored.delivery ?? null });
    })().catch((err: unknown) => {
      options.logger.warn('push delivery read failed', { taskId, error: errorMessage(err) });
      if (!res.headersSent)
        res.status(500).json({ error: { code: 500, status: 'INTERNAL', message: 'internal error' } });
    });
  };
}
