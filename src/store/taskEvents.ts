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
