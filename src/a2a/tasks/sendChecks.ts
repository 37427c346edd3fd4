import { Role, type SendMessageRequest, type TaskState } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { invalidParam } from '../../protocol/errorDetails';

/*
 * What the request handler refuses a request for, each naming why: a
 * malformed message or history length (before any work), a message to a
 * task still working or finished.
 */

/** A message to a task whose turn runs (here or on another replica): the caller waits for its answer or cancels. */
export function stillWorking(taskId: string): Error {
  return new UnsupportedOperationError(`task ${taskId} is still working: wait for its answer or cancel it first`);
}

/** A message to a finished task. */
export function terminalTask(taskId: string, state: TaskState): Error {
  return new UnsupportedOperationError(`Task ${taskId} is in a terminal state (${state}) and cannot be modified.`);
}

/** Refuses a message the agent could not act on, naming the field. */
export function checkSendMessage(params: SendMessageRequest): void {
  const message = params.message;
  if (!message) throw invalidParam('message', 'is required');
  if (!message.messageId) throw invalidParam('message.messageId', 'is required');
  if (message.role !== Role.ROLE_USER)
    throw invalidParam('message.role', 'must be ROLE_USER (a message from the caller)');
  if (!Array.isArray(message.parts) || message.parts.length === 0) {
    throw invalidParam('message.parts', 'must contain at least one part');
  }
  message.parts.forEach((part, index) => {
    const content = part?.content;
    if (!content) throw invalidParam(`message.parts[${index}]`, 'has no content: expected text, data, url or raw');
    if (content.$case === 'text' && typeof content.value !== 'string') {
      throw invalidParam(`message.parts[${index}].text`, 'must be a string');
    }
  });
  checkHistoryLength(params.configuration?.historyLength, 'configuration.historyLength');
}

/** Refuses a `historyLength` that is not a non-negative integer, naming `field`. */
export function checkHistoryLength(value: number | undefined, field: string): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 0) throw invalidParam(field, 'must be a non-negative integer');
}
