import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import type { PushConfigRows } from '../../store/taskRows';
import { principalOfRequest } from './httpCall';
import { pageRouter } from './pageRouter';
import type { Pages } from './routes';

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

/**
 * @example
 * const pages = pushDeliveryPages({ rows: taskRows.pushConfigs, logger }); // a row of the route table, `caller`
 */
export function pushDeliveryPages(options: { rows: PushConfigRows; logger: Logger }): Pages {
  const routes = pageRouter({ name: 'PushDelivery', access: 'caller' });
  routes.get('/tasks/:taskId/pushNotificationConfigs/:configId/delivery', (req, res) => {
    const { taskId, configId } = req.params as { taskId: string; configId: string };
    void (async () => {
      // The scope the config was saved under: the caller's principal (`taskStore.ts` `scopeOf`).
      const scope = { tenant: '', owner: principalOfRequest(req).id };
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
  });
  return routes.pages();
}
