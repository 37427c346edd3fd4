import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import type { StoreHealth } from '../index';
import type { PgDatabase } from './database';

/**
 * How long a health check waits for the pool (a connection, then `SELECT 1`):
 * a database that is down refuses at once, one cut off by the network
 * answers nothing, and a probe must hear "unready" well within the 5 s a
 * balancer gives it.
 */
export const HEALTH_TIMEOUT_MS = 2_000;

/**
 * The health of the PostgreSQL database as this replica's pool sees it: a
 * `SELECT 1` through the pool, answered within {@link HEALTH_TIMEOUT_MS}.
 * Checks asked for while one runs share it, so probes arriving together
 * during an outage do not pile up queries; the state is logged when it
 * changes (the probe only hears a fixed phrase).
 * @example
 * const health = pgHealth({ db, logger });
 * (await health()).ok;
 */
export function pgHealth(options: { db: PgDatabase; logger: Logger; timeoutMs?: number }): () => Promise<StoreHealth> {
  const { db } = options;
  const log = options.logger.child({ component: 'store-health' });
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  let running: Promise<StoreHealth> | undefined;
  let wasOk = true;
  const check = async (): Promise<StoreHealth> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<StoreHealth>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, problem: 'timed out' }), timeoutMs);
      timer.unref();
    });
    const asked = db.query('SELECT 1').then(
      (): StoreHealth => ({ ok: true }),
      (err: unknown): StoreHealth => {
        if (wasOk) log.warn('the database does not answer', { error: errorMessage(err) });
        return { ok: false, problem: 'unavailable' };
      },
    );
    try {
      const health = await Promise.race([asked, timedOut]);
      if (wasOk && !health.ok && health.problem === 'timed out')
        log.warn('the database does not answer', { error: `no answer within ${timeoutMs} ms` });
      else if (!wasOk && health.ok) log.info('the database answers again');
      wasOk = health.ok;
      return health;
    } finally {
      clearTimeout(timer);
    }
  };
  return () => (running ??= check().finally(() => (running = undefined)));
}
