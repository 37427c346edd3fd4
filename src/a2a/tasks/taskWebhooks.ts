import type { Task } from '@a2a-js/sdk';
import type { PushNotificationSender, PushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { isSettled } from '../../protocol/taskStates';
import type { LiveTask } from './liveTask';
import type { LiveTasks } from './liveTasks';
import { toStreamResponse } from './streamForms';

/**
 * Push configs (webhook addresses checked when saved) and their delivery;
 * `saves`, how many configs were saved so far anywhere (`RowPushStore.saves`),
 * lets a task found without any skip the lookup for its later events until
 * it moves.
 */
export interface TaskPush {
  store: PushNotificationStore;
  sender: PushNotificationSender;
  saves?: () => number;
}

/** What a task's webhooks are told through: the push configs and sender, the live tasks, the logger. */
export interface TaskWebhooks {
  push: TaskPush;
  live: LiveTasks;
  logger: Logger;
}

/**
 * Webhooks registered on an every-state task (with the message, or by
 * another request while it runs) hear each of its events once its state
 * is written, in order.
 */
export function deliverToWebhooks(webhooks: TaskWebhooks, live: LiveTask, context: ServerCallContext): void {
  const { push, logger, live: liveTasks } = webhooks;
  let chain = Promise.resolve();
  /** The save count when the task was last found without configs (none since: it still has none). */
  let noneAtSaves: number | undefined;
  const warn = (err: unknown) => logger.warn('push notification failed', { taskId: live.id, error: errorMessage(err) });
  const stop = liveTasks.listen(live, (heard) => {
    if (isSettled(heard.state)) stop();
    // The usual task has no webhook: its answer chunks cost no lookup (and no promise) each.
    if (noneAtSaves !== undefined && noneAtSaves === push.saves?.()) return;
    chain = chain
      .then(async () => {
        if (heard.written) await heard.written;
        const saves = push.saves?.();
        if ((await push.store.load(live.id, context)).length === 0) {
          noneAtSaves = saves;
          return;
        }
        await push.sender.send(toStreamResponse(heard, undefined), context, structuredClone(live.task!));
      })
      .catch(warn);
  });
}

/**
 * An on-settle task's caller set no webhook, but another request may have registered one while it ran
 * (after finding it with ListTasks): that webhook hears the final state.
 */
export async function notifyWebhooks(webhooks: TaskWebhooks, task: Task, context: ServerCallContext): Promise<void> {
  const { push, logger } = webhooks;
  // The answer is saved: a webhook that cannot be told must not turn it into an error for the caller.
  const warn = (err: unknown) => logger.warn('push notification failed', { taskId: task.id, error: errorMessage(err) });
  try {
    if ((await push.store.load(task.id, context)).length === 0) return;
    const update = { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata };
    push.sender.send({ payload: { $case: 'statusUpdate', value: update } }, context, structuredClone(task)).catch(warn);
  } catch (err) {
    warn(err);
  }
}
