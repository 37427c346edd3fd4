import type { Logger } from '../../log/logger';
import { errorMessage } from '../../errors';
import { visibleOwner } from '../../principal';
import {
  FIRST_MESSAGE_CHARS,
  MAX_TITLE_CHARS,
  SessionState,
  type NewSessionMessage,
  type SessionStore,
  type StoredMessage,
} from '../sessions';
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
    // A conversation's name, given in the console (none: listed by its first words).
    `ALTER TABLE sessions ADD COLUMN title TEXT`,
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
 * group advances its sessions' `last_seq` with one upsert that locks the
 * session rows until the group commits, so two replicas appending to one
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
    // The group's turns by session, sessions in key order: two replicas' groups lock shared sessions in one order.
    const bySession = new Map<string, QueuedTurn[]>();
    for (const turn of turns) {
      const key = sessionKey(turn.owner, turn.sessionId);
      const own = bySession.get(key);
      if (own) own.push(turn);
      else bySession.set(key, [turn]);
    }
    const sessions = [...bySession.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
    const counts = sessions.map((own) => own.reduce((sum, turn) => sum + turn.messages.length, 0));
    /** Each message with its session's turn and how many of the session's new messages come after it. */
    const messages = sessions.flatMap((own, i) => {
      let after = counts[i];
      return own.flatMap((turn) => turn.messages.map((m) => ({ turn, m, after: --after })));
    });
    return {
      // One statement for the group: the upsert advances each session's counter under its row lock (held to the
      // commit), and the messages take the numbers it hands out, counted back from the session's new last one.
      statements: [
        {
          name: 'sessions_commit_turns',
          text: `WITH session AS (
              INSERT INTO sessions (owner, id, created_at, updated_at, state, last_seq)
              SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[])
              ON CONFLICT (owner, id) DO UPDATE SET updated_at = EXCLUDED.updated_at, state = EXCLUDED.state,
                last_seq = sessions.last_seq + EXCLUDED.last_seq
              RETURNING owner, id, last_seq),
            inserted AS (
              INSERT INTO session_messages
                (owner, session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at)
              SELECT m.owner, m.session_id, s.last_seq - m.after, m.role, m.content, m.tool_calls, m.tool_call_id,
                m.tool_name, m.author, m.visible, m.created_at
              FROM unnest($7::text[], $8::text[], $9::integer[], $10::text[], $11::text[], $12::text[], $13::text[],
                $14::text[], $15::text[], $16::boolean[], $17::text[])
                AS m(owner, session_id, after, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at)
              JOIN session s ON s.owner = m.owner AND s.id = m.session_id)
            SELECT owner, id, last_seq FROM session`,
          values: [
            sessions.map((own) => own[0].owner),
            sessions.map((own) => own[0].sessionId),
            sessions.map((own) => own[0].now),
            sessions.map((own) => own.at(-1)!.now),
            sessions.map((own) => own.at(-1)!.state),
            counts,
            messages.map(({ turn }) => turn.owner),
            messages.map(({ turn }) => turn.sessionId),
            messages.map(({ after }) => after),
            messages.map(({ m }) => m.role),
            messages.map(({ m }) => m.content),
            messages.map(({ m }) => toolCallsColumn(m)),
            messages.map(({ m }) => m.toolCallId ?? null),
            messages.map(({ m }) => m.toolName ?? null),
            messages.map(({ m }) => m.author ?? null),
            messages.map(({ m }) => m.visible),
            messages.map(({ turn }) => turn.now),
          ],
        },
      ],
      committed([result]) {
        const last = new Map(
          (result.rows as Array<{ owner: string; id: string; last_seq: number }>).map((row) => [
            sessionKey(row.owner, row.id),
            row.last_seq,
          ]),
        );
        sessions.forEach((own, i) => {
          let seq = last.get(sessionKey(own[0].owner, own[0].sessionId))! - counts[i];
          for (const turn of own) {
            turn.stored = turn.messages.map((m): StoredMessage => ({
              ...m,
              sessionId: turn.sessionId,
              seq: ++seq,
              createdAt: turn.now,
            }));
          }
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
        await rows<{
          owner: string;
          id: string;
          updated_at: string;
          title: string | null;
          first_message: string | null;
        }>(
          db,
          `SELECT owner, id, updated_at, title, (SELECT substr(content, 1, $3) FROM session_messages m
             WHERE m.owner = sessions.owner AND m.session_id = sessions.id AND m.role = 'user'
             ORDER BY seq LIMIT 1) AS first_message
           FROM sessions WHERE ($1::text IS NULL OR owner = $1) ORDER BY updated_at DESC LIMIT $2`,
          [visibleOwner(principal) ?? null, limit, FIRST_MESSAGE_CHARS],
        )
      ).map((r) => ({
        owner: r.owner,
        id: r.id,
        updatedAt: r.updated_at,
        ...(r.first_message !== null ? { firstMessage: r.first_message } : {}),
        ...(r.title !== null ? { title: r.title } : {}),
      }));
    },
    async rename(principal, sessionId, title) {
      await written(sessionKey(principal.id, sessionId));
      const result = await db.query('UPDATE sessions SET title = $1 WHERE owner = $2 AND id = $3', [
        title.trim().slice(0, MAX_TITLE_CHARS) || null,
        principal.id,
        sessionId,
      ]);
      return (result.rowCount ?? 0) > 0;
    },
    async delete(principal, sessionId) {
      await written(sessionKey(principal.id, sessionId));
      const result = await db.query('DELETE FROM sessions WHERE owner = $1 AND id = $2', [principal.id, sessionId]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}
