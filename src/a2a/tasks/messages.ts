import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import type { Message, Part, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk';

/** Small builders for the SDK's A2A objects, so the executor reads as what it does. */

/** A plain-text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** An agent message in a task's conversation. */
export function agentMessage(
  ids: { taskId: string; contextId: string },
  text: string,
  metadata?: Record<string, unknown>,
): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId,
    taskId: ids.taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A status update; `text` becomes the status message the caller sees. */
export function statusUpdate(
  ids: { taskId: string; contextId: string },
  state: TaskState,
  now: Date,
  text?: string,
  metadata?: Record<string, unknown>,
): TaskStatusUpdateEvent {
  return {
    taskId: ids.taskId,
    contextId: ids.contextId,
    status: {
      state,
      message: text === undefined ? undefined : agentMessage(ids, text, metadata),
      timestamp: now.toISOString(),
    },
    metadata,
  };
}

/**
 * The text a user message carries for the agent: text parts as they are,
 * data parts as JSON, file parts by name, so nothing the caller sent is
 * silently dropped.
 */
export function messageText(message: Message): string {
  const pieces: string[] = [];
  for (const part of message.parts) {
    const content = part.content;
    if (!content) continue;
    switch (content.$case) {
      case 'text':
        pieces.push(content.value);
        break;
      case 'data':
        pieces.push(JSON.stringify(content.value));
        break;
      case 'url':
        pieces.push(`[file ${part.filename || content.value}]`);
        break;
      case 'raw':
        pieces.push(
          `[file ${part.filename || 'attachment'} (${part.mediaType || 'binary'}, ${content.value.length} bytes)]`,
        );
        break;
    }
  }
  return pieces.join('\n');
}

/** A new task in `state`, its history the message that started it, no artifacts yet. */
export function newTask(
  ids: { taskId: string; contextId: string },
  userMessage: Message,
  state: TaskState,
  now: Date,
): Task {
  return {
    id: ids.taskId,
    contextId: ids.contextId,
    status: { state, message: undefined, timestamp: now.toISOString() },
    artifacts: [],
    history: [userMessage],
    metadata: undefined,
  };
}
