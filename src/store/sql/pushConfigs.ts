import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { pushConfigData, pushConfigOfRow, scopedKey, type PushConfigRows, type StoredPushConfig } from '../taskRows';
import type { Sql } from './sql';

/**
 * How other processes' saves reach this one: PostgreSQL's replicas tell
 * each other (`NOTIFY` on a channel, `../postgres/listener.ts`); one SQLite
 * process has nobody to tell.
 */
export interface SaveTidings {
  /** Tells the other replicas that `payload`'s task has a config now. */
  tell(sql: Sql, payload: string): Promise<void>;
  /** Calls `heard` with each payload another replica told. */
  onTold(heard: (payload: string) => void): void;
  /** Calls `lost` when tidings may have been missed (the listening connection came back). */
  onMissed(lost: () => void): void;
}

/** The push-config rows and the reload a purge needs. */
export type PushConfigStore = PushConfigRows & {
  /** Reloads which tasks have configs (after a purge deleted some). */
  reload(): Promise<void>;
};

/** Sets `delivery` in a config's JSON text: SQLite's `json_set`, PostgreSQL's `jsonb_set`. */
const setDelivery = (sql: Sql) =>
  sql.dialect === 'sqlite'
    ? `json_set(COALESCE(config_data, '{}'), '$.delivery', json(?))`
    : `jsonb_set(CAST(COALESCE(config_data, '{}') AS jsonb), '{delivery}', CAST(? AS jsonb))::text`;

/**
 * Push configs in `a2a_push_configs`. Which tasks may have a config is kept
 * in memory (loaded at first use, told of each save on another replica,
 * reloaded when tidings may have been missed), so the check made on every
 * state change of every task costs no query for the usual task without
 * webhooks, even when the config was set through another replica than the
 * one running the task.
 * @example
 * const pushConfigs = createPushConfigRows({ sql, logger });
 * await pushConfigs.save(scope, taskId, config, '1.0');
 */
export function createPushConfigRows(options: { sql: Sql; logger: Logger; tidings?: SaveTidings }): PushConfigStore {
  const { sql, logger, tidings } = options;
  const withConfigs = new Set<string>();
  /** Saves here, saves heard from other replicas, and reloads (which may find configs saved unheard). */
  let saves = 0;
  let loaded: Promise<void> | undefined;
  const loadAll = async () => {
    const found = await sql.all<{ tenant: string; owner: string; task_id: string }>(
      'SELECT DISTINCT tenant, owner, task_id FROM a2a_push_configs',
    );
    withConfigs.clear();
    for (const row of found) withConfigs.add(scopedKey(row, row.task_id));
    saves += 1;
  };
  const ensureLoaded = () =>
    (loaded ??= loadAll().catch((err) => {
      loaded = undefined;
      throw err;
    }));
  tidings?.onTold((payload) => {
    try {
      const [tenant, owner, taskId] = JSON.parse(payload) as [string, string, string];
      withConfigs.add(scopedKey({ tenant, owner }, taskId));
      saves += 1;
    } catch {
      // Not ours: nothing to note.
    }
  });
  tidings?.onMissed(() => {
    loadAll().catch((err) => logger.warn('reloading push config tasks failed', { error: errorMessage(err) }));
  });
  return {
    async save(scope, taskId, config, wireVersion) {
      await sql.run(
        `INSERT INTO a2a_push_configs (tenant, owner, task_id, config_id, config_data, protocol_version)
         VALUES (?, ?, ?, ?, ?, '1.0')
         ON CONFLICT (tenant, owner, task_id, config_id) DO UPDATE SET config_data = excluded.config_data`,
        [scope.tenant, scope.owner, taskId, config.id, pushConfigData(config, wireVersion)],
      );
      await tidings?.tell(sql, JSON.stringify([scope.tenant, scope.owner, taskId]));
      withConfigs.add(scopedKey(scope, taskId));
      saves += 1;
    },
    async load(scope, taskId) {
      await ensureLoaded();
      if (!withConfigs.has(scopedKey(scope, taskId))) return [];
      const found: StoredPushConfig[] = [];
      for (const row of await sql.all<{ config_id: string; config_data: string | null }>(
        'SELECT config_id, config_data FROM a2a_push_configs WHERE tenant = ? AND owner = ? AND task_id = ?',
        [scope.tenant, scope.owner, taskId],
      )) {
        try {
          found.push(pushConfigOfRow(scope.tenant, taskId, row.config_id, row.config_data));
        } catch (err) {
          logger.warn('unreadable push config skipped', { taskId, configId: row.config_id, error: String(err) });
        }
      }
      return found;
    },
    async delete(scope, taskId, configId) {
      const key = [scope.tenant, scope.owner, taskId];
      await sql.run('DELETE FROM a2a_push_configs WHERE tenant = ? AND owner = ? AND task_id = ? AND config_id = ?', [
        ...key,
        configId,
      ]);
      const left = await sql.get(
        'SELECT 1 AS one FROM a2a_push_configs WHERE tenant = ? AND owner = ? AND task_id = ?',
        key,
      );
      if (!left) withConfigs.delete(scopedKey(scope, taskId));
    },
    async hasAny(scope, taskId) {
      await ensureLoaded();
      return withConfigs.has(scopedKey(scope, taskId));
    },
    async recordDelivery(scope, taskId, configId, delivery) {
      await sql.run(
        `UPDATE a2a_push_configs SET config_data = ${setDelivery(sql)}
         WHERE tenant = ? AND owner = ? AND task_id = ? AND config_id = ?`,
        [JSON.stringify(delivery), scope.tenant, scope.owner, taskId, configId],
      );
    },
    get saves() {
      return saves;
    },
    reload: () => (loaded = loadAll()),
  };
}
