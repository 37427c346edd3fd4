import type { StreamResponse } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { isFinished, isRunning, isSettled } from '../../protocol/taskStates';
import type { Logger } from '../../log/logger';
import type { TaskEventLog } from '../../store/taskEvents';
import type { StoredTask } from '../../store/taskRows';
import type { LiveTasks } from './liveTasks';
import { waitForGeneration } from './longPoll';
import { resumeAfter, type NumberedResponse } from './resume';
import { requireTaskId, terminalSubscription, toStreamResponse } from './streamForms';
import { readerOf } from './taskStore';

/** What {@link TaskFollowing} reads with. */
export interface TaskFollowingOptions {
  /** The owner of every live task: here, or where its row says. */
  live: LiveTasks;
  /** The tasks' events under their generations. */
  events: TaskEventLog;
  /** The task the caller may read, or TaskNotFoundError. */
  find(taskId: string, context: ServerCallContext): Promise<StoredTask>;
  /** `a2a.longPollTimeout`. */
  longPollTimeoutMs: number;
  /** Where a long poll says it waits (debug): what an operator, or a test, sees of a held GetTask. */
  logger: Logger;
}

/**
 * The reading side of a task, with its generation (issue 27): the task as
 * it stands, its events until it settles (here, or followed on the replica
 * running it), the events after a generation (a resumed stream), the task
 * once a generation has passed (a long poll) and once settled (a send's
 * retry). The request handler (`taskHandler.ts`) answers SubscribeToTask,
 * GetTask and retried sends with these.
 */
export class TaskFollowing {
  constructor(private readonly options: TaskFollowingOptions) {}

  /**
   * The task as it stands, then its events until it settles: live here, or
   * followed on the replica running it, else its row alone. A finished task
   * is refused as the spec says, unless `refuseFinished` is false (a resumed
   * stream whose events are gone, a send's retry: the finished task is its
   * last word). `keep`: the caller holds generations and may come back with
   * one, so the task's events are kept from here on.
   */
  async *followed(
    taskId: string,
    context: ServerCallContext,
    refuseFinished: boolean,
    keep = false,
  ): AsyncGenerator<NumberedResponse, void, undefined> {
    requireTaskId(taskId);
    const { live: liveTasks } = this.options;
    const found = await liveTasks.locate(readerOf(context), taskId);
    if (!found) throw new TaskNotFoundError(`Task not found: ${taskId}`);
    if (found.runs === 'here') {
      // The task as it stands, then every event after it: taken together, so nothing folded falls between.
      const { live } = found;
      if (keep) liveTasks.keepEventsOf(live);
      const current = structuredClone(live.task!);
      const generation = live.generation;
      const events = liveTasks.subscribe(live, (heard) => ({
        response: toStreamResponse(heard, undefined),
        generation: heard.generation,
      }));
      yield { response: { payload: { $case: 'task', value: current } }, generation };
      yield* events;
      return;
    }
    const standing: NumberedResponse = {
      response: { payload: { $case: 'task', value: found.task } },
      generation: found.generation ?? 0,
    };
    if (isFinished(found.task.status?.state)) {
      if (refuseFinished) throw terminalSubscription(taskId, found.task);
      yield standing;
      return;
    }
    const elsewhere = liveTasks.elsewhere;
    // It waits for its caller (or no replica shares its events): its row is all there is.
    if (found.runs === 'nowhere' || !elsewhere) {
      yield standing;
      return;
    }
    const stop = new AbortController();
    let followed = false;
    try {
      for await (const next of elsewhere.follow(found.scope, taskId, stop.signal)) {
        followed = true;
        yield next;
      }
    } finally {
      stop.abort();
    }
    // No replica runs it (it waits for its caller's answer): its row is all there is.
    if (!followed) yield standing;
  }

  /** The events after generation `after` and the live ones (`resume.ts`), or undefined when some are gone. */
  async resumed(taskId: string, after: number, context: ServerCallContext, signal: AbortSignal) {
    const found = await this.standing(taskId, context);
    const held = this.options.live.held(readerOf(context), taskId);
    if (held) this.options.live.keepEventsOf(held);
    const state = found.task.status?.state;
    const task = { key: { ...found.scope, taskId }, generation: found.generation ?? 0, settled: isSettled(state) };
    return resumeAfter(this.options.events, task, after, signal);
  }

  /**
   * The task as it stands, with its generation: live here, else as its
   * latest event left it on the replica running it (its row is written only
   * at state changes), else its row.
   */
  async standing(taskId: string, context: ServerCallContext): Promise<StoredTask> {
    const found = await this.options.find(taskId, context);
    const { live: liveTasks } = this.options;
    const elsewhere = liveTasks.elsewhere;
    if (!elsewhere || liveTasks.held(readerOf(context), taskId) || !isRunning(found.task.status?.state)) return found;
    const current = await elsewhere.current(found.scope, taskId);
    return current && current.generation > (found.generation ?? 0) ? { scope: found.scope, ...current } : found;
  }

  /**
   * The task as it stands once its generation is past `after`, or after
   * `a2a.longPollTimeout` as it is then (a finished task at once): GetTask
   * with `A2A-Current-Generation`.
   */
  async past(taskId: string, after: number, context: ServerCallContext): Promise<StoredTask> {
    const found = await this.standing(taskId, context);
    if (isFinished(found.task.status?.state) || (found.generation ?? 0) > after) return found;
    const { live: liveTasks, events, longPollTimeoutMs } = this.options;
    const key = { ...found.scope, taskId };
    const held = liveTasks.held(readerOf(context), taskId);
    // A task not running here moves when a turn claims it: that turn keeps its events for this wait to hear.
    const unwatch = liveTasks.watch(found.scope, taskId);
    try {
      // Logged as the wait begins, in the same step: anything after this line that moves the task wakes it.
      this.options.logger.debug('long poll waiting', { taskId, after });
      const moved = await waitForGeneration(liveTasks, events, { held, key, after, timeoutMs: longPollTimeoutMs });
      return moved ? await this.standing(taskId, context) : found;
    } finally {
      unwatch();
    }
  }

  /** The task of an earlier send once its turn is over (as its own blocking caller gets it). */
  async settled(taskId: string, context: ServerCallContext): Promise<StoredTask> {
    const held = this.options.live.held(readerOf(context), taskId);
    if (held?.settled) {
      const task = structuredClone(await held.settled);
      return { scope: held.scope, task, generation: held.generation };
    }
    // Followed to its settling event, wherever it runs; then read as its row holds it.
    for await (const _ of this.followed(taskId, context, false)) void _;
    return this.options.find(taskId, context);
  }
}

/** The numbered responses as a stream, as `numbered` makes each (with its generation, or as it is). */
export async function* numberedStream(
  responses: AsyncGenerator<NumberedResponse, void, undefined>,
  numbered: (response: StreamResponse, generation: number) => StreamResponse,
): AsyncGenerator<StreamResponse, void, undefined> {
  for await (const { response, generation } of responses) yield numbered(response, generation);
}
