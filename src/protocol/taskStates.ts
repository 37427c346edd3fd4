import { TaskState } from '@a2a-js/sdk';

/**
 * How the node sorts A2A task states, in one place: the task store, the
 * restart sweep, the direct send path and federation's remote calls all ask
 * the same three questions of a state.
 */

/** States that end a task: nothing may change it after one. */
export const FINISHED_STATES: readonly TaskState[] = [
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
];

/** States a live executor owns (after a restart nobody does). */
export const RUNNING_STATES: readonly TaskState[] = [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING];

/** States in which a task waits for its caller (an answer, credentials). */
export const INTERRUPTED_STATES: readonly TaskState[] = [
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
];

export const isFinished = (state: TaskState | undefined) => state !== undefined && FINISHED_STATES.includes(state);
export const isRunning = (state: TaskState | undefined) => state !== undefined && RUNNING_STATES.includes(state);
export const isInterrupted = (state: TaskState | undefined) =>
  state !== undefined && INTERRUPTED_STATES.includes(state);

/**
 * True for states after which a task takes no more work without its caller: finished, interrupted, or a
 * state this SDK does not know (a newer peer's), which no wait would change.
 */
export const isSettled = (state: TaskState | undefined) =>
  state !== undefined && state !== TaskState.TASK_STATE_UNSPECIFIED && !isRunning(state);
