import { Role } from '@a2a-js/sdk';
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
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { CardService } from './cardRoutes';
import { NEW_CONTEXT_KEY, RESULT_ONLY_KEY } from './callFlags';
import { newContextId } from './contextIds';
import { DirectStream } from './directStream';
import type { TasksElsewhere } from './liveTasks';
import { ResultOnlySend } from './resultOnlySend';
import { scopeOf } from './taskStore';

/** Gives a message that starts a conversation its new contextId (see newContextId), and marks it as new. */
function noteNewContext(params: SendMessageRequest, context: ServerCallContext): void {
  const message = params.message;
  if (!message || message.contextId || message.taskId) return;
  message.contextId = newContextId();
  context.state.set(NEW_CONTEXT_KEY, true);
}

/**
 * The request handler the transports call: the SDK's DefaultRequestHandler
 * behind a gate that refuses malformed input with RequestMalformedError
 * (-32602 / HTTP 400) naming the field, so bad input never reaches the agent,
 * and that answers card requests from the live {@link CardService} (the tree
 * can change after start; the SDK's handler holds one card forever).
 */
export class GuardedRequestHandler implements A2ARequestHandler {
  private readonly inner: A2ARequestHandler;
  private readonly cards: CardService;
  private readonly extendedCardEnabled: boolean;
  private readonly resultOnly?: ResultOnlySend;
  private readonly directStream?: DirectStream;
  private readonly isWorking: (taskId: string) => boolean;
  private readonly cancelElsewhere?: (taskId: string, context: ServerCallContext) => Promise<void>;
  private readonly elsewhere?: TasksElsewhere;

  constructor(options: {
    /** The SDK's handler, for every request the direct paths do not take. */
    inner: A2ARequestHandler;
    cards: CardService;
    extendedCardEnabled: boolean;
    /** Runs a blocking new task that set no webhook without the SDK's per-event work (see ResultOnlySend). */
    resultOnly?: ResultOnlySend;
    /** Streams a new task without the SDK's per-event work (see DirectStream). */
    directStream?: DirectStream;
    /** Whether a turn of this task is running now (the executor's view). */
    isWorking?: (taskId: string) => boolean;
    /** Asks the replica running a task not running here to cancel it (several replicas on PostgreSQL). */
    cancelElsewhere?: (taskId: string, context: ServerCallContext) => Promise<void>;
    /** Follows a task running on another replica (several replicas on PostgreSQL). */
    elsewhere?: TasksElsewhere;
  }) {
    this.inner = options.inner;
    this.cards = options.cards;
    this.extendedCardEnabled = options.extendedCardEnabled;
    this.resultOnly = options.resultOnly;
    this.directStream = options.directStream;
    this.isWorking = options.isWorking ?? (() => false);
    this.cancelElsewhere = options.cancelElsewhere;
    this.elsewhere = options.elsewhere;
  }

  async getAgentCard(): Promise<AgentCard> {
    return (await this.cards.current()).card;
  }

  async getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    if (!this.extendedCardEnabled)
      throw new UnsupportedOperationError('this node publishes no extended agent card (a2a.auth is not configured)');
    if (!context.user?.isAuthenticated) return this.getAgentCard();
    return this.cards.extended();
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    checkSendMessage(params);
    await this.refuseWhileWorking(params, context);
    noteNewContext(params, context);
    const configuration = params.configuration;
    if (!configuration?.returnImmediately && !configuration?.taskPushNotificationConfig) {
      context.state.set(RESULT_ONLY_KEY, true);
    }
    if (this.resultOnly && ResultOnlySend.applies(params, context)) return this.resultOnly.send(params, context);
    return this.inner.sendMessage(params, context);
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    checkSendMessage(params);
    noteNewContext(params, context);
    if (this.directStream && DirectStream.applies(params, context)) return this.directStream.stream(params, context);
    if (!params.message?.taskId) return this.inner.sendMessageStream(params, context);
    const inner = this.inner;
    const check = () => this.refuseWhileWorking(params, context);
    return (async function* () {
      await check();
      yield* inner.sendMessageStream(params, context);
    })();
  }

  /**
   * A message to a task whose turn is still running would start a second turn of the same task beside
   * it; the caller is told to wait for the answer or cancel. Only the task's owner learns it is
   * working: for anyone else the task does not exist, as the SDK will say.
   */
  private async refuseWhileWorking(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const taskId = params.message?.taskId;
    if (!taskId || !this.isWorking(taskId)) return;
    const visible = await this.inner
      .getTask({ tenant: params.tenant ?? '', id: taskId, historyLength: 0 }, context)
      .then(() => true)
      .catch(() => false);
    if (visible)
      throw new UnsupportedOperationError(`task ${taskId} is still working: wait for its answer or cancel it first`);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    checkHistoryLength(params.historyLength, 'historyLength');
    return this.inner.getTask(params, context);
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    checkHistoryLength(params.historyLength, 'historyLength');
    return this.inner.listTasks(params, context);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    if (this.cancelElsewhere && params.id && !this.isWorking(params.id)) await this.cancelElsewhere(params.id, context);
    return this.inner.cancelTask(params, context);
  }

  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    if (!params.taskId) throw new RequestMalformedError('taskId is required');
    if (!params.url) throw new RequestMalformedError('url is required');
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { elsewhere, inner } = this;
    if (!elsewhere || this.isWorking(params.id)) return inner.resubscribe(params, context);
    // Not running here: the replica running it is followed through the shared events; if none runs it, the SDK
    // answers from the row (the task as it stands, or the spec's error for a finished one).
    return (async function* () {
      const stop = new AbortController();
      let followed = false;
      try {
        for await (const response of elsewhere.follow(scopeOf(context), params.id, stop.signal)) {
          followed = true;
          yield response;
        }
      } finally {
        stop.abort();
      }
      if (!followed) yield* inner.resubscribe(params, context);
    })();
  }
}

/** Refuses a message the agent could not act on, naming the field. */
export function checkSendMessage(params: SendMessageRequest): void {
  const message = params.message;
  if (!message) throw new RequestMalformedError('message is required');
  if (!message.messageId) throw new RequestMalformedError('message.messageId is required');
  if (message.role !== Role.ROLE_USER)
    throw new RequestMalformedError('message.role must be ROLE_USER (a message from the caller)');
  if (!Array.isArray(message.parts) || message.parts.length === 0) {
    throw new RequestMalformedError('message.parts must contain at least one part');
  }
  message.parts.forEach((part, index) => {
    const content = part?.content;
    if (!content)
      throw new RequestMalformedError(`message.parts[${index}] has no content: expected text, data, url or raw`);
    if (content.$case === 'text' && typeof content.value !== 'string') {
      throw new RequestMalformedError(`message.parts[${index}].text must be a string`);
    }
  });
  checkHistoryLength(params.configuration?.historyLength, 'configuration.historyLength');
}

function checkHistoryLength(value: number | undefined, field: string): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 0) throw new RequestMalformedError(`${field} must be a non-negative integer`);
}
