import { TaskState } from '@a2a-js/sdk';
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { AgentEvent, STATE_HEADERS_KEY } from '@a2a-js/sdk/server';
import type { A2ARequestHandler, AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { FINISHED_STATES, INTERRUPTED_STATES, RUNNING_STATES, isFinished, isRunning } from '../../protocol/taskStates';
import type { TaskEventLog } from '../../store/taskEvents';
import { sendTaskId, type SendKey, type StoredTask, type TaskRows } from '../../store/taskRows';
import { principalOf, subjectTokenOf } from '../../identity/request';
import type { Principal } from '../../principal';
import { requestedSkill, SKILL_FIELD } from '../../protocol/skillExtension';
import type { CardService } from '../card/cardService';
import { newContextId } from './contextIds';
import type { LangoExecutor, TaskTurn } from './executor';
import { invalidParam } from '../../protocol/errorDetails';
import {
  GENERATION_PARAMETERS,
  generationActivated,
  lastEventGeneration,
  parseGeneration,
  responseWithGeneration,
  serviceParameter,
  TaskGenerationMismatchError,
  withGeneration,
} from '../../protocol/generationExtension';
import type { LiveTask, WriteMode } from './liveTask';
import type { LiveTasks } from './liveTasks';
import { sendKeyOf } from './sendKeys';
import { requireTaskId, startedAtFirstRead, toStreamResponse, withHistory } from './streamForms';
import { numberedStream, TaskFollowing } from './taskFollowing';
import { newTask, statusUpdate } from './messages';
import { scopeOf, type TaskReads } from './taskStore';
import type { HeardEvent } from './taskSubscription';
import { checkHistoryLength, checkSendMessage, stillWorking, terminalTask } from './sendChecks';
import { TaskPushConfigs } from './taskPushConfigs';
import { deliverToWebhooks, notifyWebhooks, type TaskPush } from './taskWebhooks';

/** What {@link TaskHandler} works with. */
export interface TaskHandlerOptions {
  /** Runs each turn (`LangoExecutor`). */
  executor: Pick<LangoExecutor, 'execute'>;
  /** The owner of every live task: who runs what, where; claims, cancels. */
  live: LiveTasks;
  /** Tasks the caller may read: live here first, else the rows. */
  tasks: TaskReads;
  /** Push configs (webhook addresses checked when saved) and their delivery (`taskWebhooks.ts`). */
  push: TaskPush;
  cards: CardService;
  /** Whether the node publishes an extended card (`a2a.auth` is configured). */
  extendedCardEnabled: boolean;
  /** The tasks' events under their generations: resumed streams and long polls read them. */
  events: TaskEventLog;
  /** Where a new task's send key is recorded with its first row (`TaskRows.claimSend`). */
  sends: Pick<TaskRows, 'claimSend'>;
  /** `a2a.idempotencyWindow`: how long a send's key keeps a retry from running a second turn. */
  idempotencyWindowMs: number;
  /** `a2a.longPollTimeout`: the longest a GetTask with `A2A-Current-Generation` holds. */
  longPollTimeoutMs: number;
  logger: Logger;
  clock: () => Date;
  /**
   * The skill ids `principal` may name in a skill-targeted send (the card's skills its grant reaches: its
   * tree's agents); none without it.
   */
  skills?: (principal: Principal) => readonly string[];
}

/** ListTasks' page size when the caller names none (the SDK's). */
const DEFAULT_PAGE_SIZE = 50;
/** The states a ListTasks may filter by (UNSPECIFIED: any). */
const LISTED_STATES: readonly TaskState[] = [
  TaskState.TASK_STATE_UNSPECIFIED,
  ...RUNNING_STATES,
  ...FINISHED_STATES,
  ...INTERRUPTED_STATES,
];

/**
 * The node's A2A request handler, every method of the SDK's
 * `A2ARequestHandler`, which the SDK's transports (JSON-RPC, HTTP+JSON, the
 * v0.3 layer) call and whose errors (the SDK's classes) they map to codes
 * and statuses. Malformed input is refused with RequestMalformedError
 * naming the field before any work.
 *
 * A message starts a task, or continues one by claiming it (`LiveTasks`,
 * the owner of every live task, on every replica): the executor runs its
 * turn and publishes each event into the task's live task (the one fold),
 * whose write mode is decided here once: `on-settle` for a blocking
 * SendMessage without a webhook (nobody sees the task before it settles;
 * no progress is published), `every-state` for everything else. The caller
 * of a stream, SubscribeToTask callers and webhooks are listeners of the
 * live task and hear each event once its state is written. A task not live
 * here is read from its row (or followed on the replica running it, when
 * `LiveTasks` has `elsewhere`). Whichever replica a request reaches, it
 * gets the same answer.
 */
export class TaskHandler implements A2ARequestHandler {
  /** The reading side of tasks: as they stand, followed, resumed, waited for. */
  private readonly following: TaskFollowing;
  /** A task's webhooks: saved, read, listed, deleted. */
  private readonly pushConfigs: TaskPushConfigs;

  constructor(private readonly options: TaskHandlerOptions) {
    this.following = new TaskFollowing({
      live: options.live,
      events: options.events,
      find: (taskId, context) => this.find(taskId, context),
      longPollTimeoutMs: options.longPollTimeoutMs,
      logger: options.logger,
    });
    this.pushConfigs = new TaskPushConfigs(options.push.store, (taskId, context) => this.find(taskId, context));
  }

  async getAgentCard(): Promise<AgentCard> {
    return (await this.options.cards.current()).card;
  }

  async getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    if (!this.options.extendedCardEnabled)
      throw new UnsupportedOperationError('this node publishes no extended agent card (a2a.auth is not configured)');
    if (!context.user?.isAuthenticated) return this.getAgentCard();
    return this.options.cards.extended();
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    checkSendMessage(params);
    const configuration = params.configuration;
    const webhook = configuration?.taskPushNotificationConfig;
    const resultOnly = !configuration?.returnImmediately && !webhook;
    const immediately = configuration?.returnImmediately === true;
    const run = await this.start(
      params,
      context,
      resultOnly ? 'on-settle' : 'every-state',
      immediately ? asHeard : undefined,
    );
    const numbered = generationActivated(context) ? withGeneration : withoutGeneration;
    if ('retryOf' in run) {
      // A retry: the first send's task, as the first send's caller gets it (settled, unless it asked not to wait).
      const found = immediately
        ? await this.find(run.retryOf, context)
        : await this.following.settled(run.retryOf, context);
      return withHistory(numbered(found.task, found.generation ?? 0), configuration?.historyLength);
    }
    if (run.events) {
      // The caller gets the task as its first event made it, once written; the turn goes on.
      const first = await run.events.next();
      await run.events.return(undefined);
      if (!first.done && first.value.task)
        return withHistory(numbered(first.value.task, first.value.generation), configuration?.historyLength);
    }
    // The live task's own object, let go and written: the bindings only read it (ProtoJSON, protobuf, v0.3 copies).
    return withHistory(numbered(await run.settled, run.live.generation), configuration?.historyLength);
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const historyLength = params.configuration?.historyLength;
    // As an async generator would, it starts at the first read: a refusal is that read's error.
    // When the caller stops reading, the task runs on (it is written as it goes).
    return startedAtFirstRead(async () => {
      checkSendMessage(params);
      const numbered = generationActivated(context) ? responseWithGeneration : withoutGeneration;
      const run = await this.start(params, context, 'every-state', (heard) =>
        numbered(toStreamResponse(heard, historyLength), heard.generation),
      );
      // A retry streams the first send's task as it stands, then its events (a finished one: the task alone).
      if ('retryOf' in run)
        return numberedStream(
          this.following.followed(run.retryOf, context, false, generationActivated(context)),
          numbered,
        );
      return run.events!;
    });
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    checkHistoryLength(params.historyLength, 'historyLength');
    await this.acceptExtensions(context);
    if (!generationActivated(context))
      return withHistory((await this.find(params.id, context)).task, params.historyLength);
    const asked = serviceParameter(context, GENERATION_PARAMETERS.currentGeneration);
    const found =
      asked === undefined
        ? await this.following.standing(params.id, context)
        : await this.following.past(params.id, parseGeneration(asked, 'A2A-Current-Generation'), context);
    return withHistory(withGeneration(found.task, found.generation ?? 0), params.historyLength);
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    checkHistoryLength(params.historyLength, 'historyLength');
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
      throw invalidParam('pageSize', 'must be between 1 and 100');
    if (params.status !== undefined && !LISTED_STATES.includes(params.status))
      throw invalidParam('status', `is not a task state to filter by: ${String(params.status)}`);
    if (params.statusTimestampAfter && isNaN(Date.parse(params.statusTimestampAfter)))
      throw invalidParam('statusTimestampAfter', 'must be a valid ISO 8601 date string');
    const page = await this.options.tasks.list({ ...params, pageSize }, context);
    return { ...page, tasks: page.tasks.map((task) => withHistory(task, params.historyLength)) };
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const { live: liveTasks, tasks } = this.options;
    const found = await this.find(params.id, context);
    const state = found.task.status?.state;
    if (state === TaskState.TASK_STATE_CANCELED) return found.task;
    if (isFinished(state)) throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    // Here, waiting for its caller, or on another replica: the owner of live tasks cancels it where it is.
    await liveTasks.cancel(found);
    // Whatever settled it first stands: canceled, or an answer that beat the cancel.
    const latest = await tasks.load(params.id, context);
    if (!latest) throw new TaskNotFoundError(`Task not found: ${params.id}`);
    if (latest.status?.state !== TaskState.TASK_STATE_CANCELED)
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    return latest;
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    requireTaskId(params.id);
    await this.acceptExtensions(context);
    const activated = generationActivated(context);
    const lastEventId = activated ? serviceParameter(context, GENERATION_PARAMETERS.lastEventId) : undefined;
    const numbered = activated ? responseWithGeneration : withoutGeneration;
    if (lastEventId !== undefined) {
      const after = lastEventGeneration(lastEventId, params.id);
      const stop = new AbortController();
      try {
        const resumed = await this.following.resumed(params.id, after, context, stop.signal);
        // Every event after the caller's last is still kept: those, then the live ones.
        if (resumed) {
          for await (const { response, generation } of resumed) yield numbered(response, generation);
          return;
        }
      } finally {
        stop.abort();
      }
    }
    // The events after the caller's last are gone (or were never kept): the task as it stands, then its events.
    yield* numberedStream(this.following.followed(params.id, context, lastEventId === undefined, activated), numbered);
  }

  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs.create(params, context);
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs.get(params, context);
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.pushConfigs.list(params, context);
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.pushConfigs.delete(params, context);
  }

  /** The task the caller may read, or TaskNotFoundError (as for a task that does not exist). */
  private async find(taskId: string, context: ServerCallContext): Promise<StoredTask> {
    requireTaskId(taskId);
    const found = await this.options.tasks.find(taskId, context);
    if (!found) throw new TaskNotFoundError(`Task not found: ${taskId}`);
    return found;
  }

  /**
   * Starts one turn of a task (new, or continuing one that waits for the
   * caller's answer, claimed for this turn) as a live task with
   * `writeMode`: the executor's events are folded into it; `events` (with
   * `form`) hears them from the first, each once written, in that form;
   * `settled` resolves with the task once it has settled (and is written):
   * the live task's own object, which nothing changes once settled; what
   * reads it only reads it (a stream never does).
   */
  private async start<T>(
    params: SendMessageRequest,
    context: ServerCallContext,
    writeMode: WriteMode,
    form?: (heard: HeardEvent) => T,
  ): Promise<Run<T> | { retryOf: string }> {
    const { executor, live: liveTasks, logger, clock } = this.options;
    const message = params.message!;
    await this.acceptExtensions(context);
    const principal = principalOf(context.user, context.tenant);
    const startAgent = this.skillOf(params.metadata, principal);
    const send = sendKeyOf(message, context, this.options.idempotencyWindowMs);
    const found = message.taskId ? await this.continued(params, context) : undefined;
    // A new task's id is its send's (a retry derives it again): the store finds the first send by it.
    const taskId = message.taskId || sendTaskId(send, clock().getTime());
    const contextId = message.contextId || found?.task.contextId || newContextId();
    const userMessage: Message = { ...message, contextId, taskId };
    // Checked (the address) and saved before the turn: a webhook refused refuses the message.
    const webhook = params.configuration?.taskPushNotificationConfig;
    if (webhook) await this.options.push.store.save(taskId, context, { ...structuredClone(webhook), taskId });
    // A new task's id is fresh: nothing else can hold it, so its first row is its claim, written with the send's
    // key: a retry through any replica finds the task and who runs it instead of starting another.
    if (!found) {
      const row = newTask({ taskId, contextId }, userMessage, TaskState.TASK_STATE_SUBMITTED, clock());
      const sent = await this.options.sends.claimSend(send, taskId, {
        scope: scopeOf(context),
        task: row,
        generation: 0,
      });
      if (!sent.created) return { retryOf: sent.taskId };
    }
    const claimed = found && (await this.claim(found, message.messageId, send, context));
    if (claimed && 'retryOf' in claimed) return claimed;
    const live = claimed?.live ?? liveTasks.begin(scopeOf(context), { taskId, contextId }, writeMode);
    // A caller that activated the generation extension may resume from any event: they are kept for it.
    if (generationActivated(context)) liveTasks.keepEventsOf(live);
    // A continued task has a row and was seen: whoever saw it may watch its answer.
    if (claimed) writeMode = 'every-state';
    const continuedTask = claimed && { ...claimed.task, history: [...claimed.task.history, userMessage] };
    const turn: TaskTurn = {
      taskId,
      contextId,
      userMessage,
      task: continuedTask,
      principal,
      subjectToken: subjectTokenOf(context.user),
      startAgent,
      headers: context.state.get(STATE_HEADERS_KEY) as TaskTurn['headers'],
      newSession: !message.contextId && !message.taskId,
      resultOnly: writeMode === 'on-settle',
    };
    const publish = (event: AgentExecutionEvent) => liveTasks.fold(live, event, userMessage);
    const events = form ? liveTasks.subscribe(live, form) : undefined;
    if (writeMode === 'every-state') deliverToWebhooks(this.options, live, context);
    const fail = (reason: string) => {
      // A task that failed before its first event still gets one: as claimed, or the caller's message, submitted.
      if (!live.task)
        void publish(
          AgentEvent.task(
            continuedTask ?? newTask({ taskId, contextId }, userMessage, TaskState.TASK_STATE_SUBMITTED, clock()),
          ),
        );
      return publish(
        AgentEvent.statusUpdate(statusUpdate({ taskId, contextId }, TaskState.TASK_STATE_FAILED, clock(), reason)),
      );
    };
    const settled = liveTasks.run(live, async () => {
      try {
        await executor.execute(turn, live, publish);
      } catch (err) {
        logger.warn('agent execution failed', { taskId, error: errorMessage(err) });
        await fail(`Agent execution error: ${errorMessage(err)}`);
      }
      // An executor that returns without settling its task would leave it running forever.
      if (live.phase === 'running') {
        logger.warn('agent execution ended without settling its task', { taskId });
        await fail('Agent execution ended without an answer.');
      }
      // The answer is decided and written (an on-settle task once, now; an every-state one at each state).
      await live.closed;
      const final = live.task!;
      if (writeMode === 'on-settle') await notifyWebhooks(this.options, final, context);
      return final;
    });
    // Whoever awaits it hears a failure to write; nobody else (a stream the caller left, returnImmediately) must crash.
    settled.catch((err: unknown) => logger.warn('task not written', { taskId, error: errorMessage(err) }));
    return { live, settled, events };
  }

  /**
   * The task a message continues, checked: the caller's, of the same
   * context. Whether it may be continued (waiting for its caller, at the
   * generation the caller expects) is its claim's to say: a retry of the
   * message that claimed it is told from another message there.
   */
  private async continued(params: SendMessageRequest, context: ServerCallContext): Promise<StoredTask> {
    const message = params.message!;
    const found = await this.find(message.taskId, context);
    const task = found.task;
    if (message.contextId && task.contextId && message.contextId !== task.contextId)
      throw invalidParam(
        'message.contextId',
        `'${message.contextId}' does not match the contextId '${task.contextId}' of task '${task.id}'`,
      );
    return found;
  }

  /**
   * Claims the task a message continues for its turn (`LiveTasks.claim`),
   * with the send's key and, when the caller activated the generation
   * extension and sent one, the generation it expects: a retry (the key is
   * recorded) gets the task it names; a stale generation is refused with
   * TaskGenerationMismatchError; otherwise a task another turn holds is
   * refused as still working, on this replica or another, exactly as a
   * single node refuses it.
   */
  private async claim(
    found: StoredTask,
    messageId: string,
    send: SendKey,
    context: ServerCallContext,
  ): Promise<{ live: LiveTask; task: Task } | { retryOf: string }> {
    const expected = generationActivated(context)
      ? serviceParameter(context, GENERATION_PARAMETERS.ifGenerationMatch)
      : undefined;
    const generation = expected === undefined ? undefined : parseGeneration(expected, 'A2A-If-Generation-Match');
    const claim = await this.options.live.claim(found, messageId, { send, generation });
    if (claim.won) return claim;
    const id = found.task.id;
    if (claim.sentAs) return { retryOf: claim.sentAs };
    if (claim.state === undefined) throw new TaskNotFoundError(`Task not found: ${id}`);
    if (generation !== undefined) {
      // A task running elsewhere has a row older than its events: its generation is its latest event's.
      const current = isRunning(claim.state)
        ? ((await this.following.standing(id, context)).generation ?? 0)
        : claim.generation;
      if (current !== generation) throw new TaskGenerationMismatchError(id, generation, current ?? 0);
    }
    // Ended meanwhile (a cancel), or gone (purged); else a turn holds it.
    if (isFinished(claim.state)) throw terminalTask(id, claim.state);
    throw stillWorking(id);
  }

  /**
   * The agent a skill-targeted send names (`skillExtension.ts`), checked against the skills `principal` may
   * use: one outside its grant is no such skill. Undefined for a send naming none.
   */
  private skillOf(metadata: Record<string, unknown> | undefined, principal: Principal): string | undefined {
    const asked = requestedSkill(metadata);
    if (asked === undefined) return undefined;
    const skills = this.options.skills?.(principal) ?? [];
    if (typeof asked === 'string' && skills.includes(asked)) return asked;
    const why = typeof asked === 'string' ? `no such skill "${asked.slice(0, 64)}"` : asked.invalid;
    throw invalidParam(SKILL_FIELD, `${why}; the skills you may use: ${skills.join(', ') || 'none'}`);
  }

  /** Keeps of the extensions the caller asked for only those the card offers, as the SDK does. */
  private async acceptExtensions(context: ServerCallContext): Promise<void> {
    if (!context.requestedExtensions?.length) return;
    const offered = new Set(((await this.getAgentCard()).capabilities?.extensions ?? []).map((e) => e.uri));
    context.setRequestedExtensions(context.requestedExtensions.filter((uri) => offered.has(uri)));
  }
}

/** The heard event itself (a returnImmediately SendMessage reads the task of the first). */
const asHeard = (heard: HeardEvent): HeardEvent => heard;

/** A turn started: its live task, the task once settled, and (with a form) its events. */
interface Run<T> {
  live: LiveTask;
  settled: Promise<Task>;
  events?: AsyncGenerator<T, void, undefined>;
}

/** A request that did not activate the generation extension gets its task or event as it is. */
const withoutGeneration = <T>(value: T): T => value;
