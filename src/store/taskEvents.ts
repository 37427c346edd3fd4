/**
 * One A2A task as the stores name it: the SDK's tenant, the principal whose
 * task it is, and the task id (text: clients send ids longer than a UUID).
 */
export interface TaskKey {
  tenant: string;
  owner: string;
  taskId: string;
}

/** One event of a task, numbered from 1 in the order it was written. */
export interface TaskEventRecord {
  seq: number;
  /** The event as it went out on the stream (plain JSON data, already redacted). */
  event: unknown;
  /** True for the event that ends the task: a follower stops after it and nothing is written after it. */
  terminal: boolean;
}

/** One event to append, and optionally the task as it stands after it. */
export interface TaskEventAppend extends Omit<TaskEventRecord, 'seq'> {
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
 * A task's events shared by the replicas of one node (issue 16): the replica
 * running a task appends them; any replica follows them from a sequence
 * number on with no gap, and asks the running replica to cancel. Only the
 * PostgreSQL storage has one; a single SQLite process keeps its streams in
 * memory.
 */
export interface TaskEventLog {
  /**
   * Writes the event in this turn's group commit as the task's next one,
   * numbered by the database (so a task answered after `input-required` on
   * another replica goes on numbering where it stopped); resolves once
   * committed. Fenced: once a terminal event is written for the task, later
   * events are dropped.
   */
  append(key: TaskKey, record: TaskEventAppend): Promise<void>;
  /**
   * The task's events with `seq > after`, in order and with no gap, until
   * the terminal one (included) or until `signal` aborts. The events are
   * read after the wake-up is listening, so none committed meanwhile is missed.
   */
  follow(key: TaskKey, options: { after: number; signal?: AbortSignal }): AsyncIterable<TaskEventRecord>;
  /** The task's events with `seq > after` committed now, in order: at most a page (the first 500). */
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
