import { TaskState } from '@a2a-js/sdk';
import type { Message, Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { TurnResult, TurnRunner } from '../../agent/turn';
import type { TextDeltaEvent } from '../../agent/events';
import { isOwner, type Principal, type SubjectToken } from '../../principal';
import { TurnAccount } from '../../observation/accounting';
import { ACCOUNT_METADATA_KEY, DELEGATION_METADATA_KEY, delegationRecord } from '../../protocol/accounting';
import { childTraceparent, parseTraceparent, TRACEPARENT_KEY } from '../../log/traceContext';
import type { Logger } from '../../log/logger';
import { messageText, newTask, statusUpdate } from './messages';
import { describeProgress, progressMetadata } from './progress';
import type { LiveTask } from './liveTasks';

/**
 * Publishes one event of a task into its live task (`LiveTasks.fold`);
 * resolves once the state it carries is written, when it must be.
 */
export type PublishEvent = (event: AgentExecutionEvent) => Promise<void> | undefined;

/**
 * Message metadata naming the agent of the tree a turn starts at (the
 * console's chat: the orchestrator, a specialist or a remote agent). Heard
 * from the node's owner only; the agent must be in the tree the caller's
 * grant gives, else the turn starts at the root (as `TurnInput.startAgent`).
 */
export const START_AGENT_KEY = 'lango.agent';

/** One turn of a task, as the request handler asks for it. */
export interface TaskTurn {
  taskId: string;
  contextId: string;
  /** The caller's message (with its taskId and contextId set). */
  userMessage: Message;
  /** The task as claimed (working), when the message continues it (its history already ends with `userMessage`). */
  task?: Task;
  principal: Principal;
  /** The token the caller presented, for remote agents that call on its behalf; never stored. */
  subjectToken?: SubjectToken;
  /** The agent a skill-targeted send names (the skill's owner): the turn starts there, no routing step. */
  startAgent?: string;
  /** The request's HTTP headers (a W3C `traceparent` among them). */
  headers?: Record<string, string | string[] | undefined>;
  /** The message starts a new conversation: the session has no history to read. */
  newSession: boolean;
  /** The caller reads only the final task: no progress is published, and a new task starts out working. */
  resultOnly: boolean;
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
  /**
   * Where the node is, for each task's account of its turn (`observability.accounting`): its public URL and
   * card name. Without it no account is kept.
   */
  account?: () => { node: string; name: string };
}

/**
 * Runs one turn of a task, holding nothing between turns: it maps one A2A
 * message to one turn of the agent tree and publishes its events into the
 * task's live task, which owns everything else (`liveTasks.ts`: the phase,
 * the abort signal, the answer artifact). The task goes submitted → working
 * (a status message per delegation, tool and remote call) → completed with
 * the answer in an artifact (the closing status carries no copy of it),
 * input-required with the question in the status message, or failed with a
 * readable reason. The A2A contextId is the session, so follow-ups continue
 * the conversation and an answer to an input-required task resumes it. A
 * cancel folds `canceled` into the live task and aborts the turn through
 * its signal; whatever settles the live task first wins, so no `completed`
 * can follow `canceled`.
 * @example
 * const executor = new LangoExecutor({ runner, logger, clock: () => new Date() });
 * await executor.execute(turn, live, (event) => liveTasks.fold(live, event, turn.userMessage));
 */
export class LangoExecutor {
  constructor(private readonly options: LangoExecutorOptions) {}

  /**
   * Runs one turn of the live task `live`, publishing its events; resolves
   * once the turn has ended (its task settled, or it was ended from outside).
   */
  async execute(turn: TaskTurn, live: LiveTask, publish: PublishEvent): Promise<void> {
    const { taskId, contextId } = turn;
    const ids = { taskId, contextId };
    const { clock } = this.options;
    const { metadata, traceId } = withTraceContext(turn);
    const logger = this.options.logger.child({ taskId, traceId });
    const account = this.options.account
      ? new TurnAccount({ ...this.options.account(), principal: turn.principal, taskId })
      : undefined;
    const delegation = delegationRecord(turn.principal);
    /**
     * Publishes the task's closing state, unless it has one already (a cancel, the node stopping), with the
     * turn's account and its delegation chain in the event's (so the task's) metadata: not in the status message's.
     */
    const settle: Settle = (state, text, agent) => {
      if (live.phase !== 'running') return;
      const update = statusUpdate(ids, state, clock(), text, agent);
      if (account) update.metadata = { ...update.metadata, [ACCOUNT_METADATA_KEY]: account.finish() };
      if (delegation) update.metadata = { ...update.metadata, [DELEGATION_METADATA_KEY]: delegation };
      void publish(AgentEvent.statusUpdate(update));
    };

    // A blocking SendMessage without a webhook reads only the final task: its progress goes nowhere but into
    // the stored history (streams and subscribers keep theirs).
    const quiet = turn.resultOnly;
    // A task event comes first: a continued task as claimed (working), a new one submitted. A new task of a
    // result-only caller starts out working: nobody sees it before it settles, so `submitted` is one event less.
    const startsWorking = quiet || turn.task !== undefined;
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
      settle(TaskState.TASK_STATE_FAILED, `refused: ${refusal}`);
      return;
    }
    if (!startsWorking)
      started = publish(AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_WORKING, clock())));
    // A caller who watches the task sees it working before the turn takes the event loop: the turn starts
    // once that state is written (and so on its way out).
    if (!quiet) await started;

    const startedAt = Date.now();
    try {
      const steps = this.options.runner.run({
        principal: turn.principal,
        subjectToken: turn.subjectToken,
        startAgent: turn.startAgent,
        account,
        sessionId: contextId,
        taskId,
        text: messageText(turn.userMessage),
        signal: live.controller.signal,
        newSession: turn.newSession && !turn.task,
        ...startAgentOf(turn),
        metadata,
        // The answering agent's text reaches streams and subscribers as it is generated, handed over here
        // rather than yielded through the runner's generators (a hop per layer and chunk).
        onTextDelta: quiet ? ignoreText : (event) => relayText(live, publish, event),
      });
      for (;;) {
        const step = await steps.next();
        if (step.done) {
          const result = step.value;
          if (live.phase === 'running') finish(result, live, publish, settle);
          logger.debug('task settled', { status: result.status, agent: result.author, ms: Date.now() - startedAt });
          break;
        }
        if (quiet || live.phase !== 'running') continue;
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
      if (live.phase !== 'running') return; // canceled (or shut down) while running: that state stands
      const aborted = err instanceof Error && err.name === 'AbortError';
      const reason = aborted
        ? 'the turn was aborted'
        : `the agent failed: ${err instanceof Error ? err.message : String(err)}`;
      logger.warn('turn failed', { reason });
      settle(TaskState.TASK_STATE_FAILED, reason);
    }
  }
}

/** Settles the task as the turn ended: the answer's closing chunk then `completed`, `input-required`, `auth-required` or `failed`. */
function finish(result: TurnResult, live: LiveTask, publish: PublishEvent, settle: Settle): void {
  const metadata = { agent: result.author };
  switch (result.status) {
    case 'completed':
      void publish(AgentEvent.artifactUpdate(live.answer.last(result.text, result.author)));
      // The answer lives in the artifact only: clients that join artifacts and status text would show it twice.
      settle(TaskState.TASK_STATE_COMPLETED, undefined, metadata);
      break;
    case 'input-required':
      settle(TaskState.TASK_STATE_INPUT_REQUIRED, result.text, metadata);
      break;
    case 'auth-required':
      settle(TaskState.TASK_STATE_AUTH_REQUIRED, result.text, metadata);
      break;
    case 'failed':
      settle(TaskState.TASK_STATE_FAILED, result.text || 'the agent could not answer', metadata);
      break;
  }
}

/** Publishes the task's closing state, unless it has one already. */
type Settle = (state: TaskState, text: string | undefined, metadata?: Record<string, unknown>) => void;

/** One streamed piece of the answer, published as an artifact chunk while the task runs. */
function relayText(live: LiveTask, publish: PublishEvent, event: TextDeltaEvent): void {
  if (live.phase !== 'running') return;
  const chunk = live.answer.chunkFor(event);
  if (chunk) void publish(AgentEvent.artifactUpdate(chunk));
}

/** The agent the owner's message asks to start at ({@link START_AGENT_KEY}), when it names one. */
function startAgentOf(turn: TaskTurn): { startAgent?: string } {
  const named = turn.userMessage.metadata?.[START_AGENT_KEY];
  return typeof named === 'string' && named && isOwner(turn.principal) ? { startAgent: named } : {};
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
