import { z } from 'zod';
import type { Logger } from '../log/logger';
import { emptySessionState, SessionState, type NewSessionMessage, type StoredMessage } from './sessions';

/**
 * The rows of the session tables as both databases return them (SQLite's
 * `visible` is 0/1, PostgreSQL's a boolean), and the one mapping between
 * what a turn hands the store and what the store answers.
 */
export interface MessageRow {
  session_id: string;
  seq: number;
  role: NewSessionMessage['role'];
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  author: string | null;
  visible: number | boolean;
  created_at: string;
}

const ToolCalls = z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() }));

/** Parses a stored JSON column; `undefined` for text that is not JSON (a row written by a broken version). */
function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The key of one conversation in the stores' in-memory bookkeeping. */
export const sessionKey = (owner: string, sessionId: string) => `${owner}\u0000${sessionId}`;

/** A turn's messages as stored: every text and tool-call argument passed through `redact` first. */
export function redactMessages(messages: NewSessionMessage[], redact: (text: string) => string): NewSessionMessage[] {
  return messages.map((original) => ({
    ...original,
    content: redact(original.content),
    ...(original.toolCalls
      ? { toolCalls: original.toolCalls.map((c) => ({ ...c, arguments: redact(c.arguments) })) }
      : {}),
  }));
}

/** The `tool_calls` column of a message: JSON, or null when it made none. */
export const toolCallsColumn = (m: NewSessionMessage) => (m.toolCalls?.length ? JSON.stringify(m.toolCalls) : null);

export function messageFromRow(row: MessageRow): StoredMessage {
  const calls = row.tool_calls ? ToolCalls.safeParse(safeJson(row.tool_calls)) : undefined;
  return {
    sessionId: row.session_id,
    seq: row.seq,
    role: row.role,
    content: row.content,
    ...(calls?.success ? { toolCalls: calls.data } : {}),
    ...(row.tool_call_id ? { toolCallId: row.tool_call_id } : {}),
    ...(row.tool_name ? { toolName: row.tool_name } : {}),
    ...(row.author ? { author: row.author } : {}),
    visible: row.visible === true || row.visible === 1,
    createdAt: row.created_at,
  };
}

/** A session's stored state; empty when it has none, or when it is unreadable (logged). */
export function stateFromColumn(text: string | undefined, logger: Logger, sessionId: string): SessionState {
  if (text === undefined) return emptySessionState();
  const parsed = SessionState.safeParse(safeJson(text));
  if (parsed.success) return parsed.data;
  // A state written by a newer or broken version must not make the session unusable.
  logger.warn('session state unreadable; starting from an empty state', { sessionId });
  return emptySessionState();
}
