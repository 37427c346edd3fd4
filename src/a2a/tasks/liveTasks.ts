import { TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { isFinished, isInterrupted, isRunning, isSettled } from '../../protocol/taskStates';
import {
  scopedKey,
  type StoredTask,
  type TaskClaim,
  type TaskReader,
  type TaskTurnClaim,
  type TaskRows,
  type TaskScope,
} from '../../store/taskRows';
import { AnswerArtifact } from './answerArtifact';
import { statusUpdate } from './messages';
import type { NumberedResponse } from './resume';
import { TaskSubscription, type HeardEvent } from './taskSubscription';

/**
 * The one owner of every live task: a task whose turn runs in this process
 * (by scope and id), with its phase, the abort controller and answer
 * artifact of its turn, the promise of its end, and the one fold of
 * executor events into it ({@link applyEvent}). Whether a task is working,
 * and where, is asked here on every replica: a live task runs here; any
 * other is as its row says (`TaskRows`, which a shared database answers for
 * every replica, naming the replica running it).
 *
 * A turn starts only by owning its task: a new task's id is fresh (its
 * first row is its claim); a message continuing a task claims it in the
 * rows first ({@link LiveTasks.claim}: only a task waiting for its caller,
 * atomically), so two turns of one task never run side by side, on one
 * replica or several. Once a folded event leaves the task waiting for its
 * caller or ended, the live task is written and let go: nothing about it
 * is held anywhere but its row.
 *
 * When a live task is written to the rows is its write mode:
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
 *   generation after it (issue 27) and the task: the event log, which
 *   followers on another replica and resumed streams read, is fed from it.
 * - `elsewhere` (an option, {@link TasksElsewhere}) follows and cancels a
 *   task live on another replica; without it such a task is only its row:
 *   a subscriber gets the row alone, a cancel ends it here.
 */

/** When a live task is written to the rows (see the module comment). */
export type WriteMode = 'every-state' | 'on-settle';

/**
 * Where a live task is in its turn: `running` until a folded event leaves
 * it waiting for its caller (`awaiting-input`: input- or auth-required) or
 * ended (`settled`); then it is written and let go, and nothing more is
 * folded into it.
 */
export type TaskPhase = 'running' | 'awaiting-input' | 'settled';

/** One task whose turn runs in this process, as held here. */
export interface LiveTask {
  readonly scope: TaskScope;
  readonly id: string;
  readonly contextId: string;
  readonly writeMode: WriteMode;
  phase: TaskPhase;
  /** The task as folded so far; undefined until its first event (it is being created: it has no row). */
  task: Task | undefined;
  /**
   * The task's generation (issue 27): its generation when this turn began
   * (0 for a new task, its row's for a claimed one), +1 per event folded.
   * Only the turn that owns the task writes its events, so the number it
   * counts is the one the event log keeps.
   */
  generation: number;
  /**
   * Its events go to the event log (`onFolded`'s `kept`): always with
   * replicas (followers elsewhere read them); on one node only once someone
   * may resume from them or wait on them (a request that activated the
   * generation extension, see {@link LiveTasks.watch}), so a client that
   * never asks for generations pays nothing for them.
   */
  keepEvents: boolean;
  /** Who hears each event folded from now on (streams, subscribers, webhooks); none for most tasks. */
  listeners: Array<(heard: HeardEvent) => void> | undefined;
  /** Aborts the turn's model, tool and remote calls (a cancel, the node stopping). */
  readonly controller: AbortController;
  /** The turn's answer as it streams (`answerArtifact.ts`). */
  readonly answer: AnswerArtifact;
  /** Resolves with the task once its turn has ended and its last state is written ({@link LiveTasks.run}). */
  settled: Promise<Task> | undefined;
  /** The write of the state that ended its phase `running`, once folded. */
  closed: Promise<void> | undefined;
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
  /** Whether the event goes to the event log ({@link LiveTask.keepEvents}). */
  kept: boolean;
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

/**
 * Where a task is ({@link LiveTasks.locate}): its turn runs `here` (the
 * live task), `elsewhere` (its row is running: on the replica it names,
 * where there are replicas), or `nowhere` (it waits for its caller, or has
 * ended: its row is all there is).
 */
export type LocatedTask = { runs: 'here'; live: LiveTask } | (StoredTask & { runs: 'elsewhere' | 'nowhere' });

/** A claim for a turn ({@link LiveTasks.claim}): its live task and the task as claimed, or who holds the task. */
export type TurnClaim = { won: true; live: LiveTask; task: Task } | Extract<TaskClaim, { won: false }>;

/** Options of {@link LiveTasks}. */
export interface LiveTasksOptions {
  rows: TaskRows;
  /** Hears every folded event, in order per task (the cluster seam; see the module comment). */
  onFolded?: (folded: FoldedEvent) => void;
  /** Follows and cancels tasks live on other replicas (see the module comment); none by default. */
  elsewhere?: TasksElsewhere;
  /** Every task's events go to the event log (replicas share them); otherwise only watched tasks' ({@link LiveTask.keepEvents}). */
  keepAllEvents?: boolean;
  /** Stamps the claims and the statuses a cancel or a shutdown folds in (default: the system clock). */
  clock?: () => Date;
}

/** The text a canceled task's closing status carries. */
const CANCELED_TEXT = 'Task canceled by the caller.';

/** The live tasks of this process (see the module comment). */
export class LiveTasks {
  /** By scope and id. */
  private readonly tasks = new Map<string, LiveTask>();
  /** By id alone, for the owner, who reads every caller's tasks. */
  private readonly byId = new Map<string, LiveTask>();
  /** How many wait on each task's events (by scope and id): its next turns keep them ({@link watch}). */
  private readonly watched = new Map<string, number>();
  /** Every turn's end ({@link run}) until it has settled and been written: what {@link settleAll} waits for. */
  private readonly turns = new Set<Promise<Task>>();
  private readonly clock: () => Date;

  constructor(private readonly options: LiveTasksOptions) {
    this.clock = options.clock ?? (() => new Date());
  }

  /** Tasks live on other replicas, when there are replicas. */
  get elsewhere(): TasksElsewhere | undefined {
    return this.options.elsewhere;
  }

  /** How many tasks are live here, each a turn running (what /readyz and tests read). */
  get size(): number {
    return this.tasks.size;
  }

  /**
   * Starts holding a task whose turn starts here now: a new task (its id is
   * fresh: until its first event it has no row) or one claimed for this
   * turn ({@link claim}). A task already live stays as it is.
   */
  begin(scope: TaskScope, ids: { taskId: string; contextId: string }, writeMode: WriteMode, generation = 0): LiveTask {
    const held = this.tasks.get(scopedKey(scope, ids.taskId));
    if (held) return held;
    const live: LiveTask = {
      scope,
      id: ids.taskId,
      contextId: ids.contextId,
      writeMode,
      phase: 'running',
      task: undefined,
      generation,
      keepEvents: this.options.keepAllEvents === true || this.watched.has(scopedKey(scope, ids.taskId)),
      listeners: undefined,
      controller: new AbortController(),
      answer: new AnswerArtifact(ids),
      settled: undefined,
      closed: undefined,
      written: undefined,
      dirty: false,
    };
    this.tasks.set(scopedKey(scope, ids.taskId), live);
    this.byId.set(ids.taskId, live);
    return live;
  }

  /**
   * Claims `found` (a task the caller may continue, waiting for its answer)
   * for the turn of message `messageId`, in the rows every replica shares:
   * the winner gets the live task (`every-state`: the task was seen) and
   * the task as claimed (working); a loser learns the state the task is in
   * and who holds it. Of two messages racing on any replicas, one wins.
   * `guard` (issue 27): the send's key, recorded with the claim (a retry is
   * refused and told the task of its first send), and the generation the
   * caller expects the task at.
   */
  async claim(
    found: StoredTask,
    messageId: string,
    guard: Pick<TaskTurnClaim, 'send' | 'generation'> = {},
  ): Promise<TurnClaim> {
    const claim = await this.options.rows.claim(found.scope, found.task.id, { messageId, at: this.clock(), ...guard });
    if (!claim.won) return claim;
    const { task, generation } = claim.claimed;
    const live = this.begin(found.scope, { taskId: task.id, contextId: task.contextId }, 'every-state', generation);
    return { won: true, live, task };
  }

  /**
   * Runs the live task's turn (`body`, which resolves with the task once it
   * has settled and been written) as its {@link LiveTask.settled}, and keeps
   * it until then for {@link settleAll}.
   */
  run(live: LiveTask, body: () => Promise<Task>): Promise<Task> {
    const settled = body();
    live.settled = settled;
    this.turns.add(settled);
    const forget = () => void this.turns.delete(settled);
    settled.then(forget, forget);
    return settled;
  }

  /**
   * Folds one executor event into the live task. An `every-state` task's
   * state change resolves once its row is written; an `on-settle` task
   * stays in memory until its turn ends. The event that ends the turn
   * (the task waits for its caller, or has ended) is written whatever the
   * mode, and the task let go; nothing folded after it is kept.
   * `userMessage` heads the history of a `task` event's task.
   */
  fold(live: LiveTask, event: AgentExecutionEvent, userMessage?: Message): Promise<void> | undefined {
    if (live.phase !== 'running') return undefined;
    const task = applyEvent(live.task, event, userMessage);
    if (!task) return undefined;
    live.task = task;
    live.generation += 1;
    const state = task.status?.state;
    if (isSettled(state)) live.phase = isInterrupted(state) ? 'awaiting-input' : 'settled';
    this.options.onFolded?.({
      scope: live.scope,
      taskId: live.id,
      writeMode: live.writeMode,
      kept: live.keepEvents,
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
        state,
        generation: live.generation,
      };
      // A listener may stop listening as it hears: it must not make the next one miss this event.
      if (listeners.length === 1) listeners[0]!(heard);
      else for (const listener of [...listeners]) listener(heard);
    }
    return written;
  }

  /**
   * Keeps the events of task `id` of `scope` in the event log from now on
   * (a resumed stream or a long poll reads them): its live task's from its
   * next event, its next turns' from their first. Returns how to stop asking.
   */
  watch(scope: TaskScope, id: string): () => void {
    const key = scopedKey(scope, id);
    this.watched.set(key, (this.watched.get(key) ?? 0) + 1);
    const live = this.tasks.get(key);
    if (live) live.keepEvents = true;
    let watching = true;
    return () => {
      if (!watching) return;
      watching = false;
      const left = (this.watched.get(key) ?? 1) - 1;
      if (left > 0) this.watched.set(key, left);
      else this.watched.delete(key);
    };
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
    return new TaskSubscription((listener) => this.listen(live, listener), form);
  }

  /**
   * Cancels the turn of task `id` of `scope` if it runs here (also a cancel
   * asked through another replica): `canceled` is folded in, then its
   * signal aborts its model, tool and remote calls. Resolves once written;
   * `undefined` when no turn of the task runs here.
   */
  cancelHere(scope: TaskScope, id: string): Promise<void> | undefined {
    const live = this.tasks.get(scopedKey(scope, id));
    return live && this.stop(live, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT);
  }

  /**
   * Cancels the task `found` wherever it is, resolving once `canceled` is
   * written: a turn running here is canceled here ({@link cancelHere}); a
   * task waiting for its caller is claimed (so no answer's turn starts
   * beside the cancel) and ended here; a turn running on another replica is
   * asked to stop (`elsewhere.cancel`) and the task ended here (its row is
   * fenced: never written over once finished, whoever finishes it first).
   * A task that ended meanwhile is left as it is: the caller reads it.
   */
  async cancel(found: StoredTask): Promise<void> {
    const { scope } = found;
    const id = found.task.id;
    const here = this.cancelHere(scope, id);
    if (here) return here;
    const claim = await this.options.rows.claim(scope, id, { at: this.clock() });
    if (claim.won) return this.endHere(claim.claimed, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT);
    if (!isRunning(claim.state)) return;
    const startedHere = this.cancelHere(scope, id);
    if (startedHere) return startedHere;
    await this.options.elsewhere?.cancel(scope, id);
    await this.endHere(found, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT);
  }

  /** Fails every turn running here with `reason` (the node is stopping), so none is left `working`. */
  failAll(reason: string): void {
    for (const live of [...this.tasks.values()]) void this.stop(live, TaskState.TASK_STATE_FAILED, reason);
  }

  /** Resolves once every turn started here has settled and been written, or after `limitMs`. */
  async settleAll(limitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)));
    await Promise.race([Promise.allSettled([...this.turns]), limit]);
    clearTimeout(timer);
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

  /**
   * Whether the task `id` the reader may see is working, and where (see
   * {@link LocatedTask}): here, else as the rows every replica shares say.
   * `undefined`: no such task (or a new one whose turn has not started).
   */
  async locate(reader: TaskReader, id: string): Promise<LocatedTask | undefined> {
    const live = this.held(reader, id);
    if (live?.task) return { runs: 'here', live };
    // Not live here, or its turn has not folded its first event: a new task has no row yet, a claimed one has.
    const row = await this.options.rows.get(reader, id);
    if (!row) return undefined;
    return { ...row, runs: isRunning(row.task.status?.state) ? 'elsewhere' : 'nowhere' };
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

  /** Writes what the task's mode and phase say must be written now. */
  private changed(live: LiveTask): Promise<void> | undefined {
    const task = live.task!;
    if (live.phase !== 'running') return (live.closed = this.close(live));
    if (live.writeMode === 'on-settle') {
      live.dirty = true;
      return undefined;
    }
    const state = task.status?.state;
    if (state === live.written) {
      live.dirty = true; // progress or an answer chunk: kept until the next state change
      return undefined;
    }
    live.written = state;
    live.dirty = false;
    return this.options.rows.write([{ scope: live.scope, task, generation: live.generation }]);
  }

  /** The turn has ended: the task is let go and written (one write, whatever its mode). */
  private close(live: LiveTask): Promise<void> {
    const key = scopedKey(live.scope, live.id);
    if (this.tasks.get(key) === live) this.tasks.delete(key);
    if (this.byId.get(live.id) === live) this.byId.delete(live.id);
    return this.options.rows.write([{ scope: live.scope, task: live.task!, generation: live.generation }]);
  }

  /** Ends a running turn with `state`: folded in (so the turn's own end is dropped), then its calls aborted. */
  private stop(live: LiveTask, state: TaskState, text: string): Promise<void> | undefined {
    if (live.phase === 'running') {
      const ids = { taskId: live.id, contextId: live.contextId };
      void this.fold(live, AgentEvent.statusUpdate(statusUpdate(ids, state, this.clock(), text)));
      live.controller.abort();
    }
    return live.closed;
  }

  /**
   * Ends a task no turn runs here (claimed to cancel it, or running on a
   * replica asked to stop) with `state`, in one event: the task as it ends
   * (the row it was read from may hold an older state of it).
   */
  private endHere(stored: StoredTask, state: TaskState, text: string): Promise<void> | undefined {
    const { task } = stored;
    const ids = { taskId: task.id, contextId: task.contextId };
    const live = this.begin(stored.scope, ids, 'every-state', stored.generation);
    const { status } = statusUpdate(ids, state, this.clock(), text);
    const history = status?.message ? [...task.history, status.message] : task.history;
    return this.fold(live, AgentEvent.task({ ...task, status, history }));
  }
}

/**
 * Applies one executor event to the task, as the SDK's `ResultManager`
 * merges it into the stored task: the user's message (when given) heads the history,
 * status messages are appended to it, artifacts are replaced or appended
 * by id, metadata is merged, and nothing changes a task once it has ended.
 * The executor's events are fresh objects it never touches again, so they
 * are taken as they are, not copied, except artifacts: the task holds its
 * own copy of each (see {@link ownArtifact}), so an appended chunk goes into
 * it in place instead of copying every earlier chunk again.
 */
export function applyEvent(
  task: Task | undefined,
  event: AgentExecutionEvent,
  userMessage?: Message,
): Task | undefined {
  switch (event.kind) {
    case 'task': {
      const next: Task = { ...event.data, history: event.data.history ?? [] };
      if (task) {
        if (next.history.length === 0) next.history = task.history;
        next.artifacts = mergeArtifacts(task.artifacts, next.artifacts);
        if (task.metadata || next.metadata) next.metadata = { ...task.metadata, ...next.metadata };
      }
      next.artifacts = next.artifacts.map(ownArtifact);
      if (userMessage && !next.history.some((m) => m.messageId === userMessage.messageId))
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
        appendParts(existing.parts, artifact.parts);
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
 * Appends a chunk's parts: a text part continuing a text part extends it, so a
 * streamed answer reads as one text in every snapshot (GetTask, ListTasks, a
 * retried send, a resumed follower), as its chunks read when concatenated.
 * The last part is replaced, not changed: the chunk it came in may still be
 * queued for the store or a follower.
 */
function appendParts(parts: Part[], chunk: Part[]): void {
  for (const part of chunk) {
    const last = parts.at(-1);
    if (
      last?.content?.$case === 'text' &&
      part.content?.$case === 'text' &&
      !last.metadata &&
      !part.metadata &&
      last.mediaType === part.mediaType
    )
      parts[parts.length - 1] = { ...last, content: { $case: 'text', value: last.content.value + part.content.value } };
    else parts.push(part);
  }
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
