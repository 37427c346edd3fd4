import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { redactJsonText, type Redact } from '../log/redactJson';

/**
 * One A2A task as the stores name it: the SDK's tenant, the principal whose
 * task it is, and the task id (text: clients send ids longer than a UUID).
 */
export interface TaskKey {
  tenant: string;
  owner: string;
  taskId: string;
}

/**
 * One event of a task under its generation (the A2A 1.1 draft's `generation`,
 * issue 27): 1 for the event that created the task, then +1 per event, over
 * the task's whole life (every turn, whichever replica ran it).
 */
export interface TaskEventRecord {
  /** The task's generation after this event. */
  seq: number;
  /** The event as it went out on the stream (plain JSON data, already redacted). */
  event: unknown;
  /** True for the event that ends the task: a follower stops after it and nothing is written after it. */
  terminal: boolean;
}

/** One event to append under its generation, and optionally the task as it stands after it. */
export interface TaskEventAppend extends TaskEventRecord {
  /**
   * The task folded up to and including this event (plain JSON data), kept
   * as the task's {@link TaskSnapshot} under this event's number: a follower
   * starts from it and reads only the events after it, so its cost does not
   * grow with the answer streamed so far.
   */
  snapshot?: unknown;
}

/** The task as it stood after its event `seq` (the latest snapshot appended with one). */
export interface TaskSnapshot {
  seq: number;
  /** The task as plain JSON data, already redacted. */
  task: unknown;
}

/**
 * How long the events of an ended task are kept after its terminal event
 * (which stays: it fences late writers): a stream cut near the end resumes
 * within this window; after it the task is its row. The task rows' purge
 * prunes them on both databases; the card's generation extension states it
 * (`a2a/generation.ts`).
 */
export const ENDED_TASK_EVENTS_KEPT_MS = 5 * 60_000;

/**
 * A task's events, kept so that a stream can be followed from any of them
 * on (issue 16: from another replica; issue 27: a client resuming a cut
 * stream with `Last-Event-ID`): the replica running a task appends them;
 * any reader follows them from a generation on with no gap, and asks the
 * running replica to cancel. PostgreSQL shares them between replicas;
 * SQLite keeps them for its one process.
 */
export interface TaskEventLog {
  /**
   * Writes the event under its generation in this turn's group commit;
   * resolves once committed. The generation is the writer's (the one
   * replica running the task counts on from the generation the task had
   * when its turn began); the store keeps one event per generation: a
   * second event under a generation already stored is dropped, as is any
   * event after the task's terminal one (fencing).
   */
  append(key: TaskKey, record: TaskEventAppend): Promise<void>;
  /**
   * The task's events with `seq > after`, in order and with no gap, until
   * the terminal one (included) or until `signal` aborts. The events are
   * read after the wake-up is listening, so none committed meanwhile is missed.
   */
  follow(key: TaskKey, options: { after: number; signal?: AbortSignal }): AsyncIterable<TaskEventRecord>;
  /**
   * The task's events with `seq > after`, in order: at most a page (the
   * first 500). Events this process appended are committed first: a reader
   * never misses one its own process has already told a listener of.
   */
  read(key: TaskKey, after: number): Promise<TaskEventRecord[]>;
  /**
   * The task's latest snapshot, committed with its event: the events up to
   * its `seq` are folded into it, those after it are not.
   */
  snapshot(key: TaskKey): Promise<TaskSnapshot | undefined>;
  /** Records a cancel of the task and tells every replica; the one running the task hears it through {@link onCancel}. */
  requestCancel(key: TaskKey): Promise<void>;
  /**
   * Calls `handler` for every cancel requested on any replica (and, after
   * the wake-up connection was lost and came back, for each cancel recorded
   * meanwhile). Returns the function that removes it.
   */
  onCancel(handler: (key: TaskKey) => void): () => void;
  /** Deletes the events, snapshots and cancel records of the tasks (purged with the task rows). */
  purge(keys: readonly TaskKey[]): Promise<void>;
}

/**
 * A task's key as one string (the followers' and the queues' map key, PostgreSQL's wake-up lists and advisory
 * locks): `\u0001` never starts or ends a part we join.
 */
export const taskKeyText = (key: TaskKey) => `${key.tenant}\u0001${key.owner}\u0001${key.taskId}`;

/**
 * The handlers of cancels asked for (`TaskEventLog.onCancel`): each told
 * in turn, one that throws logged and passed over.
 */
export class CancelHandlers {
  private readonly handlers = new Set<(key: TaskKey) => void>();

  constructor(private readonly log: Logger) {}

  /** Adds `handler`; returns the function that removes it. */
  add(handler: (key: TaskKey) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Whether anyone listens. */
  get size(): number {
    return this.handlers.size;
  }

  /** Tells every handler of a cancel of `key`. */
  tell(key: TaskKey): void {
    for (const handler of this.handlers) {
      try {
        handler(key);
      } catch (err) {
        this.log.warn('cancel handler failed', { taskId: key.taskId, error: errorMessage(err) });
      }
    }
  }
}

/** What a store keeps of an event or snapshot: its JSON text, with the secrets the node knows masked. */
export const eventText =
  (redact?: Redact) =>
  (value: unknown): string => {
    const text = JSON.stringify(value);
    return redact ? redactJsonText(text, redact) : text;
  };

/** An event appended and waiting for its store's group commit, its texts already masked. */
export interface QueuedEvent {
  key: TaskKey;
  /** The task's generation after the event. */
  seq: number;
  event: string;
  terminal: boolean;
  /** The task after this event, as text; null when none was given (or a later event of the batch carries a newer one). */
  snapshot: string | null;
}

/**
 * Queues `record` for `key` unless the task's terminal event is queued already: nothing follows a task's end, and
 * one queued in this batch ends it here already. `asText` is the store's JSON text with secrets masked.
 */
export function queueEvent(
  queue: QueuedEvent[],
  key: TaskKey,
  record: TaskEventAppend,
  asText: (value: unknown) => string,
): void {
  const text = taskKeyText(key);
  if (queue.some((e) => e.terminal && taskKeyText(e.key) === text)) return;
  queue.push({
    key,
    seq: record.seq,
    event: asText(record.event),
    terminal: record.terminal,
    snapshot: record.snapshot === undefined ? null : asText(record.snapshot),
  });
}

/** How {@link TaskEventFollowers.follow} reads and waits. */
export interface FollowOptions {
  after: number;
  signal?: AbortSignal;
  /** The task's events after a generation: at most `page` of them. */
  read: (after: number) => Promise<TaskEventRecord[]>;
  page: number;
  /** Resolves once wake-ups can arrive (PostgreSQL's `LISTEN`): the first read waits for it. */
  listening?: Promise<unknown>;
  /** Reads again after this long without a wake-up (a guard against one lost on the way); none: waits for one. */
  guardMs?: number;
}

/**
 * Who follows which task's events on this process, and the one follow loop
 * both databases run: read after the last event, yield, and wait for a
 * wake-up when the log has nothing newer. A store wakes a task's followers
 * once events of it are committed (its own commit, or another replica's
 * notification).
 * @example
 * const followers = new TaskEventFollowers();
 * followers.wake([key]); // after the commit that wrote key's events
 * for await (const record of followers.follow(key, { after: 0, read: (after) => read(key, after), page: 500 })) send(record);
 */
export class TaskEventFollowers {
  private readonly wakers = new Map<string, Set<() => void>>();

  /** Wakes the followers of these tasks. */
  wake(keys: readonly TaskKey[]): void {
    for (const text of new Set(keys.map(taskKeyText))) for (const waker of this.wakers.get(text) ?? []) waker();
  }

  /** Wakes every follower (a notification that names no task, or a reconnected listener). */
  wakeAll(): void {
    for (const set of this.wakers.values()) for (const waker of set) waker();
  }

  /** The task's events after `options.after`, in order, until the terminal one or until the signal aborts. */
  async *follow(key: TaskKey, options: FollowOptions): AsyncGenerator<TaskEventRecord> {
    const { signal, read, page, guardMs } = options;
    const text = taskKeyText(key);
    /** Set by a wake-up: the next read must happen even if the last one found nothing. */
    const wakeUp = { pending: false };
    let resume: (() => void) | undefined;
    const waker = () => {
      wakeUp.pending = true;
      resume?.();
    };
    let set = this.wakers.get(text);
    if (!set) this.wakers.set(text, (set = new Set()));
    set.add(waker);
    const onAbort = () => resume?.();
    signal?.addEventListener('abort', onAbort);
    try {
      // Listening first, then reading: an event committed between the two is either read or wakes us.
      if (options.listening)
        await Promise.race([
          options.listening,
          new Promise<void>((resolve) => {
            resume = resolve;
            if (signal?.aborted) resolve();
          }),
        ]);
      let last = options.after;
      while (!signal?.aborted) {
        wakeUp.pending = false;
        const records = await read(last);
        for (const record of records) {
          last = record.seq;
          yield record;
          if (record.terminal) return;
        }
        if (records.length === page || wakeUp.pending || signal?.aborted) continue;
        await new Promise<void>((resolve) => {
          const timer = guardMs === undefined ? undefined : setTimeout(resolve, guardMs);
          resume = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        resume = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      set.delete(waker);
      if (set.size === 0) this.wakers.delete(text);
    }
  }
}
