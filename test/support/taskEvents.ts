import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { textPart } from '../../src/a2a/tasks/messages';

/** A chunk of a task's answer artifact as an executor publishes it (`append` after the first chunk). */
export function answerChunk(
  ids: { taskId: string; contextId: string },
  text: string,
  options: { append: boolean; artifactId?: string; metadata?: Record<string, unknown> },
): AgentExecutionEvent {
  return AgentEvent.artifactUpdate({
    ...ids,
    artifact: {
      artifactId: options.artifactId ?? 'answer',
      name: 'answer',
      description: '',
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
    },
    append: options.append,
    lastChunk: false,
    metadata: options.metadata,
  });
}
