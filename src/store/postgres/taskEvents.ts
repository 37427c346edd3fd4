import type { QueryConfig } from 'pg';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import type { Redact } from '../../log/redactJson';
import {
  CancelHandlers,
  eventText,
  queueEvent,
  TaskEventFollowers,
  taskKeyText,
  type QueuedEvent,
  type TaskEventAppend,
  type TaskEventLog,
  type TaskEventRecord,
  type TaskKey,
  type TaskSnapshot,
} from '../taskEvents';
import { valuesList } from '../sql/dialect';
import { rows, rowStatements, type PgDatabase, type PgQueryable, type PgSchema } from './database';
import type { PgGroupCommit, PgQueuedWrite } from './groupCommit';
import type { PgListener } from './listener';

/**
 * The events of every task, numbered per task by the database, the latest
 * snapshot of each task (the task folded up to one of its events), and the
 * cancels asked for.
 * Events are text, not JSONB: nothing queries inside them, and JSONB refuses
 * the `\u0000` a client may put in a message. At most one terminal event per
 * task (the partial unique index): a running replica and the sweep that
 * finds it lost cannot both end a task.
 */
export const TASK_EVENTS_SCHEMA: PgSchema = {
  store: 'a2a_task_events',
  steps: [
    `CREATE TABLE a2a_task_events (
       tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL,
       event TEXT NOT NULL, terminal BOOLEAN NOT NULL, replica TEXT NOT NULL, at TIMESTAMPTZ NOT NULL,
       PRIMARY KEY (tenant, owner, task_id, seq));
     CREATE UNIQUE INDEX a2a_task_events_one_end ON a2a_task_events (tenant, owner, task_id) WHERE terminal;
     CREATE TABLE a2a_task_cancels (
       tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL,
       requested_by TEXT NOT NULL, requested_at TIMESTAMPTZ NOT NULL,
       PRIMARY KEY (tenant, owner, task_id));
     CREATE INDEX a2a_task_cancels_by_time ON a2a_task_cancels (requested_at);`,
    // The task as it stood after event `seq`, written in the same statement as that event: a follower reads it and the events after it.
    `CREATE TABLE a2a_task_snapshots (
       tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL, task TEXT NOT NULL,
       PRIMARY KEY (tenant, owner, task_id));`,
  ],
};

/** Woken with the keys of the tasks a committed batch wrote events for. */
export const TASK_EVENTS_CHANNEL = 'lango_task_events';
/** Told of each cancel asked for, so the replica running the task aborts it. */
export const TASK_CANCELS_CHANNEL = 'lango_task_cancels';

/** A NOTIFY payload must stay under 8000 bytes; a longer one says "any task" instead. */
const MAX_PAYLOAD = 7_000;
/** The payload meaning "any task": every follower re-reads, every recent cancel is re-read. */
const ANY = '*';
/** Events read per query by a follower. */
const PAGE = 500;
/** Replicas' clocks differ a little: cancels are re-read from this much before the connection was lost. */
const CLOCK_MARGIN_MS = 5_000;
/** A cancel received in the "any task" form is looked for among those this recent. */
const RECENT_CANCEL_MS = 10_000;

type Tuple = [tenant: string, owner: string, taskId: string];
const tupleOf = (key: TaskKey): Tuple => [key.tenant, key.owner, key.taskId];
const keyOf = ([tenant, owner, taskId]: Tuple): TaskKey => ({ tenant, owner, taskId });
/**
 * The payload naming `keys`, or {@link ANY} when it would be too long. Byte
 * length: PostgreSQL counts bytes.
 */
function payloadOf(keys: readonly TaskKey[]): string {
  const payload = JSON.stringify(keys.map(tupleOf));
  return Buffer.byteLength(payload) < MAX_PAYLOAD ? payload : ANY;
}

/** The keys a payload names, or `undefined` for "any task" (or a payload not ours). */
function keysOf(payload: string): TaskKey[] | undefined {
  if (payload === ANY) return undefined;
  try {
    const parsed = JSON.parse(payload) as unknown;
    if (!Array.isArray(parsed)) return undefined;
    return parsed
      .filter((t): t is Tuple => Array.isArray(t) && t.length === 3 && t.every((p) => typeof p === 'string'))
      .map(keyOf);
  } catch {
    return undefined;
  }
}

interface EventRow {
  seq: string;
  event: string;
  terminal: boolean;
}

/**
 * Takes the advisory lock of each task, in one order, for the rest of the
 * transaction: the sweep that ends a lost replica's task takes the same
 * lock, so a late event and the terminal one never commit side by side.
 */
export async function lockTasks(client: PgQueryable, keys: readonly TaskKey[]): Promise<void> {
  await client.query(lockTasksStatement(keys));
}

/** {@link lockTasks} as a statement of a group commit's write. */
export function lockTasksStatement(keys: readonly TaskKey[]): QueryConfig {
  return {
    name: 'a2a_lock_tasks',
    text: `SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM (SELECT k FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n) s`,
    values: [[...new Set(keys.map(taskKeyText))].sort()],
  };
}

/** Options of {@link createPgTaskEventLog}. */
export interface PgTaskEventLogOptions {
  db: PgDatabase;
  group: PgGroupCommit;
  /** This replica's listening connection: always on the cancels channel, on the events channel while following. */
  listener: PgListener;
  /** This replica's id, recorded on the events it writes and the cancels it asks for. */
  replicaId: string;
  logger: Logger;
  /** Masks known secret values in every event written (issue 11 G), as the task rows do. */
  redact?: Redact;
  /**
   * A follower re-reads this often even when nothing woke it (1 s unless
   * set): a guard for a notification lost in a way the listener cannot see.
   */
  safetyPollMs?: number;
}

/** An event's columns as a batch binds them (tenant, owner, task, seq, event, terminal), the snapshot (or null) last. */
const EVENT_TYPES = ['text', 'text', 'text', 'bigint', 'text', 'boolean', 'text'];

/**
 * The append of events, each a row (tenant, owner, task, seq, event,
 * terminal, snapshot or null; $1: this replica), a statement per run.
 */
const appendRows = rowStatements(
  'a2a_task_events_append',
  (events) => `WITH e(tenant, owner, task_id, seq, event, terminal, snapshot) AS ${valuesList(
    'postgres',
    EVENT_TYPES,
    events,
    2,
  )},
     appended AS (
       INSERT INTO a2a_task_events (tenant, owner, task_id, seq, event, terminal, replica, at)
       SELECT e.tenant, e.owner, e.task_id, e.seq, e.event, e.terminal, $1, now() FROM e
       WHERE NOT EXISTS (SELECT 1 FROM a2a_task_events t
         WHERE t.tenant = e.tenant AND t.owner = e.owner AND t.task_id = e.task_id AND t.terminal)
       ON CONFLICT DO NOTHING
       RETURNING tenant, owner, task_id, seq)
   INSERT INTO a2a_task_snapshots (tenant, owner, task_id, seq, task)
   SELECT e.tenant, e.owner, e.task_id, e.seq, e.snapshot
   FROM e JOIN appended a USING (tenant, owner, task_id, seq)
   WHERE e.snapshot IS NOT NULL
   ON CONFLICT (tenant, owner, task_id) DO UPDATE SET seq = excluded.seq, task = excluded.task
     WHERE a2a_task_snapshots.seq < excluded.seq`,
  (row: unknown[]) => row,
);

/** The group-commit write of `batch`: its tasks locked, its events (and newest snapshots) appended, one `NOTIFY`. */
function appendWrite(batch: QueuedEvent[], replicaId: string): PgQueuedWrite {
  const keys = batch.map((e) => e.key);
  const distinct = [...new Map(keys.map((k) => [taskKeyText(k), k])).values()];
  // One snapshot per task and statement (an upsert may not touch a row twice): the batch's last is the newest.
  const newest = new Map<string, QueuedEvent>();
  for (const e of batch) if (e.snapshot !== null) newest.set(taskKeyText(e.key), e);
  const snapshots = batch.map((e) => (e.snapshot !== null && newest.get(taskKeyText(e.key)) === e ? e.snapshot : null));
  return {
    statements: [
      lockTasksStatement(keys),
      // Each event under its generation: the primary key keeps one per generation (a second writer's is dropped),
      // the terminal check fences a finished task. A snapshot goes in with its event, in the same statement.
      ...appendRows(
        batch.map((e, i) => [e.key.tenant, e.key.owner, e.key.taskId, e.seq, e.event, e.terminal, snapshots[i]]),
        replicaId,
      ),
      {
        name: 'a2a_task_events_notify',
        text: 'SELECT pg_notify($1, $2)',
        values: [TASK_EVENTS_CHANNEL, payloadOf(distinct)],
      },
    ],
  };
}

/**
 * The events this replica has appended and not yet committed: queued for
 * the group commit, and counted by task so a reader here waits for them.
 */
class PendingEvents {
  private queue: QueuedEvent[] = [];
  /** Events appended and not yet committed, by task. */
  private readonly unwritten = new Map<string, number>();
  /** The one batch the group commit takes, however often it is scheduled before a group closes (it keys by identity). */
  private readonly takeQueued = () => {
    const batch = this.queue;
    this.queue = [];
    return appendWrite(batch, this.replicaId);
  };

  constructor(
    private readonly group: PgGroupCommit,
    private readonly replicaId: string,
    private readonly asText: (value: unknown) => string,
  ) {}

  /** Queues `record` for the next group; resolves once it commits. */
  append(key: TaskKey, record: TaskEventAppend): Promise<void> {
    queueEvent(this.queue, key, record, this.asText);
    const text = taskKeyText(key);
    this.unwritten.set(text, (this.unwritten.get(text) ?? 0) + 1);
    const committed = this.group.schedule(this.takeQueued);
    const done = () => {
      const left = (this.unwritten.get(text) ?? 1) - 1;
      if (left > 0) this.unwritten.set(text, left);
      else this.unwritten.delete(text);
    };
    committed.then(done, done);
    return committed;
  }

  /** Whether events of `key` appended here are not committed yet. */
  has(key: TaskKey): boolean {
    return this.unwritten.has(taskKeyText(key));
  }
}

/** The events of `key` after `after`, one page. */
async function readEvents(db: PgDatabase, key: TaskKey, after: number): Promise<TaskEventRecord[]> {
  return (
    await rows<EventRow>(
      db,
      {
        name: 'a2a_task_events_after',
        text: `SELECT seq, event, terminal FROM a2a_task_events
               WHERE tenant = $1 AND owner = $2 AND task_id = $3 AND seq > $4 ORDER BY seq LIMIT ${PAGE}`,
        values: [key.tenant, key.owner, key.taskId, after],
      },
      [],
    )
  ).map((row) => ({ seq: Number(row.seq), event: JSON.parse(row.event) as unknown, terminal: row.terminal }));
}

/** The latest snapshot of `key`, if one was written. */
async function readSnapshot(db: PgDatabase, key: TaskKey): Promise<TaskSnapshot | undefined> {
  const [found] = await rows<{ seq: string; task: string }>(db, {
    name: 'a2a_task_snapshot',
    text: 'SELECT seq, task FROM a2a_task_snapshots WHERE tenant = $1 AND owner = $2 AND task_id = $3',
    values: [key.tenant, key.owner, key.taskId],
  });
  return found
    ? ({ seq: Number(found.seq), task: JSON.parse(found.task) as unknown } satisfies TaskSnapshot)
    : undefined;
}

/** Records a cancel of `key` asked for by `replicaId` and tells every replica, in one statement. */
async function recordCancel(db: PgDatabase, key: TaskKey, replicaId: string): Promise<void> {
  await db.query(
    `WITH recorded AS (
       INSERT INTO a2a_task_cancels (tenant, owner, task_id, requested_by, requested_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (tenant, owner, task_id) DO UPDATE
         SET requested_by = excluded.requested_by, requested_at = excluded.requested_at
       RETURNING 1)
     SELECT pg_notify($5, $6) FROM recorded`,
    [key.tenant, key.owner, key.taskId, replicaId, TASK_CANCELS_CHANNEL, payloadOf([key])],
  );
}

/** Deletes the events, snapshots and cancels of `keys`. */
async function purgeEvents(db: PgDatabase, keys: readonly TaskKey[]): Promise<void> {
  if (keys.length === 0) return;
  const params = [keys.map((k) => k.tenant), keys.map((k) => k.owner), keys.map((k) => k.taskId)];
  const match = `(tenant, owner, task_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`;
  await db.query(`DELETE FROM a2a_task_events WHERE ${match}`, params);
  await db.query(`DELETE FROM a2a_task_snapshots WHERE ${match}`, params);
  await db.query(`DELETE FROM a2a_task_cancels WHERE ${match}`, params);
}

/**
 * Wires this replica's listener: events wake the followers of their tasks,
 * cancels reach the handlers here, and after a reconnect everyone re-reads
 * (followers their tasks, the handlers the cancels recorded meanwhile).
 */
function listenForTidings(
  options: Pick<PgTaskEventLogOptions, 'db' | 'listener'>,
  followers: TaskEventFollowers,
  cancels: CancelHandlers,
  log: Logger,
): void {
  const { db, listener } = options;
  listener.on(TASK_EVENTS_CHANNEL, (payload) => {
    const keys = keysOf(payload);
    if (keys) followers.wake(keys);
    else followers.wakeAll();
  });

  const tellCancel = (key: TaskKey) => cancels.tell(key);
  /** Tells the handlers of every cancel recorded since `since` (database time). */
  const replayCancels = async (since: Date) => {
    try {
      const found = await rows<{ tenant: string; owner: string; task_id: string }>(
        db,
        'SELECT tenant, owner, task_id FROM a2a_task_cancels WHERE requested_at >= $1',
        [since.toISOString()],
      );
      for (const row of found) tellCancel({ tenant: row.tenant, owner: row.owner, taskId: row.task_id });
    } catch (err) {
      log.warn('reading cancels failed', { error: errorMessage(err) });
    }
  };
  listener.on(TASK_CANCELS_CHANNEL, (payload) => {
    const keys = keysOf(payload);
    if (keys) keys.forEach(tellCancel);
    else void replayCancels(new Date(Date.now() - RECENT_CANCEL_MS));
  });
  listener.onReconnect((downSince) => {
    followers.wakeAll();
    if (cancels.size > 0) void replayCancels(new Date(downSince.getTime() - CLOCK_MARGIN_MS));
  });
}

/**
 * The task event log on PostgreSQL: events queued into the group commit and
 * written in one statement per batch with one `NOTIFY` naming the batch's
 * tasks; followers wake on it; cancels are a row and a `NOTIFY`.
 * @example
 * const events = createPgTaskEventLog({ db, group, listener, replicaId: 'a', logger });
 * await events.append(key, { event, terminal: false });
 * for await (const record of events.follow(key, { after: 0 })) send(record.event);
 */
export function createPgTaskEventLog(options: PgTaskEventLogOptions): TaskEventLog {
  const { db, group, listener, replicaId } = options;
  const log = options.logger.child({ component: 'task-events' });
  const safetyPollMs = options.safetyPollMs ?? 1_000;
  const followers = new TaskEventFollowers();
  const cancels = new CancelHandlers(log);
  const pending = new PendingEvents(group, replicaId, eventText(options.redact));
  listenForTidings(options, followers, cancels, log);

  const read = async (key: TaskKey, after: number): Promise<TaskEventRecord[]> => {
    if (pending.has(key)) await group.flush();
    return readEvents(db, key, after);
  };

  return {
    append: (key, record) => pending.append(key, record),
    read,
    snapshot: (key) => readSnapshot(db, key),
    async *follow(key, { after, signal }) {
      // This replica listens for task events only while it follows a task: idle ones are not woken by every batch.
      const held = listener.hold(TASK_EVENTS_CHANNEL);
      try {
        yield* followers.follow(key, {
          after,
          signal,
          read: (last) => read(key, last),
          page: PAGE,
          listening: held.listening,
          guardMs: safetyPollMs,
        });
      } finally {
        await held.release();
      }
    },
    requestCancel: (key) => recordCancel(db, key, replicaId),
    onCancel: (handler) => cancels.add(handler),
    purge: (keys) => purgeEvents(db, keys),
  };
}
