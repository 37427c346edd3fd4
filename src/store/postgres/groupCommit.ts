import type { PoolClient, QueryConfig, QueryResult } from 'pg';
import { NOOP_OBSERVER, type Observer } from '../../observation/observer';
import { deferred, type Deferred } from '../sql/deferred';
import type { PgDatabase } from './database';

/**
 * A store's queued rows as statements, run inside the group's transaction in
 * this order. No statement depends on an earlier one's result, so the whole
 * group is sent at once (pipelined) and answered in one round trip.
 */
export interface PgQueuedWrite {
  statements: QueryConfig[];
  /** Told each statement's result once the group has committed (e.g. numbers the database handed out). */
  committed?(results: QueryResult[]): void;
}

/**
 * Takes a store's queued rows, at the moment the group closes, and returns
 * the write of exactly those: rows queued while the group commits belong to
 * the next group, and their callers hear that group's outcome.
 */
export type PgQueuedBatch = () => PgQueuedWrite;

/**
 * Group commit on PostgreSQL, as SQLite's (`../sqlite/groupCommit.ts`): a
 * store queues its rows and schedules its write; one transaction runs every
 * scheduled write. One commit per row was far too slow on a database across
 * a socket, and so was one round trip per statement: the group's BEGIN,
 * statements and COMMIT go out together on a pipelined connection. While a
 * group commits the next one gathers, and it closes when that commit ends
 * (or at the end of the event-loop turn when none is under way): under load
 * the groups grow instead of queueing. A group that gathered during a commit
 * but is still small holds on (see {@link FULL_GROUP}). Groups commit one
 * after another, so writes from one process land in the order they were
 * scheduled.
 */
export interface PgGroupCommit {
  /** Runs the write `batch` returns when the next group closes; resolves once that group commits, rejects with the write's error. */
  schedule(batch: PgQueuedBatch): Promise<void>;
  /** Resolves once everything scheduled before the call has committed (or failed). */
  flush(): Promise<void>;
}

/**
 * Writes (scheduled calls) that make a group worth its commit. A group that
 * gathered while a commit ran (writes are arriving concurrently) but has
 * fewer holds on until it has this many, for at most as long as that commit
 * took. Each commit costs the database and the replica about as much as a
 * dozen rows, and a replica sharing its cores with others (three replicas on
 * two cores in the bench) otherwise commits groups of two or three requests:
 * three times the commits of one replica for the same load. The hold is
 * bounded by the commit's own duration, so it adds little where commits are
 * quick, and a lone caller (nothing gathered during its commit) never waits.
 * Measured in scripts/bench/analysis.md.
 */
const FULL_GROUP = 8;

type Scheduled = Deferred<void>;

/** How one pipelined attempt at a group ended. */
type Attempt =
  | { committed: true; results: Map<PgQueuedWrite, QueryResult[]> }
  /** `culprit` undefined: the transaction itself failed (connection, BEGIN, COMMIT), not one write's statement. */
  | { committed: false; culprit?: PgQueuedWrite; error: unknown };

/**
 * Sends BEGIN, every write's statements and COMMIT without waiting between
 * them, in one write. A failing statement aborts the transaction: the statements after it
 * fail too and COMMIT rolls back, so the first failure names the culprit.
 */
async function attempt(client: PoolClient, writes: PgQueuedWrite[]): Promise<Attempt> {
  // Corked, the whole group leaves in one write to the socket rather than one per statement.
  const { stream } = client.connection;
  stream.cork();
  let begin: Promise<unknown>, sent: Array<Array<Promise<QueryResult>>>, commit: Promise<unknown>;
  try {
    begin = client.query('BEGIN');
    sent = writes.map((write) => write.statements.map((statement) => client.query(statement)));
    commit = client.query('COMMIT');
  } finally {
    stream.uncork();
  }
  const [began, ...settled] = await Promise.allSettled([begin, ...sent.flat(), commit]);
  const ended = settled.pop()!;
  if (began.status === 'rejected') return { committed: false, error: began.reason };
  let index = 0;
  const results = new Map<PgQueuedWrite, QueryResult[]>();
  for (const write of writes) {
    const own = settled.slice(index, index + write.statements.length);
    index += write.statements.length;
    const failed = own.find((r) => r.status === 'rejected');
    if (failed) return { committed: false, culprit: write, error: failed.reason };
    results.set(
      write,
      own.map((r) => (r as PromiseFulfilledResult<QueryResult>).value),
    );
  }
  if (ended.status === 'rejected') return { committed: false, error: ended.reason };
  return { committed: true, results };
}

/**
 * Creates the group commit on `db`, a pool of pipelined connections
 * (`openPgDatabase(url, { pipeline: true })`; one connection is enough, as
 * groups commit one at a time); each commit's duration goes to `observer`.
 */
export function createPgGroupCommit(db: PgDatabase, observer: Observer = NOOP_OBSERVER): PgGroupCommit {
  let scheduled = new Map<PgQueuedBatch, Scheduled>();
  /** Writes scheduled into the gathering group, and when its first was. */
  let gathered = 0;
  let openedAt = 0;
  let timerSet = false;
  /** The timer of a small group holding on after a commit (see {@link FULL_GROUP}). */
  let hold: NodeJS.Timeout | undefined;
  /** The commit under way: the next group gathers until it ends. */
  let committing: Promise<void> | undefined;
  /** How long the last commit took, in ms: the most a small group holds on. */
  let lastCommitMs = 0;
  /** Whether writes were scheduled while the last commit ran (before its callers heard). */
  let arrivedDuringCommit = false;

  /**
   * Commits the group's writes; a write whose statement fails is left out
   * and the rest are tried again, so one store's bad row fails only its
   * callers. Resolves once every caller has its outcome.
   */
  const commit = async (group: Map<PgQueuedWrite, Scheduled>) => {
    const started = performance.now();
    let gatheredDuring: number | undefined;
    let pending = [...group.keys()];
    while (pending.length > 0) {
      let outcome: Attempt;
      let client: PoolClient | undefined;
      try {
        client = await db.connect();
        outcome = await attempt(client, pending);
      } catch (err) {
        outcome = { committed: false, error: err };
      }
      // Counted before any caller hears its outcome: a caller writing again as it hears is not "concurrent".
      gatheredDuring ??= gathered;
      // A connection whose transaction did not commit is not trusted for the next group.
      client?.release(outcome.committed ? undefined : true);
      if (outcome.committed) {
        for (const [write, results] of outcome.results) {
          const { resolve, reject } = group.get(write)!;
          try {
            write.committed?.(results);
            resolve();
          } catch (err) {
            reject(err);
          }
        }
        break;
      }
      const failed = outcome.culprit ? [outcome.culprit] : pending;
      for (const write of failed) group.get(write)!.reject(outcome.error);
      pending = pending.filter((write) => !failed.includes(write));
    }
    lastCommitMs = performance.now() - started;
    arrivedDuringCommit = (gatheredDuring ?? 0) > 0;
    if (observer.active) {
      const statements = [...group.keys()].reduce((sum, write) => sum + write.statements.length, 0);
      observer.storeWrite(lastCommitMs, statements);
    }
  };

  /**
   * Closes the gathering group and commits it, unless a commit is under way
   * (its end closes the group). `afterCommit`: called as a commit ended; a
   * group that had writes gathered during that commit holds on while small.
   */
  const close = (afterCommit = false) => {
    timerSet = false;
    clearTimeout(hold);
    hold = undefined;
    if (committing || scheduled.size === 0) return;
    const holdFor = openedAt + lastCommitMs - performance.now();
    if (afterCommit && arrivedDuringCommit && gathered < FULL_GROUP && holdFor >= 1) {
      hold = setTimeout(close, holdFor);
      return;
    }
    // Each store takes its queued rows now, synchronously: what is queued from here on is the next group's.
    const group = new Map([...scheduled].map(([take, entry]) => [take(), entry]));
    scheduled = new Map();
    gathered = 0;
    committing = commit(group).finally(() => {
      committing = undefined;
      close(true);
    });
  };

  return {
    schedule(take) {
      if (gathered === 0) openedAt = performance.now();
      gathered += 1;
      // A holding group closes once full (rows queued in this turn still join it).
      if (hold && gathered >= FULL_GROUP) {
        clearTimeout(hold);
        hold = undefined;
        timerSet = true;
        setImmediate(close);
      }
      let entry = scheduled.get(take);
      if (!entry) {
        entry = deferred<void>();
        scheduled.set(take, entry);
        if (!timerSet && !committing && !hold) {
          timerSet = true;
          setImmediate(close);
        }
      }
      return entry.promise;
    },
    async flush() {
      const waiting = [...scheduled.values()].map((entry) => entry.promise.catch(() => {}));
      const underWay = committing;
      close();
      await underWay;
      // The group that gathered during that commit may hold on after it (see FULL_GROUP): the flush closes it now.
      if (waiting.length > 0) close();
      await Promise.all(waiting);
    },
  };
}
