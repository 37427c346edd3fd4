import type { ClusterSettings } from '../../config/cluster';
import type { Logger } from '../../log/logger';
import type { Observer } from '../../observation/observer';
import type { Storage, Stores } from '../index';
import type { JobQueue } from '../jobQueue';
import { CLUSTER_SCHEMA, createPgReplicaView, startHeartbeat } from './cluster';
import { migrate, openPgDatabase, type PgDatabase, type PgSchema } from './database';
import { createPgGroupCommit, type PgGroupCommit } from './groupCommit';
import { pgHealth } from './health';
import { JOB_QUEUE_CHANNEL, migrateJobQueue, openPgJobQueue } from './jobQueue';
import { createPgSql } from './sql';
import { createPgVectorStore, preparePgvector, VECTOR_SCHEMA } from './vectors';
import type { TaskEventLog } from '../taskEvents';
import type { PushConfigRows, TaskRows } from '../taskRows';
import { createPgTaskRows, PUSH_CONFIGS_CHANNEL, TASK_ROWS_SCHEMA } from './taskRows';
import { createPgListener } from './listener';
import { SEND_KEYS_SCHEMA } from './sendKeys';
import { createPgTaskEventLog, TASK_CANCELS_CHANNEL, TASK_EVENTS_SCHEMA } from './taskEvents';
import { DEFAULT_TIMELINES_KEPT } from '../timelines';
import { createPgTimelineStore, TIMELINE_SCHEMA } from './timelines';
import { createSqlStores } from '../sql/stores';
import type { StoreSchema } from '../sql/sql';
import { EXEC_JOB_SCHEMA } from '../sql/execJobs';
import { GRAPH_SCHEMA } from '../sql/graph';
import { BACKGROUND_SCHEMA, CRON_SCHEMA, WORKFLOW_SCHEMA } from '../sql/jobs';
import { INQUIRY_SCHEMA, KNOWLEDGE_SCHEMA } from '../sql/knowledge';
import { LEDGER_SCHEMA } from '../sql/ledger';
import { MEMORY_SCHEMA } from '../sql/memory';
import { NODE_SCHEMA } from '../sql/nodeIdentity';
import { SESSION_SCHEMA } from '../sql/sessions';
import { VAULT_SCHEMA } from '../sql/vault';

/** A store's steps on PostgreSQL. */
const onPostgres = (schema: StoreSchema): PgSchema => ({ store: schema.store, steps: [...schema.postgres] });

/** Every store's schema, in the order they are applied (the cluster's after the job stores', whose rows it names). */
export const POSTGRES_SCHEMAS: readonly PgSchema[] = [
  onPostgres(NODE_SCHEMA),
  onPostgres(SESSION_SCHEMA),
  onPostgres(MEMORY_SCHEMA),
  VECTOR_SCHEMA,
  onPostgres(KNOWLEDGE_SCHEMA),
  onPostgres(INQUIRY_SCHEMA),
  onPostgres(GRAPH_SCHEMA),
  onPostgres(VAULT_SCHEMA),
  onPostgres(LEDGER_SCHEMA),
  onPostgres(CRON_SCHEMA),
  onPostgres(BACKGROUND_SCHEMA),
  onPostgres(WORKFLOW_SCHEMA),
  onPostgres(EXEC_JOB_SCHEMA),
  CLUSTER_SCHEMA,
  TASK_ROWS_SCHEMA,
  TASK_EVENTS_SCHEMA,
  TIMELINE_SCHEMA,
  SEND_KEYS_SCHEMA,
];

/** The PostgreSQL storage: one pool, its group commit and every store on it. */
export interface PostgresStorage extends Storage {
  readonly db: PgDatabase;
  readonly group: PgGroupCommit;
  /** The A2A tasks' events and cancels, shared by every replica (woken by this replica's LISTEN connection). */
  readonly taskEvents: TaskEventLog;
  /** The A2A task and push-config rows every replica reads and writes. */
  readonly taskRows: { readonly tasks: TaskRows; readonly pushConfigs: PushConfigRows };
}

/** Options of {@link openPostgresStorage}. */
export interface PostgresStorageOptions {
  /** `storage.url`: `postgres://user:password@host:port/database`. */
  url: string;
  logger: Logger;
  clock: () => Date;
  /** Masks secret values in session messages before they are stored. */
  redact?: (text: string) => string;
  /** This replica: its id on the rows it runs, its heartbeat and the lease after which a silent replica is lost. */
  cluster: ClusterSettings;
  /** Told how long each group commit took (store write latency). */
  observer?: Observer;
  /** Connections in the pool (10 when unset). */
  maxConnections?: number;
  /** False: vectors stay bytes searched in each replica's memory even where pgvector exists (default true). */
  pgvector?: boolean;
  /** Turn timelines kept, newest saved, of all replicas together (`observability.timeline.tasks`; 200 when unset). */
  timelinesKept?: number;
}

/**
 * Applies every store's schema on `url` under the migration advisory lock
 * (`lango migrate`; also the first thing {@link openPostgresStorage} does), then
 * the job queue's schema and queues under its own lock.
 * Resolves with how many steps ran.
 */
export async function migratePostgres(url: string): Promise<number> {
  const db = openPgDatabase(url, { max: 1 });
  try {
    const applied = await migrate(db, [...POSTGRES_SCHEMAS]);
    await preparePgvector(db);
    await migrateJobQueue(db);
    return applied;
  } finally {
    await db.end();
  }
}

/**
 * Connects to PostgreSQL, applies the schemas (replicas starting together
 * take turns), starts this replica's heartbeat (which also fails the rows of
 * replicas lost past the lease) and builds the stores on one pool and one
 * group commit.
 * @example
 * const storage = await openPostgresStorage({ url, cluster: clusterSettings(config), logger, clock: () => new Date() });
 * await storage.stores.sessions.list(OWNER);
 * await storage.close();
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  const { clock, logger } = options;
  const db = openPgDatabase(options.url, { max: options.maxConnections });
  let pgvector = false;
  try {
    await migrate(db, [...POSTGRES_SCHEMAS]);
    if (options.pgvector !== false) {
      const state = await preparePgvector(db);
      pgvector = state.searchable;
      if (state.searchable) logger.info('vectors searched in the database (pgvector)');
      else
        logger[state.missing === 'privilege' ? 'warn' : 'info']("vectors searched in each replica's memory", {
          reason: state.reason,
        });
    }
  } catch (err) {
    await db.end().catch(() => {});
    throw err;
  }
  const { cluster } = options;
  const replica = { replicaId: cluster.replicaId, leaseMs: cluster.leaseMs };
  // The group commit's own pipelined connection: a group's statements go out together, and no reader waits behind them.
  const writer = openPgDatabase(options.url, { max: 1, pipeline: true });
  const group = createPgGroupCommit(writer, options.observer);
  const listener = createPgListener({
    url: options.url,
    // The task events channel is listened on only while a follower waits on it (`taskEvents.ts`).
    channels: [TASK_CANCELS_CHANNEL, PUSH_CONFIGS_CHANNEL, JOB_QUEUE_CHANNEL],
    logger,
    observer: options.observer,
  });
  const taskEvents = createPgTaskEventLog({
    db,
    group,
    listener,
    replicaId: cluster.replicaId,
    logger,
    redact: options.redact,
  });
  const sql = createPgSql(db, group);
  const taskRows = createPgTaskRows({ db, sql, group, listener, logger, replica, redact: options.redact });
  let stopHeartbeat: () => Promise<void>;
  try {
    stopHeartbeat = await startHeartbeat({
      db,
      cluster,
      logger,
      clock,
      failLostTasks: taskRows.failLostReplicaTasks,
    });
  } catch (err) {
    await listener.close();
    await writer.end().catch(() => {});
    await db.end().catch(() => {});
    throw err;
  }
  let jobQueue: JobQueue;
  try {
    jobQueue = await openPgJobQueue({ db, listener, logger });
  } catch (err) {
    await stopHeartbeat().catch(() => {});
    await listener.close();
    await writer.end().catch(() => {});
    await db.end().catch(() => {});
    throw err;
  }
  const stores: Stores = {
    ...createSqlStores({ sql, clock, logger, redact: options.redact, replica }),
    vectors: createPgVectorStore({ db, pgvector }),
    timelines: createPgTimelineStore({
      db,
      group,
      replicaId: cluster.replicaId,
      clock,
      kept: options.timelinesKept ?? DEFAULT_TIMELINES_KEPT,
    }),
    replicas: createPgReplicaView({ db, scope: replica }),
    jobQueue,
  };
  let closed: Promise<void> | undefined;
  return {
    db,
    group,
    stores,
    health: pgHealth({ db, logger }),
    taskEvents,
    taskRows: { tasks: taskRows.tasks, pushConfigs: taskRows.pushConfigs },
    close() {
      closed ??= (async () => {
        try {
          stores.timelines.flush();
          await group.flush();
          await jobQueue.close();
          await stopHeartbeat();
        } finally {
          await listener.close();
          await writer.end();
          await db.end();
        }
      })();
      return closed;
    },
  };
}
