import { StreamResponse } from '@a2a-js/sdk';
import { isSettled } from '../../protocol/taskStates';
import type { TaskEventLog, TaskEventRecord, TaskKey } from '../../store/taskEvents';

/**
 * Streams resumed from an event (issue 27): a client whose SSE stream broke
 * sends `SubscribeToTask` with `Last-Event-ID: <taskId>:<generation>` and
 * gets every event after that one, then the live ones, with no gap and no
 * duplicate, on any replica: both come from the task's event log
 * (`store/taskEvents.ts`), which keeps each event under its generation for
 * as long as the task runs and `ENDED_TASK_EVENTS_KEPT_MS` after it ends.
 */

/** A stream response and the task's generation after it. */
export interface NumberedResponse {
  response: StreamResponse;
  generation: number;
}

/** The stream response a stored event is (its ProtoJSON), with its generation. */
function numbered(record: TaskEventRecord): NumberedResponse {
  return {
    response: StreamResponse.fromJSON(record.event as Parameters<typeof StreamResponse.fromJSON>[0]),
    generation: record.seq,
  };
}

/** The state a stream response leaves its task in, when it carries one. */
function stateOf({ payload }: StreamResponse) {
  if (payload?.$case === 'task' || payload?.$case === 'statusUpdate') return payload.value.status?.state;
  return undefined;
}

/** What a resumed stream needs to know of the task: its generation as read, and whether it is settled. */
export interface ResumedTask {
  key: TaskKey;
  /** The generation the task was read at (live here, or its row): events up to it happened. */
  generation: number;
  /** Finished or waiting for its caller: no event comes until someone acts. */
  settled: boolean;
}

/**
 * The task's events after generation `after`, then its live ones until the
 * event that settles it (or `signal` aborts), when the log still holds every
 * one of them; `undefined` when it does not (events pruned, or a turn that
 * kept none, or `after` past the task's generation: the caller gets the
 * task as it stands instead, then its events until it settles). Reading the
 * first page decides it: it must start at `after + 1`, or, empty, the task
 * must not have passed `after`.
 * @example
 * const resumed = await resumeAfter(events, { key, generation, settled }, 41, signal);
 * if (resumed) for await (const { response, generation } of resumed) send(response, generation);
 */
export async function resumeAfter(
  events: TaskEventLog,
  task: ResumedTask,
  after: number,
  signal: AbortSignal,
): Promise<AsyncGenerator<NumberedResponse, void, undefined> | undefined> {
  // An event the task has not reached (a forged id, or one heard before the log committed it): following from
  // there would wait for numbers past the task's end, even once it has ended.
  if (after > task.generation) return undefined;
  const page = await events.read(task.key, after);
  const first = page[0];
  if (first ? first.seq !== after + 1 : task.generation > after) return undefined;
  return replay(events, task, page, after, signal);
}

async function* replay(
  events: TaskEventLog,
  task: ResumedTask,
  page: readonly TaskEventRecord[],
  after: number,
  signal: AbortSignal,
): AsyncGenerator<NumberedResponse, void, undefined> {
  let last = after;
  for (const record of page) {
    last = record.seq;
    const next = numbered(record);
    yield next;
    if (record.terminal || isSettled(stateOf(next.response))) return;
  }
  // Everything that happened is sent, and nothing will happen until the caller acts.
  if (page.length === 0 && task.settled) return;
  for await (const record of events.follow(task.key, { after: last, signal })) {
    const next = numbered(record);
    yield next;
    if (record.terminal || isSettled(stateOf(next.response))) return;
  }
}
