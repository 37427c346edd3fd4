import type { Artifact, Message, Task, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { isFinished, isRunning, isSettled } from '../protocol/taskStates';
import { scopedKey, type TaskReader, type TaskRows, type TaskScope } from '../store/taskRows';
import type { NumberedResponse } from './resume';

/**
 * The one owner of every task this process is running: each live task (by
 * scope and id), the one fold of executor events into it ({@link applyEvent}),
 * and when it is written to the task rows, recorded as a field of the task:
 *
 * - `every-state`: someone may watch it (a stream, a returnImmediately
 *   caller, a webhook): each state change is written before it is answered;
 *   progress and answer chunks stay in memory until the next state change.
 * - `on-settle`: a blocking SendMessage without a webhook: nobody has seen
 *   the task before it settles, so it is written once, then. A GetTask or
 *   ListTasks from another request reads the live task (a ListTasks writes
 *   it first, so what it shows survives a crash).
 *
 * A crash loses only states nobody saw, of tasks the restart sweep fails.
 *
 * Seams for a cluster layer (PostgreSQL, several replicas):
 * - `onFolded` (an option) hears every event folded here, with the task's
 *   sequence number (1, 2, …) and the task after it: an events table, or
 *   followers on another replica, can be fed from it.
 * - A task that is not live here is read from the rows (`TaskRows.get`),
 *   which a shared database answers for every replica.
 * - `elsewhere` (an option, {@link TasksElsewhere}) follows and cancels a
 *   task live on another replica; without it such a task is only its row:
 *   a subscriber gets the row alone, a cancel finds nothing running.
 */

/** When a live task is written to the rows (see the module comment). */
export type WriteMode = 'every-state' | 'on-settle';

/** One task this process is running, as held here. */
export interface LiveTask {
  readonly scope: TaskScope;
  readonly id: string;
  readonly writeMode: WriteMode;
  /** The task as folded so far; undefined until its first event (it is being created: it has no row). */
  task: Task | undefined;
  /**
   * The task's generation (issue 27): its generation when this turn began
   * (0 for a new task), +1 per event folded. Only this process writes the
   * task's events while it runs it, so the number it counts is the one the
   * store keeps.
   */
  generation: number;
  /** Who hears each event folded from now on (streams, subscribers, webhooks); none for most tasks. */
  listeners: Array<(heard: HeardEvent) => void> | undefined;
  /** The state its row holds, if it has one. */
  written: TaskState | undefined;
  /** The task is newer than its row. */
  dirty: boolean;
}

/** One event folded into a live task (what `onFolded` hears). */
export interface FoldedEvent {
  scope: TaskScope;
  taskId: string;
  /** When the task is written to the rows: only an `every-state` task is watched from elsewhere. */
  writeMode: WriteMode;
  /** The task's generation after the event. */
  generation: number;
  event: AgentExecutionEvent;
  /** The task after the event (the live object: copy what you keep). */
  task: Task;
}

/**
 * Tasks live on other replicas (the cluster seam; `a2a/clusterTasks.ts`
 * implements it on PostgreSQL). Absent on a single node.
 */
export interface TasksElsewhere {
  /**
   * The task `taskId` of `scope` as the replica running it sees it: first
   * the task as it stands (a `task` response), then each later event until
   * its final one, each with the task's generation after it. Yields nothing
   * when no replica runs it; ends when `signal` aborts.
   */
  follow(scope: TaskScope, taskId: string, signal: AbortSignal): AsyncIterable<NumberedResponse>;
  /**
   * The task as it stands after its latest event (its latest snapshot with
   * the events after it folded on) and that event's generation; undefined
   * when it has no events (its row is all there is).
   */
  current(scope: TaskScope, taskId: string): Promise<{ task: Task; generation: number } | undefined>;
  /** Asks the replica running the task to cancel it (nothing when none does). */
  cancel(scope: TaskScope, taskId: string): Promise<void>;
}

/** One event folded into a live task, as its listeners hear it. */
export interface HeardEvent {
  event: AgentExecutionEvent;
  /** Resolves once the state it carries is written, when the task's write mode says it must be. */
  written: Promise<void> | undefined;
  /** For a task event: a copy of the task as folded up to it. */
  task: Task | undefined;
  /** The task's state after it. */
  state: TaskState | undefined;
  /** The task's generation after it. */
  generation: number;
}

/** Options of {@link LiveTasks}. */
export interface LiveTasksOptions {
  rows: TaskRows;
  /** Hears every folded event, in order per task (the cluster seam; see the module comment). */
  onFolded?: (folded: FoldedEvent) => void;
  /** Follows and cancels tasks live on other replicas (see the module comment); none by default. */
  elsewhere?: TasksElsewhere;
}

/** The live tasks of this process (see the module comment). */
export class LiveTasks {
  /** By scope and id. */
  private readonly tasks = new Map<string, LiveTask>();
  /** By id alone, for the owner, who reads every caller's tasks. */
  private readonly byId = new Map<string, LiveTask>();

  constructor(private readonly options: LiveTasksOptions) {}

  /** Tasks live on other replicas, when there are replicas. */
  get elsewhere(): TasksElsewhere | undefined {
    return this.options.elsewhere;
  }

  /** How many tasks are live. */
  get size(): number {
    return this.tasks.size;
  }

  /**
   * Starts holding a task this process creates now (`generation` 0: until
   * its first event it has no row to look up) or continues from the
   * generation its row holds. A task already live stays as it is.
   */
  begin(scope: TaskScope, id: string, writeMode: WriteMode, generation = 0): LiveTask {
    const held = this.tasks.get(scopedKey(scope, id));
    if (held) return held;
    const live: LiveTask = {
      scope,
      id,
      writeMode,
      task: undefined,
      generation,
      written: undefined,
      dirty: false,
      listeners: undefined,
    };
    this.tasks.set(scopedKey(scope, id), live);
    this.byId.set(id, live);
    return live;
  }

  /**
   * Folds one executor event into the live task. An `every-state` task's
   * state change resolves once its row is written; an `on-settle` task
   * stays in memory until {@link settle}.
   */
  fold(live: LiveTask, event: AgentExecutionEvent, userMessage: Message): Promise<void> | undefined {
    const task = applyEvent(live.task, event, userMessage);
    if (!task) return undefined;
    live.task = task;
    live.generation += 1;
    this.options.onFolded?.({
      scope: live.scope,
      taskId: live.id,
      writeMode: live.writeMode,
      generation: live.generation,
      event,
      task,
    });
    const written = this.changed(live);
    const listeners = live.listeners;
    if (listeners) {
      const heard: HeardEvent = {
        event,
        written,
        task: event.kind === 'task' ? structuredClone(task) : undefined,
        state: task.status?.state,
        generation: live.generation,
      };
      // A listener may stop listening as it hears: it must not make the next one miss this event.
      if (listeners.length === 1) listeners[0]!(heard);
      else for (const listener of [...listeners]) listener(heard);
    }
    return written;
  }

  /** Calls `listener` with each event folded into the live task from now on, in order; returns how to stop. */
  listen(live: LiveTask, listener: (heard: HeardEvent) => void): () => void {
    (live.listeners ??= []).push(listener);
    return () => {
      const index = live.listeners?.indexOf(listener) ?? -1;
      if (index !== -1) live.listeners!.splice(index, 1);
    };
  }

  /**
   * The live task's events from now on, as a stream carries them, each once
   * its state is written and as `form` makes it (a task event as the task
   * folded up to it). Ends after the event that settles the task (or when
   * the caller stops reading). Listening starts now, not at the first read:
   * nothing folded meanwhile is missed.
   */
  subscribe<T>(live: LiveTask, form: (heard: HeardEvent) => T): AsyncGenerator<T, void, undefined> {
    return new TaskEvents(this, live, form);
  }

  /**
   * The live task has its final state: written (one write, whatever its
   * mode) and no longer held. Nothing folded after this is kept.
   */
  settle(live: LiveTask): Promise<void> {
    this.release(live);
    if (!live.task) return Promise.resolve();
    return this.options.rows.write([{ scope: live.scope, task: live.task, generation: live.generation }]);
  }

  /**
   * A copy of the live task `id` the reader may see (its own; the owner:
   * anyone's of the tenant): `{ task: undefined }` for a task being created,
   * `undefined` when none is live here (read the rows).
   */
  read(reader: TaskReader, id: string): { task: Task | undefined } | undefined {
    const live = this.held(reader, id);
    if (!live) return undefined;
    return { task: live.task && structuredClone(live.task) };
  }

  /** The live task `id` the reader may see (as {@link read}), itself: to follow or cancel it. */
  held(reader: TaskReader, id: string): LiveTask | undefined {
    const live = this.tasks.get(scopedKey(reader, id));
    if (live || !reader.everyone) return live;
    const anyones = this.byId.get(id);
    return anyones?.scope.tenant === reader.tenant && anyones.task ? anyones : undefined;
  }

  /** Writes every live task newer than its row (before a query reads the rows); resolves once written. */
  async writeAll(): Promise<void> {
    const pending = [];
    for (const live of this.tasks.values()) {
      if (!live.dirty || !live.task) continue;
      pending.push({ scope: live.scope, task: live.task, generation: live.generation });
      live.dirty = false;
      live.written = live.task.status?.state;
    }
    if (pending.length > 0) await this.options.rows.write(pending);
  }

  /** Lets go of every live task: the rows are about to be changed behind them (the restart/shutdown sweep). */
  forget(): void {
    this.tasks.clear();
    this.byId.clear();
  }

  /** Writes what the task's mode says must be written now. */
  private changed(live: LiveTask): Promise<void> | undefined {
    const task = live.task!;
    const state = task.status?.state;
    if (live.writeMode === 'on-settle') {
      live.dirty = true;
      return undefined;
    }
    if (!isRunning(state)) return this.settle(live);
    if (state === live.written) {
      live.dirty = true; // progress or an answer chunk: kept until the next state change
      return undefined;
    }
    live.written = state;
    live.dirty = false;
    return this.options.rows.write([{ scope: live.scope, task, generation: live.generation }]);
  }

  private release(live: LiveTask): void {
    const key = scopedKey(live.scope, live.id);
    if (this.tasks.get(key) === live) this.tasks.delete(key);
    if (this.byId.get(live.id) === live) this.byId.delete(live.id);
  }
}

/**
 * A live task's events as an async iterator (see {@link LiveTasks.subscribe}),
 * written by hand rather than as an async generator: a stream reads one per
 * event, and a generator (with the `for await` that feeds it) adds a
 * promise, a suspended frame and a turn of the microtask queue per layer and
 * event. Reads are answered in order, each event once its state is written.
 */
class TaskEvents<T> implements AsyncGenerator<T, void, undefined> {
  /** Heard and not yet read. */
  private readonly heard: HeardEvent[] = [];
  /** Reads waiting for an event, in order. */
  private readonly reads: Array<{
    resolve: (result: IteratorResult<T, void>) => void;
    reject: (err: unknown) => void;
  }> = [];
  /** The head event waits for its state to be written. */
  private writing = false;
  /** The settling event was read, or the reader stopped: every later read is done. */
  private ended = false;
  private readonly stop: () => void;

  constructor(
    liveTasks: LiveTasks,
    live: LiveTask,
    private readonly form: (heard: HeardEvent) => T,
  ) {
    this.stop = liveTasks.listen(live, (heard) => {
      if (isSettled(heard.state)) this.stop();
      this.heard.push(heard);
      this.drain();
    });
  }

  next(): Promise<IteratorResult<T, void>> {
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    const head = this.heard[0];
    // The common read: an event already here, nothing written to wait for, no read before it.
    if (head && !head.written && !this.writing && this.reads.length === 0) {
      this.heard.shift();
      return Promise.resolve(this.result(head));
    }
    return new Promise((resolve, reject) => {
      this.reads.push({ resolve, reject });
      this.drain();
    });
  }

  return(): Promise<IteratorResult<T, void>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err: unknown): Promise<IteratorResult<T, void>> {
    this.end();
    return Promise.reject(err);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.end();
  }

  /** Answers waiting reads with the events heard, in order, each once written. */
  private drain(): void {
    while (!this.writing && this.reads.length > 0 && this.heard.length > 0) {
      const head = this.heard.shift()!;
      if (head.written) {
        this.writing = true;
        head.written.then(
          () => {
            this.writing = false;
            this.answer(head);
            this.drain();
          },
          (err: unknown) => {
            this.writing = false;
            this.reads.shift()?.reject(err);
            this.end();
          },
        );
        return;
      }
      this.answer(head);
    }
  }

  private answer(heard: HeardEvent): void {
    const read = this.reads.shift();
    if (!read) return; // the reader stopped while its state was written
    read.resolve(this.result(heard));
    if (this.ended) this.end();
  }

  /** The read result of `heard`; after the settling event the stream has ended. */
  private result(heard: HeardEvent): IteratorResult<T, void> {
    if (isSettled(heard.state)) {
      this.ended = true;
      this.stop();
    }
    return { value: this.form(heard), done: false };
  }

  /** Stops listening and answers every waiting read as done. */
  private end(): void {
    this.ended = true;
    this.stop();
    this.heard.length = 0;
    for (const read of this.reads.splice(0)) read.resolve({ value: undefined, done: true });
  }
}

/**
 * Applies one executor event to the task, as the SDK's `ResultManager`
 * merges it into the stored task: the user's message heads the history,
 * status messages are appended to it, artifacts are replaced or appended
 * by id, metadata is merged, and nothing changes a task once it has ended.
 * The executor's events are fresh objects it never touches again, so they
 * are taken as they are, not copied, except artifacts: the task holds its
 * own copy of each (see {@link ownArtifact}), so an appended chunk goes into
 * it in place instead of copying every earlier chunk again.
 */
export function applyEvent(task: Task | undefined, event: AgentExecutionEvent, userMessage: Message): Task | undefined {
  switch (event.kind) {
    case 'task': {
      const next: Task = { ...event.data, history: event.data.history ?? [] };
      if (task) {
        if (next.history.length === 0) next.history = task.history;
        next.artifacts = mergeArtifacts(task.artifacts, next.artifacts);
        if (task.metadata || next.metadata) next.metadata = { ...task.metadata, ...next.metadata };
      }
      next.artifacts = next.artifacts.map(ownArtifact);
      if (!next.history.some((m) => m.messageId === userMessage.messageId))
        next.history = [userMessage, ...next.history];
      return next;
    }
    case 'statusUpdate': {
      const update = event.data;
      if (!task || task.id !== update.taskId) return task;
      const state = task.status?.state;
      if (isFinished(state) && update.status?.state !== state) return task;
      task.status = update.status;
      if (update.metadata) task.metadata = { ...task.metadata, ...update.metadata };
      const message = update.status?.message;
      if (message && !task.history.some((m) => m.messageId === message.messageId))
        task.history = [...task.history, message];
      return task;
    }
    case 'artifactUpdate': {
      const update = event.data;
      const artifact = update.artifact;
      if (!task || !artifact || task.id !== update.taskId) return task;
      const index = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
      if (index === -1) task.artifacts = [...task.artifacts, ownArtifact(artifact)];
      else if (!update.append) task.artifacts[index] = ownArtifact(artifact);
      else {
        const existing = task.artifacts[index]!;
        existing.parts.push(...artifact.parts);
        if (artifact.name) existing.name = artifact.name;
        if (artifact.description) existing.description = artifact.description;
        if (artifact.metadata && !holds(existing.metadata, artifact.metadata))
          existing.metadata = { ...existing.metadata, ...artifact.metadata };
      }
      // Each answer chunk carries the same metadata: merged (a new object per chunk) only when it changes something.
      if (update.metadata && !holds(task.metadata, update.metadata))
        task.metadata = { ...task.metadata, ...update.metadata };
      return task;
    }
    case 'message':
      // The node's executor answers with tasks only; a direct reply would end no task.
      return task;
  }
}

/** Whether `target` already has every entry of `entries` (so merging them in would change nothing). */
function holds(target: Record<string, unknown> | undefined, entries: Record<string, unknown>): boolean {
  if (!target) return false;
  for (const key in entries) if (!Object.hasOwn(target, key) || target[key] !== entries[key]) return false;
  return true;
}

/**
 * The task's own copy of an artifact an event carried: the event may still
 * be on its way to a stream when a later chunk is appended to the task's.
 */
function ownArtifact(artifact: Artifact): Artifact {
  return { ...artifact, parts: [...artifact.parts] };
}

function mergeArtifacts(earlier: Artifact[], incoming: Artifact[]): Artifact[] {
  if (earlier.length === 0) return incoming;
  const byId = new Map(incoming.map((a) => [a.artifactId, a]));
  const merged = earlier.map((a) => byId.get(a.artifactId) ?? a);
  const seen = new Set(earlier.map((a) => a.artifactId));
  return [...merged, ...incoming.filter((a) => !seen.has(a.artifactId))];
}
