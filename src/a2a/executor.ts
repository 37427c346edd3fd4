import { TaskState } from '@a2a-js/sdk';
import type { Message, Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { TurnResult, TurnRunner } from '../agent/turn';
import type { TextDeltaEvent } from '../agent/events';
import type { Principal } from '../principal';
import { childTraceparent, parseTraceparent, TRACEPARENT_KEY } from '../log/traceContext';
import type { Logger } from '../log/logger';
import { messageText, newTask, statusUpdate } from './messages';
import { describeProgress, progressMetadata } from './progress';
import { AnswerArtifact } from './answerArtifact';

/**
 * Publishes one event of a task into its live task (`LiveTasks.fold`);
 * resolves once the state it carries is written, when it must be.
 */
export type PublishEvent = (event: AgentExecutionEvent) => Promise<void> | undefined;

/** One turn of a task, as the request handler asks for it. */
export interface TaskTurn {
  taskId: string;
  contextId: string;
  /** The caller's message (with its taskId and contextId set). */
  userMessage: Message;
  /** The task as stored, when the message continues it (its history already ends with `userMessage`). */
  task?: Task;
  principal: Principal;
  /** The request's HTTP headers (a W3C `traceparent` among them). */
  headers?: Record<string, string | string[] | undefined>;
  /** The message starts a new conversation: the session has no history to read. */
  newSession: boolean;
  /** The caller reads only the final task: no progress is published, and a new task starts out working. */
  resultOnly: boolean;
}

/** One task this process is working on (or holding open for the user's answer). */
interface LiveTask {
  readonly contextId: string;
  readonly publish: PublishEvent;
  readonly controller: AbortController;
  /** The answer as it streams (see AnswerArtifact). */
  readonly answer: AnswerArtifact;
  /** Set once a terminal state (or input-required) is published: nothing may follow it. */
  settled: boolean;
}

/** Options for {@link LangoExecutor}. */
export interface LangoExecutorOptions {
  runner: TurnRunner;
  logger: Logger;
  clock: () => Date;
  /**
   * Checks an inbound message's metadata before any work (federation's hop
   * check): a returned reason fails the task with it, so a delegation loop is
   * refused at the node it comes back to.
   */
  admit?: (metadata: Record<string, unknown>) => string | undefined;
}

/**
 * Maps one A2A message to one turn of the agent tree: the task goes
 * submitted → working (a status message per delegation, tool and remote
 * call) → completed with the answer in an artifact (the closing status
 * carries no copy of it), input-required with the question in the status
 * message, or failed with a readable reason. The A2A contextId is the
 * session, so follow-ups continue the conversation and an answer to an
 * input-required task resumes it. Cancellation aborts the turn through its
 * AbortSignal; whoever settles the task first wins, so no `completed` can
 * follow `canceled`.
 * @example
 * const executor = new LangoExecutor({ runner, logger, clock: () => new Date() });
 * await executor.execute(turn, (event) => liveTasks.fold(live, event, turn.userMessage));
 */
export class LangoExecutor {
  private readonly live = new Map<string, LiveTask>();

  constructor(private readonly options: LangoExecutorOptions) {}

  /** How many turns are running now (for /readyz and tests). */
  get running(): number {
    let count = 0;
    for (const task of this.live.values()) if (!task.settled) count++;
    return count;
  }

  /** Whether a turn of this task is running now (not settled, not waiting for the caller's answer). */
  isWorking(taskId: string): boolean {
    const live = this.live.get(taskId);
    return live !== undefined && !live.settled;
  }

  /** Runs one turn of the task, publishing its events; resolves once the task has settled (or the turn ended). */
  async execute(turn: TaskTurn, publish: PublishEvent): Promise<void> {
    const { taskId, contextId } = turn;
    const ids = { taskId, contextId };
    const { clock } = this.options;
    const { metadata, traceId } = withTraceContext(turn);
    const logger = this.options.logger.child({ taskId, traceId });
    const live: LiveTask = {
      contextId,
      publish,
      controller: new AbortController(),
      answer: new AnswerArtifact(ids),
      settled: false,
    };
    this.live.set(taskId, live);

    // A blocking SendMessage without a webhook reads only the final task: its progress goes nowhere but into
    // the stored history (streams and subscribers keep theirs).
    const quiet = turn.resultOnly;
    // A task event comes first, on follow-ups too (the stored task). A new task of a result-only caller starts
    // out working: nobody sees it before it settles, so `submitted` is one event less.
    const startsWorking = quiet && !turn.task;
    let started = publish(
      AgentEvent.task(
        turn.task ??
          newTask(
            ids,
            turn.userMessage,
            startsWorking ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_SUBMITTED,
            clock(),
          ),
      ),
    );
    const refusal = this.options.admit?.(metadata);
    if (refusal) {
      logger.warn('request refused', { reason: refusal });
      this.settle(taskId, TaskState.TASK_STATE_FAILED, `refused: ${refusal}`);
      this.live.delete(taskId);
      return;
    }
    if (!startsWorking)
      started = publish(AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_WORKING, clock())));
    // A caller who watches the task sees it working before the turn takes the event loop: the turn starts
    // once that state is written (and so on its way out).
    if (!quiet) await started;

    let result: TurnResult | undefined;
    const startedAt = Date.now();
    try {
      const steps = this.options.runner.run({
        principal: turn.principal,
        sessionId: contextId,
        taskId,
        text: messageText(turn.userMessage),
        signal: live.controller.signal,
        newSession: turn.newSession && !turn.task,
        metadata,
        // The answering agent's text reaches streams and subscribers as it is generated, handed over here
        // rather than yielded through the runner's generators (a hop per layer and chunk).
        onTextDelta: quiet ? ignoreText : (event) => this.relayText(live, event),
      });
      for (;;) {
        const step = await steps.next();
        if (step.done) {
          result = step.value;
          if (!live.settled) this.finish(live, taskId, result);
          logger.debug('task settled', { status: result.status, agent: result.author, ms: Date.now() - startedAt });
          break;
        }
        if (quiet || live.settled) continue;
        // A tool call, a delegation or a refusal turns the text streamed before it into commentary.
        const chunk = live.answer.chunkFor(step.value);
        if (chunk) void publish(AgentEvent.artifactUpdate(chunk));
        const text = describeProgress(step.value);
        if (text !== undefined) {
          void publish(
            AgentEvent.statusUpdate(
              statusUpdate(ids, TaskState.TASK_STATE_WORKING, clock(), text, progressMetadata(step.value)),
            ),
          );
        }
      }
    } catch (err) {
      if (live.settled) return; // canceled (or shut down) while running: that state stands
      const aborted = err instanceof Error && err.name === 'AbortError';
      const reason = aborted
        ? 'the turn was aborted'
        : `the agent failed: ${err instanceof Error ? err.message : String(err)}`;
      logger.warn('turn failed', { reason });
      this.settle(taskId, TaskState.TASK_STATE_FAILED, reason);
      return;
    } finally {
      // A turn that ended in input-required (or auth-required) stays known until answered or canceled.
      const waiting = result?.status === 'input-required' || result?.status === 'auth-required';
      if (this.live.get(taskId) === live && !waiting) this.live.delete(taskId);
    }
  }

  /** One streamed piece of the answer, published as an artifact chunk unless the task has settled. */
  private relayText(live: LiveTask, event: TextDeltaEvent): void {
    if (live.settled) return;
    const chunk = live.answer.chunkFor(event);
    if (chunk) void live.publish(AgentEvent.artifactUpdate(chunk));
  }

  /** Cancels the turn of `taskId` if one is running here (also a cancel asked through another replica); true if one was. */
  cancelRunning(taskId: string): boolean {
    const live = this.live.get(taskId);
    if (!live || live.settled) return false;
    this.settle(taskId, TaskState.TASK_STATE_CANCELED, 'Task canceled by the caller.');
    live.controller.abort();
    return true;
  }

  /** Lets go of a task this executor holds open for its caller's answer (it was canceled). */
  release(taskId: string): void {
    const live = this.live.get(taskId);
    if (live?.settled) this.live.delete(taskId);
  }

  /** Fails every running turn (the node is stopping) so no task is left `working`. */
  abortAll(reason: string): void {
    for (const [taskId, live] of this.live) {
      if (live.settled) continue;
      this.settle(taskId, TaskState.TASK_STATE_FAILED, reason);
      live.controller.abort();
    }
    this.live.clear();
  }

  private finish(live: LiveTask, taskId: string, result: TurnResult): void {
    const metadata = { agent: result.author };
    switch (result.status) {
      case 'completed':
        void live.publish(AgentEvent.artifactUpdate(live.answer.last(result.text, result.author)));
        // The answer lives in the artifact only: clients that join artifacts and status text would show it twice.
        this.settle(taskId, TaskState.TASK_STATE_COMPLETED, undefined, metadata);
        break;
      case 'input-required':
        this.settle(taskId, TaskState.TASK_STATE_INPUT_REQUIRED, result.text, metadata);
        break;
      case 'auth-required':
        this.settle(taskId, TaskState.TASK_STATE_AUTH_REQUIRED, result.text, metadata);
        break;
      case 'failed':
        this.settle(taskId, TaskState.TASK_STATE_FAILED, result.text || 'the agent could not answer', metadata);
        break;
    }
  }

  /** Publishes the task's closing state once; later attempts are ignored. */
  private settle(taskId: string, state: TaskState, text: string | undefined, metadata?: Record<string, unknown>): void {
    const live = this.live.get(taskId);
    if (!live || live.settled) return;
    live.settled = true;
    void live.publish(
      AgentEvent.statusUpdate(
        statusUpdate({ taskId, contextId: live.contextId }, state, this.options.clock(), text, metadata),
      ),
    );
  }
}

/** A result-only caller sees no progress: its text deltas go nowhere. */
const ignoreText = (): void => {};

/**
 * The message metadata the turn runs with, carrying a W3C `traceparent`:
 * the caller's (message metadata first, then the HTTP header), else a new
 * trace. Every log line of the task and every hop onward share its trace id.
 */
function withTraceContext(turn: TaskTurn): { metadata: Record<string, unknown>; traceId: string } {
  const metadata: Record<string, unknown> = { ...(turn.userMessage.metadata ?? {}) };
  const header = turn.headers?.[TRACEPARENT_KEY];
  const inbound = parseTraceparent(metadata[TRACEPARENT_KEY])
    ? metadata[TRACEPARENT_KEY]
    : Array.isArray(header)
      ? header[0]
      : header;
  const parent = parseTraceparent(inbound);
  if (parent) {
    metadata[TRACEPARENT_KEY] = inbound;
    return { metadata, traceId: parent.traceId };
  }
  const fresh = childTraceparent(undefined);
  metadata[TRACEPARENT_KEY] = fresh.traceparent;
  return { metadata, traceId: fresh.traceId };
}
