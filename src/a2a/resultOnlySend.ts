import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import type { SendMessageRequest, Task } from '@a2a-js/sdk';
import { AgentEvent, RequestContext } from '@a2a-js/sdk/server';
import type {
  AgentExecutionEvent,
  AgentExecutor,
  ExecutionEventBusManager,
  PushNotificationSender,
  PushNotificationStore,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import type { Logger } from '../log/logger';
import { newContextId } from './contextIds';
import { newTask, statusUpdate } from './messages';
import { RESULT_ONLY_KEY } from './callFlags';
import { isInterrupted, isSettled } from '../protocol/taskStates';
import type { LiveTasks } from './liveTasks';
import { scopeOf } from './taskStore';

/** What {@link ResultOnlySend} works with: the node's executor, live tasks and the SDK handler's bus manager. */
export interface ResultOnlySendOptions {
  executor: AgentExecutor;
  live: LiveTasks;
  /** The manager the SDK's handler uses too, so CancelTask and SubscribeToTask find this task's bus. */
  buses: ExecutionEventBusManager;
  logger: Logger;
  clock: () => Date;
  /** Webhooks registered on the task while it ran hear how it ended (see send). */
  push?: { store: PushNotificationStore; sender: PushNotificationSender };
}

/**
 * A blocking `SendMessage` that starts a new task and set no webhook, run
 * without the SDK's per-event machinery. Its caller reads only the final
 * task, so nothing needs what the SDK's `DefaultRequestHandler` does per
 * event for it: load the task from the store, copy, merge and save it back,
 * and copy it once more for push notifications. Here the executor's events
 * are folded into its live task as they come (`LiveTasks`, mode
 * `on-settle`), so `GetTask`, `ListTasks` and `CancelTask` from other
 * requests see the live state, and the task is written once, when it
 * settles. The bus is the SDK manager's own, so a
 * cancel or a subscription from another request reaches it as it would any
 * other task. Every other request goes through the SDK.
 */
export class ResultOnlySend {
  constructor(private readonly options: ResultOnlySendOptions) {}

  /** Whether this request takes the direct path (see the class comment). */
  static applies(params: SendMessageRequest, context: ServerCallContext): boolean {
    const message = params.message;
    return (
      context.state.get(RESULT_ONLY_KEY) === true &&
      message !== undefined &&
      !message.taskId &&
      !message.referenceTaskIds?.length &&
      !context.requestedExtensions?.length
    );
  }

  async send(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
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
    const live = liveTasks.begin(scopeOf(context), taskId, 'on-settle');
    const fold = (event: AgentExecutionEvent) => {
      liveTasks.fold(live, event, userMessage);
    };
    bus.on('event', fold);
    const fail = (reason: string) => {
      // What the SDK synthesises when an executor fails before its first event: a submitted task.
      if (!live.task)
        fold(AgentEvent.task(newTask({ taskId, contextId }, userMessage, TaskState.TASK_STATE_SUBMITTED, clock())));
      bus.publish(
        AgentEvent.statusUpdate(statusUpdate({ taskId, contextId }, TaskState.TASK_STATE_FAILED, clock(), reason)),
      );
    };
    let final: Task | undefined;
    try {
      try {
        await executor.execute(requestContext, bus);
      } catch (err) {
        // As the SDK does when an executor throws: the task fails with the error, on the bus for everyone.
        const reason = err instanceof Error ? err.message : String(err);
        logger.warn('agent execution failed', { taskId, error: reason });
        fail(`Agent execution error: ${reason}`);
      }
      // An executor that returns without settling its task would leave it running forever.
      if (!isSettled(live.task?.status?.state)) {
        logger.warn('agent execution ended without settling its task', { taskId });
        fail('Agent execution ended without an answer.');
      }
      // The answer is decided: what the bus carries from now on (a late cancel) must not change it after the save.
      bus.off('event', fold);
      final = live.task!;
      await liveTasks.settle(live);
    } finally {
      bus.off('event', fold);
      // As the SDK settles the bus whatever its saves did: kept for an interrupted task's answer, else removed.
      if (!isInterrupted(final?.status?.state)) {
        bus.finished();
        buses.cleanupByTaskId(taskId, context);
      }
    }
    await this.notifyWebhooks(final, context);
    const historyLength = params.configuration?.historyLength;
    if (historyLength !== undefined) final.history = historyLength <= 0 ? [] : final.history.slice(-historyLength);
    return final;
  }

  /**
   * The caller set no webhook, but another request may have registered one on this task while it ran
   * (after finding it with ListTasks): that webhook hears the final state, as the SDK would tell it.
   */
  private async notifyWebhooks(task: Task, context: ServerCallContext): Promise<void> {
    const push = this.options.push;
    if (!push) return;
    // The answer is saved: a webhook that cannot be told must not turn it into an error for the caller.
    const warn = (err: unknown) =>
      this.options.logger.warn('push notification failed', { taskId: task.id, error: String(err) });
    try {
      if ((await push.store.load(task.id, context)).length === 0) return;
      const update = { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata };
      push.sender
        .send({ payload: { $case: 'statusUpdate', value: update } }, context, structuredClone(task))
        .catch(warn);
    } catch (err) {
      warn(err);
    }
  }
}
