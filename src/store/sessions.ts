import { z } from 'zod';
import type { ModelToolCall } from '../llm/model';
import type { Principal } from '../principal';

/** A message to be stored: what the runtime hands {@link SessionStore.commitTurn}. */
export interface NewSessionMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
  /** The tool's name, for `tool` messages. */
  toolName?: string;
  /** The agent that wrote an assistant or tool message; `runtime` for the runtime's notes. */
  author?: string;
  /**
   * True for what the user saw: their own messages and the turn's answer (or
   * question). False for the turn's working messages (tool calls, results,
   * transfers, notes), kept for audit but not replayed to the model.
   */
  visible: boolean;
}

/** A stored message. */
export interface StoredMessage extends NewSessionMessage {
  sessionId: string;
  /** Position in the session, from 1. */
  seq: number;
  /** ISO-8601 time the message was stored. */
  createdAt: string;
}

/** A tool call held for the user's approval until the next turn of the session. */
export const PendingApproval = z.object({
  agentName: z.string(),
  call: z.object({ id: z.string(), name: z.string(), arguments: z.string() }),
  question: z.string(),
});
export type PendingApproval = z.infer<typeof PendingApproval>;

/** What a session remembers between turns besides its messages. */
export const SessionState = z.object({
  /** The agent the next user message goes to (a remote agent that asked a question, an agent awaiting approval). */
  activeAgent: z.string().optional(),
  /** Lives with the conversation, so only the principal that owns it can answer it. */
  pendingApproval: PendingApproval.optional(),
  /** Opaque per-remote-agent state (remote taskId/contextId), keyed by remote agent name. */
  remoteState: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});
export type SessionState = z.infer<typeof SessionState>;

/** One conversation as a listing shows it. */
export interface SessionInfo {
  /** The principal id the conversation belongs to. */
  owner: string;
  id: string;
  updatedAt: string;
  /** The start of the first thing the user said in it (at most {@link FIRST_MESSAGE_CHARS} characters). */
  firstMessage?: string;
  /** The name it was given ({@link SessionStore.rename}), if any. */
  title?: string;
}

/** Longest conversation title kept. */
export const MAX_TITLE_CHARS = 200;

/** How much of a conversation's first user message a listing carries. */
export const FIRST_MESSAGE_CHARS = 120;

/** What the caller of {@link SessionStore.commitTurn} knows about the session. */
export interface CommitTurnOptions {
  /**
   * The session has no earlier turn (an A2A context the node just created):
   * its messages are numbered from 1 without reading the table for the last
   * number (a store may ignore this; SQLite saves one query per new context).
   */
  newSession?: boolean;
}

/**
 * The conversation store. A conversation is keyed by (principal, session
 * id): the same A2A contextId sent by two callers is two conversations, and
 * a caller can never read, continue or answer the approval of another's.
 * Only listings widen for the owner, who sees every principal's sessions.
 */
export interface SessionStore {
  /**
   * Appends one turn's messages and sets the session's state, atomically.
   * Resolves with the stored messages once they are committed; from then on
   * every read sees them.
   */
  commitTurn(
    principal: Principal,
    sessionId: string,
    messages: NewSessionMessage[],
    state: SessionState,
    options?: CommitTurnOptions,
  ): Promise<StoredMessage[]>;
  /** Messages in order; `visibleOnly` keeps what the user saw; `limit` keeps the last N. */
  messages(
    principal: Principal,
    sessionId: string,
    options?: { visibleOnly?: boolean; limit?: number },
  ): Promise<StoredMessage[]>;
  /** The session's state; an empty state for an unknown session. */
  state(principal: Principal, sessionId: string): Promise<SessionState>;
  /** Sessions the principal can see (the owner: everyone's), most recently updated first. */
  list(principal: Principal, limit?: number): Promise<SessionInfo[]>;
  /** Forgets the principal's session and its messages; false when there was none. */
  delete(principal: Principal, sessionId: string): Promise<boolean>;
  /**
   * Names the principal's session (an empty title removes the name; at
   * most {@link MAX_TITLE_CHARS} are kept); its messages and `updatedAt`
   * stay as they are. False when there is no such session.
   */
  rename(principal: Principal, sessionId: string, title: string): Promise<boolean>;
}

/** The state of a session with nothing stored yet. */
export function emptySessionState(): SessionState {
  return { remoteState: {} };
}
