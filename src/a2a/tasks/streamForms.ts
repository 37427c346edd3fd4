import type { StreamResponse, Task } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { invalidParam } from '../../protocol/errorDetails';
import type { HeardEvent } from './taskSubscription';

/**
 * The forms a task and its events take on the way out, shared by the
 * request handler (`taskHandler.ts`) and the reading side of a task
 * (`taskFollowing.ts`).
 */

/** SubscribeToTask of a finished task: the spec's UnsupportedOperation, as the SDK answers it. */
export function terminalSubscription(taskId: string, task: Task): Error {
  return new UnsupportedOperationError(
    `Task ${taskId} is in a terminal state (${task.status?.state}) and cannot be subscribed to.`,
  );
}

/** The stream's form of a heard event: a task event carries the task as folded up to it. */
export function toStreamResponse(heard: HeardEvent, historyLength: number | undefined): StreamResponse {
  const { event } = heard;
  switch (event.kind) {
    case 'task':
      return { payload: { $case: 'task', value: withHistory(heard.task ?? event.data, historyLength) } };
    case 'message':
      return { payload: { $case: 'message', value: event.data } };
    case 'statusUpdate':
      return { payload: { $case: 'statusUpdate', value: event.data } };
    case 'artifactUpdate':
      return { payload: { $case: 'artifactUpdate', value: event.data } };
  }
}

/** The task with at most `historyLength` of its latest messages (all without one; none with 0). */
export function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || historyLength === null) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}

/** Refuses a request without a task id. */
export function requireTaskId(taskId: string | undefined): asserts taskId is string {
  if (!taskId || taskId.trim() === '') throw invalidParam('id', 'is required: the task ID');
}

/**
 * The stream `open` resolves to, opened at the first read, as an async
 * generator's body runs then: an error opening it rejects that read; a
 * stream returned before any read is never opened.
 */
export function startedAtFirstRead<T>(
  open: () => Promise<AsyncGenerator<T, void, undefined>>,
): AsyncGenerator<T, void, undefined> {
  let opened: Promise<AsyncGenerator<T, void, undefined>> | undefined;
  let events: AsyncGenerator<T, void, undefined> | undefined;
  let done = false;
  const stream: AsyncGenerator<T, void, undefined> = {
    next: () => {
      if (events) return events.next();
      if (done) return Promise.resolve({ value: undefined, done: true });
      opened ??= open().then(
        (e) => (events = e),
        (err: unknown) => {
          done = true;
          throw err;
        },
      );
      return opened.then((e) => e.next());
    },
    return: async () => {
      done = true;
      const e = events ?? (await opened?.catch(() => undefined));
      await e?.return(undefined);
      return { value: undefined, done: true };
    },
    throw: async (err: unknown) => {
      await stream.return(undefined);
      throw err;
    },
    [Symbol.asyncIterator]: () => stream,
    [Symbol.asyncDispose]: async () => {
      await stream.return(undefined);
    },
  };
  return stream;
}

/** A stream whose first read is `refusal`, as the handler's own streams refuse (a gate in front of it refuses so). */
// eslint-disable-next-line require-yield
export async function* refusedStream(refusal: Error): AsyncGenerator<StreamResponse, void, undefined> {
  throw refusal;
}
