import path from 'node:path';
import type { ClusterSettings } from '../config/cluster';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import type { Observer } from '../observation/observer';
import type { Storage } from './index';
import type { TaskEventLog } from './taskEvents';
import { openPostgresStorage } from './postgres/storage';
import { redactedStorage } from './redacted';
import { openSqliteStorage } from './sqlite/storage';
import { createSqliteTaskEventLog } from './sqlite/taskEvents';
import { createSqliteTaskRows } from './sqlite/taskRows';
import type { TaskRowStores } from './taskRows';

/**
 * The node's storage as the composition root uses it: the stores, the A2A
 * task rows beside them and the database's health, on whichever database
 * `storage.url` chose. No database handle leaves it.
 */
export interface NodeStorage extends Storage {
  /** The A2A task and push-config rows (`taskRows.ts`): in the SQLite file, or PostgreSQL's, shared by every replica. */
  readonly taskRows: TaskRowStores;
  /** The A2A tasks' events and cancels: with PostgreSQL shared by every replica, else this process's (in the SQLite file). */
  readonly taskEvents: TaskEventLog;
}

/** Options of {@link openNodeStorage}. */
export interface NodeStorageOptions {
  /** `storage.url`: a postgres:// URL puts the stores on PostgreSQL; unset, everything is in the SQLite file. */
  url?: string;
  /** This replica among others on the PostgreSQL database (unused with SQLite). */
  cluster: ClusterSettings;
  dataDir: string;
  logger: Logger;
  clock: () => Date;
  /** The node's secrets: every write of text passes them (`redacted.ts`), the one place stored text is masked. */
  secrets: SecretRegistry;
  /** Told how long each group commit took (store write latency), on either database. */
  observer?: Observer;
  /** Turn timelines kept (`observability.timeline.tasks`). */
  timelinesKept?: number;
}

/**
 * Opens the stores where `storage.url` says: the one place the database is
 * chosen. SQLite: every store in `<dataDir>/lango.db`. PostgreSQL: every
 * store of `Stores` in the database (schemas applied under the migration
 * lock), the A2A task rows and their events there too; no SQLite file is
 * opened. Either way every store is behind the node's secrets (`redacted.ts`).
 * @example
 * const storage = await openNodeStorage({ url: config.storage.url, cluster: clusterSettings(config), dataDir, logger, clock, secrets });
 */
export async function openNodeStorage(options: NodeStorageOptions): Promise<NodeStorage> {
  if (!options.url) {
    const storage = openSqliteStorage({
      file: path.join(options.dataDir, 'lango.db'),
      logger: options.logger,
      clock: options.clock,
      backgroundCheckpoints: true,
      observer: options.observer,
      timelinesKept: options.timelinesKept,
    });
    const taskRows = createSqliteTaskRows({ db: storage.db, group: storage.group, logger: options.logger });
    const taskEvents = createSqliteTaskEventLog({ db: storage.db, group: storage.group, logger: options.logger });
    return {
      ...redactedStorage({ stores: storage.stores, taskRows, taskEvents }, options.secrets, options.logger),
      health: () => storage.health(),
      close: () => storage.close(),
    };
  }
  const postgres = await openPostgresStorage({
    url: options.url,
    cluster: options.cluster,
    logger: options.logger,
    clock: options.clock,
    observer: options.observer,
    timelinesKept: options.timelinesKept,
  });
  const { stores, taskRows, taskEvents } = postgres;
  return {
    ...redactedStorage({ stores, taskRows, taskEvents }, options.secrets, options.logger),
    health: () => postgres.health(),
    close: () => postgres.close(),
  };
}
