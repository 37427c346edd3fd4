import type { ModelToolCall } from '../llm/model';
import type { StoredMessage } from './sessions';

/** A stored message as an event of the conversation, with the author who wrote it. */
export interface SessionEvent {
  seq: number;
  author: string;
  role: StoredMessage['role'];
  content: string;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
  timestamp: string;
}

/**
 * The events adapter of the spec's "Event Author Identity" requirement: the
 * author is the stored author when there is one; otherwise `rootAgentName`
 * for assistant (and tool) messages, written before authors were stored;
 * `user` for user messages. The root's name is passed in, never hard-coded:
 * `lango-orchestrator` in multi-agent mode, `lango-agent` in single-agent mode.
 * @example
 * toEvents(sessions.messages('cli:1'), root.name).map((e) => e.author); // ['user', 'operator']
 */
export function toEvents(messages: readonly StoredMessage[], rootAgentName: string): SessionEvent[] {
  return messages.map((m) => ({
    seq: m.seq,
    author: m.author ?? (m.role === 'user' ? 'user' : rootAgentName),
    role: m.role,
    content: m.content,
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    timestamp: m.createdAt,
  }));
}
