import type { Logger } from '../../log/logger';
import { errorMessage } from '../../errors';
import { visibleOwner } from '../../principal';
import { SessionState, type NewSessionMessage, type SessionStore, type StoredMessage } from '../sessions';
import {
  messageFromRow,
  redactMessages,
  sessionKey,
  stateFromColumn,
  toolCallsColumn,
  type MessageRow,
} from '../sessionRows';
import { rows, type PgDatabase, type PgSchema } from './database';
import type { PgGroupCommit, PgQueuedWrite } from './groupCommit';

/** The sessions' tables; `last_seq` is the session's message counter, advanced under the session row's lock. */
export const SESSION_SCHEMA: PgSchema = {
  store: 'sessions',
  steps: [
    `CREATE TABLE sessions (
       owner TEXT NOT NULL, id TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
       state TEXT NOT NULL DEFAULT '{}', last_seq INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (owner, id));
     CREATE INDEX sessions_by_updated ON sessions (updated_at);
     CREATE TABLE session_messages (
       owner TEXT NOT NULL, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
       role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')), content TEXT NOT NULL,
       tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, author TEXT, visible BOOLEAN NOT NULL DEFAULT TRUE,
       created_at TEXT NOT NULL, PRIMARY KEY (owner, session_id, seq),
       FOREIGN KEY (owner, session_id) REFERENCES sessions (owner, id) ON DELETE CASCADE);`,
  ],
};

/** A queued turn: its messages are numbered when written, under the session row's lock. */
interface QueuedTurn {
  owner: string;
  sessionId: string;
  state: string;
  now: string;
  messages: NewSessionMessage[];
  /** Filled by the writer: the stored messages with their numbers. */
  stored?: StoredMessage[];
}

/** Options of {@link createPgSessionStore}. */
export interface PgSessionStoreOptions {
  db: PgDatabase;
  group: PgGroupCommit;
  logger: Logger;
  clock: () => Date;
  /** Applied to every message text and tool-call argument before it is stored (as in SQLite). */
  redact?: (text: string) => string;
}

/**
 * The {@link SessionStore} on PostgreSQL. Turns are group-committed; each
 * turn advances its session's `last_seq` with an upsert that locks the
 * session row until the group commits, so two replicas appending to one
 * conversation take turns and never reuse a number. A read of a session
 * with turns still queued waits for them first.
 */
export function createPgSessionStore(options: PgSessionStoreOptions): SessionStore {
  const { db, group, clock } = options;
  const redact = options.redact ?? ((text: string) => text);
  const logger = options.logger.child({ component: 'sessions' });
  let queue: QueuedTurn[] = [];
  /** Turns handed to the store and not yet committed, per session. */
  const unwritten = new Map<string, number>();

  const takeQueued = (): PgQueuedWrite => {
    const turns = queue;
    queue = [];
    return {
      // One statement per turn: the upsert advances the counter under the session row's lock (held to the
      // group's commit), and the messages take the numbers it hands out.
      statements: turns.map((turn) => ({
        name: 'sessions_commit_turn',
        text: `WITH session AS (
            INSERT INTO sessions (owner, id, created_at, updated_at, state, last_seq) VALUES ($1, $2, $3, $3, $4, $5)
            ON CONFLICT (owner, id) DO UPDATE SET updated_at = EXCLUDED.updated_at, state = EXCLUDED.state,
              last_seq = sessions.last_seq + EXCLUDED.last_seq
            RETURNING last_seq),
          inserted AS (
            INSERT INTO session_messages
              (owner, session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at)
            SELECT $1, $2, session.last_seq - $5 + m.n, m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name,
              m.author, m.visible, $3
            FROM session, unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
              $12::boolean[]) WITH ORDINALITY AS m(role, content, tool_calls, tool_call_id, tool_name, author, visible, n))
          SELECT last_seq FROM session`,
        values: [
          turn.owner,
          turn.sessionId,
          turn.now,
          turn.state,
          turn.messages.length,
          turn.messages.map((m) => m.role),
          turn.messages.map((m) => m.content),
          turn.messages.map(toolCallsColumn),
          turn.messages.map((m) => m.toolCallId ?? null),
          turn.messages.map((m) => m.toolName ?? null),
          turn.messages.map((m) => m.author ?? null),
          turn.messages.map((m) => m.visible),
        ],
      })),
      committed(results) {
        turns.forEach((turn, i) => {
          const last = (results[i].rows[0] as { last_seq: number }).last_seq;
          const first = last - turn.messages.length + 1;
          turn.stored = turn.messages.map((m, j): StoredMessage => ({
            ...m,
            sessionId: turn.sessionId,
            seq: first + j,
            createdAt: turn.now,
          }));
        });
      },
    };
  };

  /** Waits for the queued turns of the session (of any session, for a read of all) to commit. */
  const written = async (key?: string) => {
    if (key === undefined ? unwritten.size > 0 : unwritten.has(key)) await group.flush();
  };

  const readState = async (owner: string, sessionId: string): Promise<SessionState> => {
    const [row] = await rows<{ state: string }>(db, 'SELECT state FROM sessions WHERE owner = $1 AND id = $2', [
      owner,
      sessionId,
    ]);
    return stateFromColumn(row?.state, logger, sessionId);
  };

  return {
    async commitTurn(principal, sessionId, messages, state) {
      const owner = principal.id;
      const key = sessionKey(owner, sessionId);
      const turn: QueuedTurn = {
        owner,
        sessionId,
        now: clock().toISOString(),
        state: JSON.stringify(SessionState.parse(state)),
        messages: redactMessages(messages, redact),
      };
      queue.push(turn);
      unwritten.set(key, (unwritten.get(key) ?? 0) + 1);
      try {
        await group.schedule(takeQueued);
      } catch (err) {
        logger.error('session write failed', { error: errorMessage(err) });
        throw err;
      } finally {
        const left = (unwritten.get(key) ?? 1) - 1;
        if (left > 0) unwritten.set(key, left);
        else unwritten.delete(key);
      }
      return turn.stored ?? [];
    },
    async messages(principal, sessionId, { visibleOnly = false, limit } = {}) {
      await written(sessionKey(principal.id, sessionId));
      const where = `owner = $1 AND session_id = $2${visibleOnly ? ' AND visible' : ''}`;
      const sql = limit
        ? `SELECT * FROM (SELECT * FROM session_messages WHERE ${where} ORDER BY seq DESC LIMIT ${Math.max(1, Math.floor(limit))}) m ORDER BY seq`
        : `SELECT * FROM session_messages WHERE ${where} ORDER BY seq`;
      return (await rows<MessageRow>(db, sql, [principal.id, sessionId])).map(messageFromRow);
    },
    async state(principal, sessionId) {
      await written(sessionKey(principal.id, sessionId));
      return readState(principal.id, sessionId);
    },
    async list(principal, limit = 100) {
      await written();
      return (
        await rows<{ owner: string; id: string; updated_at: string }>(
          db,
          `SELECT owner, id, updated_at FROM sessions WHERE ($1::text IS NULL OR owner = $1)
           ORDER BY updated_at DESC LIMIT $2`,
          [visibleOwner(principal) ?? null, limit],
        )
      ).map((r) => ({ owner: r.owner, id: r.id, updatedAt: r.updated_at }));
    },
    async delete(principal, sessionId) {
      await written(sessionKey(principal.id, sessionId));
      const result = await db.query('DELETE FROM sessions WHERE owner = $1 AND id = $2', [principal.id, sessionId]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}
