import type { PoolClient } from 'pg';
import { NOOP_OBSERVER, type Observer } from '../../observe/observer';
import type { PgDatabase } from './database';

/** Writes rows on the group's client, inside its transaction. */
export type PgQueuedWriter = (client: PoolClient) => Promise<void>;

/**
 * Takes a store's queued rows, at the moment the group closes, and returns
 * the writer of exactly those: rows queued while the group commits belong to
 * the next group, and their callers hear that group's outcome.
 */
export type PgQueuedBatch = () => PgQueuedWriter;

/**
 * Group commit on PostgreSQL, as SQLite's (`../sqlite/groupCommit.ts`): a
 * store queues its rows and schedules its writer; one transaction per turn
 * of the event loop runs every scheduled writer, each in its own savepoint.
 * One commit per row was far too slow on a database across a socket. While
 * a group commits, the next one gathers; they commit one after another, so
 * writes from one process land in the order they were scheduled.
 */
export interface PgGroupCommit {
  /** Runs the writer `batch` returns when the next group closes; resolves once that group commits, rejects with the writer's error. */
  schedule(batch: PgQueuedBatch): Promise<void>;
  /** Resolves once everything scheduled before the call has committed (or failed). */
  flush(): Promise<void>;
}

interface Scheduled {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Creates the group commit of `db`: one per pool, shared by every store on it; each commit's duration goes to `observer`. */
export function createPgGroupCommit(db: PgDatabase, observer: Observer = NOOP_OBSERVER): PgGroupCommit {
  let scheduled = new Map<PgQueuedBatch, Scheduled>();
  let timerSet = false;
  /** The commit under way (or the last one): the next waits for it. */
  let committing: Promise<void> = Promise.resolve();

  const commit = async (batch: Map<PgQueuedWriter, Scheduled>) => {
    const failures = new Map<PgQueuedWriter, unknown>();
    const started = observer.active ? performance.now() : 0;
    let client: PoolClient | undefined;
    try {
      client = await db.connect();
      await client.query('BEGIN');
      // A lone writer needs no savepoint: its failure is the whole group's, and it is the whole group.
      const savepoints = batch.size > 1;
      for (const writer of batch.keys()) {
        if (savepoints) await client.query('SAVEPOINT queued_writer');
        try {
          await writer(client);
          if (savepoints) await client.query('RELEASE SAVEPOINT queued_writer');
        } catch (err) {
          failures.set(writer, err);
          await client.query(savepoints ? 'ROLLBACK TO SAVEPOINT queued_writer' : 'ROLLBACK');
        }
      }
      if (savepoints || failures.size === 0) await client.query('COMMIT');
    } catch (err) {
      await client?.query('ROLLBACK').catch(() => {});
      for (const writer of batch.keys()) failures.set(writer, err);
    } finally {
      client?.release();
    }
    if (observer.active) observer.storeWrite(performance.now() - started);
    for (const [writer, { resolve, reject }] of batch) {
      if (failures.has(writer)) reject(failures.get(writer));
      else resolve();
    }
  };

  const flush = (): Promise<void> => {
    timerSet = false;
    if (scheduled.size > 0) {
      // Each store takes its queued rows now, synchronously: what is queued from here on is the next group's.
      const batch = new Map([...scheduled].map(([take, entry]) => [take(), entry]));
      scheduled = new Map();
      committing = committing.then(() => commit(batch));
    }
    return committing;
  };

  return {
    schedule(take) {
      let entry = scheduled.get(take);
      if (!entry) {
        let resolve!: () => void;
        let reject!: (err: unknown) => void;
        const promise = new Promise<void>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        entry = { promise, resolve, reject };
        scheduled.set(take, entry);
        if (!timerSet) {
          timerSet = true;
          setImmediate(() => void flush());
        }
      }
      return entry.promise;
    },
    flush,
  };
}
