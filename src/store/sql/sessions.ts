import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { visibleOwner } from '../../principal';
import {
  FIRST_MESSAGE_CHARS,
  MAX_TITLE_CHARS,
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
import { anyOrEqual, boundTables, type BoundColumn, type BoundTables } from './dialect';
import type { Sql, SqlWrite, StoreSchema } from './sql';

/** The sessions' tables; `last_seq` is the session's message counter, advanced under the session row's lock. */
export const SESSION_SCHEMA: StoreSchema = {
  store: 'sessions',
  sqlite: [
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
    // Conversations are keyed by (principal, session id). Sessions stored before principals existed are the owner's.
    `CREATE TABLE sessions_by_owner (
       owner TEXT NOT NULL, id TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
       state TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (owner, id));
     INSERT INTO sessions_by_owner (owner, id, created_at, updated_at, state)
       SELECT 'owner', id, created_at, updated_at, state FROM sessions;
     CREATE TABLE session_messages_by_owner (
       owner TEXT NOT NULL, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
       role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')), content TEXT NOT NULL,
       tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, author TEXT, visible INTEGER NOT NULL DEFAULT 1,
       created_at TEXT NOT NULL, PRIMARY KEY (owner, session_id, seq),
       FOREIGN KEY (owner, session_id) REFERENCES sessions_by_owner (owner, id) ON DELETE CASCADE);
     INSERT INTO session_messages_by_owner
       SELECT 'owner', session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at
       FROM session_messages;
     DROP TABLE session_messages;
     DROP TABLE sessions;
     ALTER TABLE sessions_by_owner RENAME TO sessions;
     ALTER TABLE session_messages_by_owner RENAME TO session_messages;
     CREATE INDEX sessions_by_updated ON sessions (updated_at);`,
    // The session's message counter, as on PostgreSQL: each group numbers its messages from it.
    `ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
     UPDATE sessions SET last_seq = (SELECT COALESCE(MAX(m.seq), 0) FROM session_messages m
       WHERE m.owner = sessions.owner AND m.session_id = sessions.id);`,
    // A conversation's name, given in the console (none: listed by its first words).
    `ALTER TABLE sessions ADD COLUMN title TEXT`,
  ],
  postgres: [
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
  /** Filled once committed: the stored messages with their numbers. */
  stored?: StoredMessage[];
}

/** Options of {@link createSessionStore}. */
export interface SessionStoreOptions {
  sql: Sql;
  logger: Logger;
  clock: () => Date;
  /**
   * Applied to every message text and tool-call argument before it is stored
   * (the node passes its secret registry's masking): a secret value the model
   * handled, e.g. in `secrets_store`, never lands in session history.
   */
  redact?: (text: string) => string;
}

/** The session columns a group writes, as the bound rows of its upsert. */
const SESSION_COLUMNS: readonly BoundColumn[] = [
  ['owner', 'text'],
  ['id', 'text'],
  ['created_at', 'text'],
  ['updated_at', 'text'],
  ['state', 'text'],
  ['last_seq', 'integer'],
];

/** The message columns a group writes, as the bound rows of its insert. */
const MESSAGE_COLUMNS: readonly BoundColumn[] = [
  ['owner', 'text'],
  ['session_id', 'text'],
  ['after', 'integer'],
  ['role', 'text'],
  ['content', 'text'],
  ['tool_calls', 'text'],
  ['tool_call_id', 'text'],
  ['tool_name', 'text'],
  ['author', 'text'],
  ['visible', 'boolean'],
  ['created_at', 'text'],
];

/** How a group's session and message rows are bound. */
interface TurnTables {
  sessions: BoundTables;
  messages: BoundTables;
}

/**
 * The write of a group's turns: per session, one upsert advances its
 * counter (`last_seq`, under the row's lock until the commit: replicas
 * appending to one conversation take turns and never reuse a number) and
 * returns it (one upsert per 64 sessions); one insert per 64 of the group's
 * messages numbers each back from its session's new last one, read by key
 * per message: as a join, PostgreSQL's planner scanned every session of the
 * node per group, most of its time per greeting. Sessions in key order: two
 * replicas' groups lock shared sessions in one order.
 */
function turnsWrite(tables: TurnTables, turns: QueuedTurn[]): SqlWrite {
  const bySession = new Map<string, QueuedTurn[]>();
  for (const turn of turns) {
    const key = sessionKey(turn.owner, turn.sessionId);
    const own = bySession.get(key);
    if (own) own.push(turn);
    else bySession.set(key, [turn]);
  }
  const sessions = [...bySession.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
  const counts = sessions.map((own) => own.reduce((sum, turn) => sum + turn.messages.length, 0));
  const messages = sessions.flatMap((own, i) => {
    let after = counts[i];
    return own.flatMap((turn) =>
      turn.messages.map((m) => [
        turn.owner,
        turn.sessionId,
        --after,
        m.role,
        m.content,
        toolCallsColumn(m),
        m.toolCallId ?? null,
        m.toolName ?? null,
        m.author ?? null,
        m.visible,
        turn.now,
      ]),
    );
  });
  const sessionRows = sessions.map((own, i) => [
    own[0].owner,
    own[0].sessionId,
    own[0].now,
    own.at(-1)!.now,
    own.at(-1)!.state,
    counts[i],
  ]);
  // `WHERE true`: SQLite's parser needs it before an upsert's ON CONFLICT.
  const upserts = tables.sessions(sessionRows).map(({ from, params }) => ({
    text: `INSERT INTO sessions (owner, id, created_at, updated_at, state, last_seq)
           SELECT s.owner, s.id, s.created_at, s.updated_at, s.state, s.last_seq FROM ${from} s WHERE true
           ON CONFLICT (owner, id) DO UPDATE SET updated_at = excluded.updated_at, state = excluded.state,
             last_seq = sessions.last_seq + excluded.last_seq
           RETURNING owner, id, last_seq`,
    params,
  }));
  const inserts = tables.messages(messages).map(({ from, params }) => ({
    text: `INSERT INTO session_messages
             (owner, session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at)
           SELECT m.owner, m.session_id,
             (SELECT s.last_seq FROM sessions s WHERE s.owner = m.owner AND s.id = m.session_id) - m.after,
             m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.author, m.visible, m.created_at
           FROM ${from} m`,
    params,
  }));
  return {
    statements: [...upserts, ...inserts],
    committed(results) {
      const last = new Map(
        results
          .slice(0, upserts.length)
          .flatMap(({ rows }) => rows)
          .map((row) => [sessionKey(String(row.owner), String(row.id)), Number(row.last_seq)]),
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
}

/**
 * The {@link SessionStore}. Turns are group-committed: `commitTurn` queues
 * its messages and resolves, with them numbered, once the group transaction
 * holding them has committed. A read of a session with turns still queued
 * waits for them first, so every read sees every turn handed to the store.
 * @example
 * const sessions = createSessionStore({ sql, logger, clock: () => new Date() });
 * await sessions.commitTurn(OWNER, 'cli:1', [{ role: 'user', content: 'hello', visible: true }], { remoteState: {} });
 */
export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const { sql, clock } = options;
  const redact = options.redact ?? ((text: string) => text);
  const logger = options.logger.child({ component: 'sessions' });
  const tables: TurnTables = {
    sessions: boundTables(sql.dialect, SESSION_COLUMNS),
    messages: boundTables(sql.dialect, MESSAGE_COLUMNS),
  };
  let queue: QueuedTurn[] = [];
  /** Turns handed to the store and not yet committed, per session. */
  const unwritten = new Map<string, number>();
  const takeQueued = (): SqlWrite => {
    const turns = queue;
    queue = [];
    return turnsWrite(tables, turns);
  };
  /** Waits for the queued turns of the session (of any session, for a read of all) to commit. */
  const written = async (key?: string) => {
    if (key === undefined ? unwritten.size > 0 : unwritten.has(key)) await sql.flush();
  };

  return {
    async commitTurn(principal, sessionId, messages, state) {
      const owner = principal.id;
      const key = sessionKey(owner, sessionId);
      const turn: QueuedTurn = {
        owner,
        sessionId,
        now: clock().toISOString(),
        // The runner's own typed state: written as it is (a zod parse per turn cost more than the row's JSON).
        state: JSON.stringify({ ...state, remoteState: state.remoteState ?? {} }),
        messages: redactMessages(messages, redact),
      };
      queue.push(turn);
      unwritten.set(key, (unwritten.get(key) ?? 0) + 1);
      try {
        await sql.write(takeQueued);
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
      const where = `owner = ? AND session_id = ?${visibleOnly ? ' AND visible = ?' : ''}`;
      const text = limit
        ? `SELECT * FROM (SELECT * FROM session_messages WHERE ${where} ORDER BY seq DESC LIMIT ${Math.max(1, Math.floor(limit))}) m ORDER BY seq`
        : `SELECT * FROM session_messages WHERE ${where} ORDER BY seq`;
      const params = visibleOnly ? [principal.id, sessionId, true] : [principal.id, sessionId];
      return (await sql.all<MessageRow>(text, params)).map(messageFromRow);
    },
    async state(principal, sessionId) {
      await written(sessionKey(principal.id, sessionId));
      const row = await sql.get<{ state: string }>('SELECT state FROM sessions WHERE owner = ? AND id = ?', [
        principal.id,
        sessionId,
      ]);
      return stateFromColumn(row?.state, logger, sessionId);
    },
    async list(principal, limit = 100) {
      await written();
      const owner = visibleOwner(principal) ?? null;
      const found = await sql.all<{
        owner: string;
        id: string;
        updated_at: string;
        title: string | null;
        first_message: string | null;
      }>(
        `SELECT owner, id, updated_at, title, (SELECT substr(content, 1, ?) FROM session_messages m
           WHERE m.owner = sessions.owner AND m.session_id = sessions.id AND m.role = 'user'
           ORDER BY seq LIMIT 1) AS first_message
         FROM sessions WHERE ${anyOrEqual('owner')} ORDER BY updated_at DESC LIMIT ?`,
        [FIRST_MESSAGE_CHARS, owner, owner, limit],
      );
      return found.map((r) => ({
        owner: r.owner,
        id: r.id,
        updatedAt: r.updated_at,
        ...(r.first_message !== null ? { firstMessage: r.first_message } : {}),
        ...(r.title !== null ? { title: r.title } : {}),
      }));
    },
    async rename(principal, sessionId, title) {
      await written(sessionKey(principal.id, sessionId));
      const named = title.trim().slice(0, MAX_TITLE_CHARS) || null;
      return (
        (await sql.run('UPDATE sessions SET title = ? WHERE owner = ? AND id = ?', [named, principal.id, sessionId])) >
        0
      );
    },
    async delete(principal, sessionId) {
      await written(sessionKey(principal.id, sessionId));
      return (await sql.run('DELETE FROM sessions WHERE owner = ? AND id = ?', [principal.id, sessionId])) > 0;
    },
  };
}
