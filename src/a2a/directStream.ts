import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import type { SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { AgentEvent, RequestContext } from '@a2a-js/sdk/server';
import type {
  AgentExecutionEvent,
  AgentExecutor,
  ExecutionEventBusManager,
  PushNotificationSender,
  PushNotificationStore,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { isInterrupted, isSettled } from '../protocol/taskStates';
import { newContextId } from './contextIds';
import type { LiveTasks } from './liveTasks';
import { newTask, statusUpdate } from './messages';
import { scopeOf } from './taskStore';

/** What {@link DirectStream} works with: the node's executor, live tasks, the SDK handler's buses and push. */
export interface DirectStreamOptions {
  executor: AgentExecutor;
  live: LiveTasks;
  /** The manager the SDK's handler uses too, so CancelTask and SubscribeToTask find this task's bus. */
  buses: ExecutionEventBusManager;
  logger: Logger;
  clock: () => Date;
  /** Webhooks registered on the task while it runs hear its events. */
  push: { store: PushNotificationStore; sender: PushNotificationSender };
}

/** One event on its way to the stream, with the write it must wait for. */
interface Pending {
  event: AgentExecutionEvent;
  written: Promise<void> | undefined;
  /** For a task event: the task as folded up to it. */
  task?: Task;
}

/**
 * A `SendMessageStreaming` that starts a new task, run without the SDK's
 * per-event load, merge and save: the executor's events are folded into an
 * `every-state` live task (`LiveTasks`) as they are published, whether or
 * not the caller still reads, and go out in order, each state change only
 * after its row is written. The bus is the SDK manager's own, so a cancel or
 * a subscription from another request reaches the task as it would any
 * other. A message to an existing task, with reference tasks, extensions or
 * a webhook in the request goes through the SDK.
 */
export class DirectStream {
  constructor(private readonly options: DirectStreamOptions) {}

  /** Whether this request takes the direct path (see the class comment). */
  static applies(params: SendMessageRequest, context: ServerCallContext): boolean {
    const message = params.message;
    return (
      message !== undefined &&
      !message.taskId &&
      !message.referenceTaskIds?.length &&
      !context.requestedExtensions?.length &&
      !params.configuration?.taskPushNotificationConfig
    );
  }

  async *stream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { executor, live: liveTasks, buses, logger, clock } = this.options;
    const taskId = randomUUID();
    const contextId = params.message!.contextId || newContextId();
    const requestContext = new RequestContext(
      { ...params, message: { ...params.message!, contextId, taskId } },
      taskId,
      contextId,
      context,
      undefined,
      undefined,
    );
    const userMessage = requestContext.userMessage;
    const bus = buses.createOrGetByTaskId(taskId, context);
    const live = liveTasks.begin(scopeOf(context), taskId, 'every-state');

    const pending: Pending[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const fold = (event: AgentExecutionEvent) => {
      if (ended) return;
      const written = liveTasks.fold(live, event, userMessage);
      pending.push({
        event,
        written,
        task: event.kind === 'task' && live.task ? structuredClone(live.task) : undefined,
      });
      if (isSettled(live.task?.status?.state)) ended = true;
      wake?.();
    };
    bus.on('event', fold);
    const fail = (reason: string) => {
      // What the SDK synthesises when an executor fails before its first event: a submitted task.
      if (!live.task)
        bus.publish(
          AgentEvent.task(newTask({ taskId, contextId }, userMessage, TaskState.TASK_STATE_SUBMITTED, clock())),
        );
      bus.publish(
        AgentEvent.statusUpdate(statusUpdate({ taskId, contextId }, TaskState.TASK_STATE_FAILED, clock(), reason)),
      );
    };
    const run = executor
      .execute(requestContext, bus)
      .catch((err: unknown) => {
        logger.warn('agent execution failed', { taskId, error: errorMessage(err) });
        fail(`Agent execution error: ${errorMessage(err)}`);
      })
      .then(() => {
        // An executor that returns without settling its task would leave it running forever.
        if (!ended) {
          logger.warn('agent execution ended without settling its task', { taskId });
          fail('Agent execution ended without an answer.');
        }
      })
      .finally(() => {
        bus.off('event', fold);
        ended = true;
        wake?.();
        // As the SDK settles the bus: kept for an interrupted task's answer, else removed.
        if (!isInterrupted(live.task?.status?.state)) {
          bus.finished();
          buses.cleanupByTaskId(taskId, context);
        }
      });

    const historyLength = params.configuration?.historyLength;
    for (;;) {
      const next = pending.shift();
      if (!next) {
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (next.written) await next.written;
      const response = toStreamResponse(next, historyLength);
      await this.notifyWebhooks(response, live.task, context);
      yield response;
    }
    await run;
  }

  /** Webhooks another request registered on this task while it runs hear each event, as the SDK would tell them. */
  private async notifyWebhooks(response: StreamResponse, task: Task | undefined, context: ServerCallContext) {
    const { push, logger } = this.options;
    if (!task) return;
    const warn = (err: unknown) =>
      logger.warn('push notification failed', { taskId: task.id, error: errorMessage(err) });
    try {
      if ((await push.store.load(task.id, context)).length === 0) return;
      push.sender.send(response, context, structuredClone(task)).catch(warn);
    } catch (err) {
      warn(err);
    }
  }
}

/** The stream's form of an event: a task event carries the task as folded up to it. */
function toStreamResponse({ event, task }: Pending, historyLength?: number): StreamResponse {
  switch (event.kind) {
    case 'task': {
      const value = task ?? event.data;
      if (historyLength !== undefined) value.history = historyLength <= 0 ? [] : value.history.slice(-historyLength);
      return { payload: { $case: 'task', value } };
    }
    case 'message':
      return { payload: { $case: 'message', value: event.data } };
    case 'statusUpdate':
      return { payload: { $case: 'statusUpdate', value: event.data } };
    case 'artifactUpdate':
      return { payload: { $case: 'artifactUpdate', value: event.data } };
  }
}
