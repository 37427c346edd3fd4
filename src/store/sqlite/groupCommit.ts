import { NOOP_OBSERVER, type Observer } from '../../observation/observer';
import { deferred, type Deferred } from '../sql/deferred';
import type { SqliteDatabase } from './database';

/** Writes a store's queued rows; runs inside the group's transaction. */
export type QueuedWriter = () => void;

/**
 * Group commit for every store on one database: a store queues its rows in
 * memory and schedules its writer; one transaction per turn of the event
 * loop runs every scheduled writer. Under load one commit carries the task
 * rows and session turns of many requests, where each store committing on
 * its own paid a commit each. Each writer runs in its own savepoint, so a
 * store whose rows fail loses only its own batch.
 */
export interface GroupCommit {
  /**
   * Runs `writer` in the next group transaction (once, however often it is
   * scheduled before then). Resolves once that transaction has committed;
   * rejects with the writer's error if its rows could not be written.
   */
  schedule(writer: QueuedWriter): Promise<void>;
  /** Commits everything scheduled now (before a read that must see it, or before the database closes). */
  flush(): void;
}

type Scheduled = Deferred<void>;

/**
 * Creates the group commit of `db`. The composition root makes one per
 * database handle and hands it to every store on that database; two on one
 * handle would commit apart and lose the point. Each commit's duration goes
 * to `observer` (store write latency), when one listens.
 * @example
 * const group = createGroupCommit(db);
 * queue.push(row);
 * await group.schedule(writeQueuedRows);
 */
export function createGroupCommit(db: SqliteDatabase, observer: Observer = NOOP_OBSERVER): GroupCommit {
  let scheduled = new Map<QueuedWriter, Scheduled>();
  let timerSet = false;
  // better-sqlite3 builds a wrapper (five variants, their properties) per `db.transaction` call: the group's
  // transaction and each writer's savepoint are built once, not on every commit. Writers are each store's
  // one queue writer; the weak map lets a store that goes away take its savepoint with it.
  const savepoints = new WeakMap<QueuedWriter, () => void>();
  const savepointOf = (writer: QueuedWriter) => {
    let savepoint = savepoints.get(writer);
    if (!savepoint) {
      savepoint = db.transaction(writer);
      savepoints.set(writer, savepoint);
    }
    return savepoint;
  };
  const commitGroup = db.transaction((batch: Map<QueuedWriter, Scheduled>, failures: Map<QueuedWriter, unknown>) => {
    for (const writer of batch.keys()) {
      try {
        savepointOf(writer)();
      } catch (err) {
        failures.set(writer, err);
      }
    }
  });

  const flush = () => {
    timerSet = false;
    if (scheduled.size === 0) return;
    // A transaction of the dialect seam (`sql.ts`) is open across a turn: the group would land inside it.
    if (db.inTransaction) {
      timerSet = true;
      setImmediate(flush);
      return;
    }
    const batch = scheduled;
    scheduled = new Map();
    const failures = new Map<QueuedWriter, unknown>();
    const started = observer.active ? performance.now() : 0;
    try {
      commitGroup(batch, failures);
    } catch (err) {
      for (const writer of batch.keys()) failures.set(writer, err);
    }
    if (observer.active) observer.storeWrite(performance.now() - started);
    for (const [writer, { resolve, reject }] of batch) {
      if (failures.has(writer)) reject(failures.get(writer));
      else resolve();
    }
  };

  return {
    schedule(writer) {
      let entry = scheduled.get(writer);
      if (!entry) {
        entry = deferred<void>();
        scheduled.set(writer, entry);
        if (!timerSet) {
          timerSet = true;
          // On a closed database the writers fail and their callers hear it, rather than wait forever.
          setImmediate(flush);
        }
      }
      return entry.promise;
    },
    flush,
  };
}
