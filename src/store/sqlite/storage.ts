import type { Observer } from '../../observation/observer';
import type { Logger } from '../../log/logger';
import type { Storage, Stores } from '../index';
import { startBackgroundCheckpoints } from './checkpointer';
import { migrate, openDatabase, type SqliteDatabase } from './database';
import { createSqliteJobQueue } from './jobQueue';
import { sqliteHealth } from './health';
import { createGroupCommit, type GroupCommit } from './groupCommit';
import { createSqliteSql } from './sql';
import { DEFAULT_TIMELINES_KEPT } from '../timelines';
import { createSqliteTimelineStore } from './timelines';
import { createSqliteVectorStore } from './vectors';
import { STORE_SCHEMAS, createSqlStores } from '../sql/stores';

/** The embedded storage: one SQLite file, its group commit and every store on it. */
export interface SqliteStorage extends Storage {
  /** The handle, for the A2A task rows (their own store, built beside these in `store/open.ts`) and tests. */
  readonly db: SqliteDatabase;
  /** The one group commit of `db`, shared with the A2A task rows. */
  readonly group: GroupCommit;
}

/** Options of {@link openSqliteStorage}. */
export interface SqliteStorageOptions {
  /** The database file (`<dataDir>/lango.db`), or `:memory:`. */
  file: string;
  logger: Logger;
  clock: () => Date;
  /** Masks secret values in session messages before they are stored. */
  redact?: (text: string) => string;
  /** Checkpoints the WAL from a worker thread (the node: yes; a short-lived tool: no need). */
  backgroundCheckpoints?: boolean;
  /** Told how long each group commit took (store write latency). */
  observer?: Observer;
  /** Turn timelines kept, newest saved (`observability.timeline.tasks`; 200 when unset). */
  timelinesKept?: number;
}

/**
 * Opens the node's SQLite file (creating it), applies every store's schema
 * once and builds the stores on one handle and one group commit.
 * @example
 * const storage = openSqliteStorage({ file: path.join(dataDir, 'lango.db'), logger, clock: () => new Date() });
 * await storage.stores.sessions.list(OWNER);
 * await storage.close();
 */
export function openSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  const { logger, clock } = options;
  const db = openDatabase(options.file);
  try {
    const group = createGroupCommit(db, options.observer);
    const stopCheckpoints =
      options.backgroundCheckpoints && options.file !== ':memory:'
        ? startBackgroundCheckpoints({ db, file: options.file, logger })
        : undefined;
    // Vectors first: the knowledge store's embedding backlog reads `rag_vectors`.
    const vectors = createSqliteVectorStore({ db });
    for (const schema of STORE_SCHEMAS) migrate(db, schema.store, [...schema.sqlite]);
    const sql = createSqliteSql(db, group);
    const stores: Stores = {
      ...createSqlStores({ sql, clock, logger, redact: options.redact }),
      vectors,
      timelines: createSqliteTimelineStore({ db, group, clock, kept: options.timelinesKept ?? DEFAULT_TIMELINES_KEPT }),
      // After the cron store: a claim moves the job's row and queues its next fire time in one transaction.
      jobQueue: createSqliteJobQueue({ db, clock, logger }),
    };
    const health = sqliteHealth({ db, file: options.file, logger });
    let closed = false;
    return {
      db,
      group,
      stores,
      health: async () => health(),
      async close() {
        if (closed) return;
        closed = true;
        try {
          await stores.jobQueue.close();
          stores.timelines.flush();
          group.flush();
        } finally {
          await stopCheckpoints?.();
          db.close();
        }
      },
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
