import { Role, StreamResponse, Task, type Message } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { isFinished, isInterrupted, isRunning, isSettled } from '../../protocol/taskStates';
import type { TaskEventLog, TaskEventRecord, TaskKey } from '../../store/taskEvents';
import type { StoredTask, TaskRows, TaskScope } from '../../store/taskRows';
import { applyEvent, type FoldedEvent, type TasksElsewhere } from './liveTasks';

/**
 * The A2A tasks of one node spread over replicas (issue 16), in A2A terms
 * over the shared task event log (`store/taskEvents.ts`): the replica
 * running a task writes its events; any replica follows them or asks for a
 * cancel. Events are stored as the ProtoJSON of the A2A `StreamResponse`
 * (`{ "statusUpdate": … }`), the form the wire and the SDK agree on.
 *
 * Which tasks' events are written: those someone may watch from elsewhere
 * (`every-state` tasks: a stream, a returnImmediately caller, a webhook).
 * An `on-settle` task (a blocking SendMessage without webhook) is one whose
 * id nobody outside this process knows until it settles, so nothing could
 * follow or cancel it elsewhere; it costs the database no event rows.
 *
 * Following a task from another replica ({@link TasksElsewhere.follow}):
 * the task as it stands is its latest snapshot (every
 * {@link SNAPSHOT_EVERY}th event of a turn carries the task as the running
 * replica has folded it, stored under that event's number) with the events
 * after it folded on (a turn's first event, a `task` event, starts over),
 * and what follows is read from the next number on, so the follower sees
 * every event once, with no gap, whichever replica wrote it (the sweep's
 * "replica lost" included). Reading the task as it stands costs the row,
 * the snapshot and one page of fewer than {@link SNAPSHOT_EVERY} events,
 * however long the answer streamed so far.
 */
export interface ClusterTasks extends TasksElsewhere {
  /**
   * Writes one folded event of an `every-state` live task (the `onFolded`
   * seam of `liveTasks.ts`; others are skipped); resolves once committed.
   * Never rejects: a failure is logged (the task goes on in this process;
   * only followers elsewhere miss it).
   */
  record(folded: FoldedEvent): Promise<void>;
  /** Calls `cancel` for every cancel asked through any replica (the one running the task acts; the others ignore it). */
  onCancel(cancel: (scope: TaskScope, taskId: string) => void): () => void;
}

/** Options of {@link createClusterTasks}. */
export interface ClusterTasksOptions {
  events: TaskEventLog;
  /** The task rows every replica shares: which tasks run somewhere, and the task when it has no events. */
  rows: TaskRows;
  logger: Logger;
  /**
   * How often a follower re-reads the task's row (1 s unless set): a task
   * whose turn writes no events (an `on-settle` task a ListTasks showed) ends
   * when its row does.
   */
  rowCheckMs?: number;
}

/**
 * Every this many events of a turn, the event carries the task as it stands
 * (a snapshot). Fewer events to fold for a follower against more writes of
 * the whole task: one per this many events, each as long as the task then.
 */
export const SNAPSHOT_EVERY = 100;

const keyOf = (scope: TaskScope, taskId: string): TaskKey => ({
  tenant: scope.tenant,
  owner: scope.owner,
  taskId,
});

/** An executor event as stored: the ProtoJSON of the `StreamResponse` carrying it. */
export function eventJson(event: AgentExecutionEvent): unknown {
  return StreamResponse.toJSON({ payload: responseOf(event).payload });
}

/** The executor event a stored `StreamResponse` carries; `undefined` for one that carries none. */
export function eventOfJson(json: unknown): AgentExecutionEvent | undefined {
  const { payload } = StreamResponse.fromJSON(json as Parameters<typeof StreamResponse.fromJSON>[0]);
  return payload ? ({ kind: payload.$case, data: payload.value } as AgentExecutionEvent) : undefined;
}

function responseOf(event: AgentExecutionEvent): StreamResponse {
  return { payload: { $case: event.kind, value: event.data } as StreamResponse['payload'] };
}

/** The state an event leaves the task in, when it carries one. */
function stateAfter(event: AgentExecutionEvent) {
  if (event.kind === 'statusUpdate') return event.data.status?.state;
  if (event.kind === 'task') return event.data.status?.state;
  return undefined;
}

/**
 * Stands in for the user's message when a follower folds events: only a
 * `task` event reads it, and the follower takes those as they are.
 */
const NO_USER_MESSAGE: Message = {
  messageId: '',
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
};

/** Folds stored events into `task` (a `task` event starts the turn over); returns the task and the last number. */
function foldRecords(task: Task | undefined, records: readonly TaskEventRecord[], after: number) {
  let seq = after;
  for (const record of records) {
    seq = record.seq;
    const event = eventOfJson(record.event);
    if (!event) continue;
    task =
      event.kind === 'task'
        ? { ...event.data, history: event.data.history ?? [] }
        : applyEvent(task, event, NO_USER_MESSAGE);
  }
  return { task, seq };
}

/**
 * Writes each folded event of an `every-state` live task that keeps its
 * events to `events` under its generation (the `onFolded` seam of
 * `liveTasks.ts`; `on-settle` tasks are skipped: nobody outside this process
 * knows them before they settle);
 * resolves once committed, never rejects (a failure is logged: the task
 * goes on, only a follower or a resumed stream misses the event).
 * @example
 * const live = new LiveTasks({ rows, onFolded: (folded) => void record(folded) });
 */
export function taskEventRecorder(events: TaskEventLog, log: Logger): (folded: FoldedEvent) => Promise<void> {
  return ({ scope, taskId, event, task, writeMode, kept, generation }) => {
    if (writeMode !== 'every-state' || !kept) return Promise.resolve();
    const terminal = isFinished(task.status?.state);
    // Taken now: the live task changes with the next event. Nobody follows an ended task, so its end carries none.
    const snapshot = generation % SNAPSHOT_EVERY === 0 && !terminal ? Task.toJSON(task) : undefined;
    return events
      .append(keyOf(scope, taskId), { seq: generation, event: eventJson(event), terminal, snapshot })
      .catch((err) => log.warn('task event not written', { taskId, error: errorMessage(err) }));
  };
}

/**
 * The cluster's tasks over `events` and `rows`.
 * @example
 * const cluster = createClusterTasks({ events: storage.taskEvents, rows: storage.taskRows.tasks, logger });
 * const live = new LiveTasks({ rows, onFolded: (folded) => void cluster.record(folded), elsewhere: cluster });
 */
export function createClusterTasks(options: ClusterTasksOptions): ClusterTasks {
  const { events, rows } = options;
  const rowCheckMs = options.rowCheckMs ?? 1_000;
  const log = options.logger.child({ component: 'cluster-tasks' });

  /** The task's latest snapshot, if it has a readable one. */
  const latestSnapshot = async (key: TaskKey) => {
    const snapshot = await events.snapshot(key);
    if (!snapshot) return { task: undefined, seq: 0 };
    try {
      return { task: Task.fromJSON(snapshot.task), seq: snapshot.seq };
    } catch (err) {
      log.warn('task snapshot unreadable: folding every event', { taskId: key.taskId, error: errorMessage(err) });
      return { task: undefined, seq: 0 };
    }
  };
  /**
   * The task as it stands: its snapshot and the page of events after it
   * folded, and the number of the last. Events beyond that page (a burst
   * since the snapshot) are the follower's next ones.
   */
  const current = async (key: TaskKey) => {
    const snapshot = await latestSnapshot(key);
    return foldRecords(snapshot.task, await events.read(key, snapshot.seq), snapshot.seq);
  };

  return {
    record: taskEventRecorder(events, log),

    async current(scope, taskId) {
      const standing = await current(keyOf(scope, taskId));
      return standing.task && { task: standing.task, generation: standing.seq };
    },

    async *follow(scope, taskId, signal) {
      const key = keyOf(scope, taskId);
      const row = await rows.get({ ...scope, everyone: false }, taskId);
      if (!row || !isRunning(row.task.status?.state)) return;
      const standing = await current(key);
      // No events: a task whose turn writes none; its row is all there is until it ends. Events that end where an
      // earlier turn asked its caller, under a running row: a new turn has claimed the task and not written its
      // first event yet; the row is the task as claimed.
      const fromEvents = standing.task && !isInterrupted(standing.task.status?.state);
      const task = fromEvents ? standing.task! : row.task;
      const generation = fromEvents ? standing.seq : (row.generation ?? 0);
      yield { response: { payload: { $case: 'task', value: task } }, generation };
      if (isSettled(task.status?.state)) return;

      // Stops the event follower when the caller goes or the row settles with no event to say so.
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      signal.addEventListener('abort', onAbort);
      let settledRow: StoredTask | undefined;
      const checkRow = async () => {
        try {
          const now = await rows.get({ ...scope, everyone: false }, taskId);
          if (now && !isRunning(now.task.status?.state)) {
            settledRow = now;
            stop.abort();
          }
        } catch (err) {
          log.warn('task row not read', { taskId, error: errorMessage(err) });
        }
      };
      const timer = setInterval(() => void checkRow(), rowCheckMs);
      let last = standing.seq;
      try {
        for await (const record of events.follow(key, { after: last, signal: stop.signal })) {
          last = record.seq;
          const event = eventOfJson(record.event);
          if (!event) continue;
          yield { response: responseOf(event), generation: record.seq };
          if (record.terminal || isSettled(stateAfter(event))) return;
        }
        if (!settledRow || signal.aborted) return;
        // The row settled: its closing events, if any were written, are read first.
        for (const record of await events.read(key, last)) {
          const event = eventOfJson(record.event);
          if (!event) continue;
          yield { response: responseOf(event), generation: record.seq };
          if (record.terminal || isSettled(stateAfter(event))) return;
        }
        const closing = settledRow.task;
        yield {
          response: {
            payload: {
              $case: 'statusUpdate',
              value: { taskId, contextId: closing.contextId, status: closing.status, metadata: closing.metadata },
            },
          },
          generation: settledRow.generation ?? last,
        };
      } finally {
        clearInterval(timer);
        signal.removeEventListener('abort', onAbort);
      }
    },

    cancel: (scope, taskId) => events.requestCancel(keyOf(scope, taskId)),

    onCancel(cancel) {
      return events.onCancel((key) => cancel({ tenant: key.tenant, owner: key.owner }, key.taskId));
    },
  };
}
