import { z } from 'zod';
import type { Logger } from '../log/logger';
import type { ModelToolCall } from '../llm/model';
import { migrate, type SqliteDatabase } from './database';
import { groupCommitFor } from './groupCommit';

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
  pendingApproval: PendingApproval.optional(),
  /** Opaque per-remote-agent state (remote taskId/contextId), keyed by remote agent name. */
  remoteState: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});
export type SessionState = z.infer<typeof SessionState>;

/**
 * The conversation store: messages and per-session state in SQLite, so a
 * session survives a restart of the node.
 */
export interface SessionStore {
  /**
   * Appends one turn's messages and sets the session's state, atomically:
   * queued for the next group commit (one transaction per event-loop turn
   * for all sessions), and visible to every read of this store at once.
   */
  commitTurn(
    sessionId: string,
    messages: NewSessionMessage[],
    state: SessionState,
    options?: {
      /** This is the turn {@link SessionStore.reserveNewSession} was called for. */
      newSession?: boolean;
    },
  ): StoredMessage[];
  /**
   * Notes that the turn starting now is a new session's first (a message that named no conversation):
   * its messages are numbered from 1 without a query, unless another turn of the session commits first
   * (its caller may learn the contextId from a stream before this turn ends). Returns the release to call
   * when the turn ends, committed or not.
   */
  reserveNewSession(sessionId: string): () => void;
  /** Writes queued turns now (before the database closes). */
  flush(): void;
  /** Messages in order; `visibleOnly` keeps what the user saw; `limit` keeps the last N. */
  messages(sessionId: string, options?: { visibleOnly?: boolean; limit?: number }): StoredMessage[];
  /** The session's state; an empty state for an unknown session. */
  state(sessionId: string): SessionState;
  setState(sessionId: string, state: SessionState): void;
  /** Session ids, most recently updated first. */
  list(limit?: number): { id: string; updatedAt: string }[];
  /** Forgets a session and its messages. */
  delete(sessionId: string): void;
}

const STEPS = [
  `CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     state TEXT NOT NULL DEFAULT '{}'
   )`,
  `CREATE TABLE session_messages (
     session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
     seq INTEGER NOT NULL,
     role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
     content TEXT NOT NULL,
     tool_calls TEXT,
     tool_call_id TEXT,
     tool_name TEXT,
     author TEXT,
     visible INTEGER NOT NULL DEFAULT 1,
     created_at TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   )`,
];

interface MessageRow {
  session_id: string;
  seq: number;
  role: NewSessionMessage['role'];
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  author: string | null;
  visible: number;
  created_at: string;
}

const ToolCalls = z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() }));

/** Options of {@link createSessionStore}. */
export interface SessionStoreOptions {
  db: SqliteDatabase;
  logger: Logger;
  clock: () => Date;
  /**
   * Applied to every message text and tool-call argument before it is stored
   * (the node passes its secret registry's masking): a secret value the model
   * handled, e.g. in `secrets_store`, never lands in session history.
   */
  redact?: (text: string) => string;
}

/**
 * Creates the SQLite session store on the node's database.
 * @example
 * const sessions = createSessionStore({ db: openDatabase('.lango/lango.db'), logger, clock: () => new Date() });
 * sessions.commitTurn('cli:1', [{ role: 'user', content: 'hello', visible: true }], { remoteState: {} });
 */
export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const { db, clock } = options;
  const redact = options.redact ?? ((text: string) => text);
  const logger = options.logger.child({ component: 'sessions' });
  migrate(db, 'sessions', STEPS);

  const upsertSession = db.prepare(
    `INSERT INTO sessions (id, created_at, updated_at, state) VALUES (@id, @now, @now, @state)
     ON CONFLICT(id) DO UPDATE SET updated_at = @now, state = @state`,
  );
  const insertMessage = db.prepare(
    `INSERT INTO session_messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at)
     VALUES (@session_id, @seq, @role, @content, @tool_calls, @tool_call_id, @tool_name, @author, @visible, @created_at)`,
  );
  const lastSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM session_messages WHERE session_id = ?');
  const selectState = db.prepare('SELECT state FROM sessions WHERE id = ?');

  const readState = (sessionId: string): SessionState => {
    const row = selectState.get(sessionId) as { state: string } | undefined;
    if (!row) return { remoteState: {} };
    const parsed = SessionState.safeParse(safeJson(row.state));
    if (parsed.success) return parsed.data;
    // A state written by a newer or broken version must not make the session unusable.
    logger.warn('session state unreadable; starting from an empty state', { sessionId });
    return { remoteState: {} };
  };

  const writeState = (sessionId: string, state: SessionState, now: string) =>
    upsertSession.run({ id: sessionId, now, state: JSON.stringify(SessionState.parse(state)) });

  // Turns are group-committed with the database's other stores (see groupCommitFor): commitTurn queues
  // its rows and returns. Any read of the store writes the queue first, so readers always see every turn.
  const group = groupCommitFor(db);
  const queue: Array<{ sessionId: string; state: string; now: string; rows: Record<string, unknown>[] }> = [];
  /** Last sequence number handed out per session with queued turns (the table lags until the flush). */
  const queuedSeq = new Map<string, number>();
  /** New sessions whose first turn is running: the last sequence number other turns of theirs took meanwhile. */
  const newSessions = new Map<string, number>();
  const writeQueued = () => {
    const items = queue.splice(0);
    queuedSeq.clear();
    for (const item of items) {
      upsertSession.run({ id: item.sessionId, now: item.now, state: item.state });
      for (const row of item.rows) insertMessage.run(row);
    }
  };
  const logFailure = (err: unknown) =>
    logger.error('session write failed', { error: err instanceof Error ? err.message : String(err) });
  const flush = () => {
    if (queue.length > 0) group.flush();
  };
  /** Runs `read` after writing the queue, when it holds turns of `sessionId` (any turn, for a read of all sessions). */
  const flushed = <T>(read: () => T, sessionId?: string): T => {
    if (sessionId === undefined ? queue.length > 0 : queuedSeq.has(sessionId)) flush();
    return read();
  };

  const commit = (
    sessionId: string,
    messages: NewSessionMessage[],
    state: SessionState,
    options: { newSession?: boolean } = {},
  ): StoredMessage[] => {
    const now = clock().toISOString();
    const reserved = options.newSession ? newSessions.get(sessionId) : undefined;
    if (options.newSession) newSessions.delete(sessionId);
    let seq = queuedSeq.get(sessionId) ?? reserved ?? (lastSeq.get(sessionId) as { seq: number }).seq;
    const rows: Record<string, unknown>[] = [];
    const stored = messages.map((original): StoredMessage => {
      const m: NewSessionMessage = {
        ...original,
        content: redact(original.content),
        ...(original.toolCalls
          ? { toolCalls: original.toolCalls.map((c) => ({ ...c, arguments: redact(c.arguments) })) }
          : {}),
      };
      seq += 1;
      rows.push({
        session_id: sessionId,
        seq,
        role: m.role,
        content: m.content,
        tool_calls: m.toolCalls?.length ? JSON.stringify(m.toolCalls) : null,
        tool_call_id: m.toolCallId ?? null,
        tool_name: m.toolName ?? null,
        author: m.author ?? null,
        visible: m.visible ? 1 : 0,
        created_at: now,
      });
      return { ...m, sessionId, seq, createdAt: now };
    });
    queue.push({ sessionId, now, state: JSON.stringify(SessionState.parse(state)), rows });
    queuedSeq.set(sessionId, seq);
    if (newSessions.has(sessionId)) newSessions.set(sessionId, seq);
    group.schedule(writeQueued).catch(logFailure);
    return stored;
  };

  return {
    commitTurn: commit,
    reserveNewSession: (sessionId) => {
      newSessions.set(sessionId, 0);
      return () => newSessions.delete(sessionId);
    },
    flush,
    messages: (sessionId, { visibleOnly = false, limit } = {}) =>
      flushed(() => {
        const where = visibleOnly ? 'session_id = ? AND visible = 1' : 'session_id = ?';
        const sql = limit
          ? `SELECT * FROM (SELECT * FROM session_messages WHERE ${where} ORDER BY seq DESC LIMIT ${Math.max(1, Math.floor(limit))}) ORDER BY seq`
          : `SELECT * FROM session_messages WHERE ${where} ORDER BY seq`;
        return (db.prepare(sql).all(sessionId) as MessageRow[]).map(fromRow);
      }, sessionId),
    state: (sessionId) => flushed(() => readState(sessionId), sessionId),
    setState: (sessionId, state) => flushed(() => void writeState(sessionId, state, clock().toISOString()), sessionId),
    list: (limit = 100) =>
      flushed(() =>
        (
          db.prepare('SELECT id, updated_at FROM sessions ORDER BY updated_at DESC LIMIT ?').all(limit) as {
            id: string;
            updated_at: string;
          }[]
        ).map((r) => ({ id: r.id, updatedAt: r.updated_at })),
      ),
    delete: (sessionId) =>
      flushed(() => void db.prepare('DELETE FROM sessions WHERE id = ?').run(sessionId), sessionId),
  };
}

function fromRow(row: MessageRow): StoredMessage {
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
    visible: row.visible === 1,
    createdAt: row.created_at,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
