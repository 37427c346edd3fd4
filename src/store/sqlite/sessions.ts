import type { Logger } from '../../log/logger';
import { errorMessage } from '../../errors';
import { visibleOwner } from '../../principal';
import { FIRST_MESSAGE_CHARS, MAX_TITLE_CHARS, SessionState, type SessionStore, type StoredMessage } from '../sessions';
import {
  messageFromRow,
  redactMessages,
  sessionKey,
  stateFromColumn,
  toolCallsColumn,
  type MessageRow,
} from '../sessionRows';
import { migrate, type SqliteDatabase } from './database';
import type { GroupCommit } from './groupCommit';

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
  // A conversation's name, given in the console (none: listed by its first words).
  `ALTER TABLE sessions ADD COLUMN title TEXT`,
];

/** Options of {@link createSqliteSessionStore}. */
export interface SqliteSessionStoreOptions {
  db: SqliteDatabase;
  /** The database's one group commit: turns are written with the other stores' rows. */
  group: GroupCommit;
  logger: Logger;
  clock: () => Date;
  /**
   * Applied to every message text and tool-call argument before it is stored
   * (the node passes its secret registry's masking): a secret value the model
   * handled, e.g. in `secrets_store`, never lands in session history.
   */
  redact?: (text: string) => string;
}

/** A queued turn, written by the next group commit. */
interface QueuedTurn {
  owner: string;
  sessionId: string;
  state: string;
  now: string;
  /** Each message's columns in `session_messages` order: owner, session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at. */
  rows: unknown[][];
}

/**
 * The {@link SessionStore} in SQLite. Turns are group-committed: `commitTurn`
 * numbers and queues its rows and resolves once the group transaction holding
 * them has committed. A read of a session with queued turns writes the queue
 * first, so every read sees every turn handed to the store.
 * @example
 * const sessions = createSqliteSessionStore({ db, group: createGroupCommit(db), logger, clock: () => new Date() });
 * await sessions.commitTurn(OWNER, 'cli:1', [{ role: 'user', content: 'hello', visible: true }], { remoteState: {} });
 */
export function createSqliteSessionStore(options: SqliteSessionStoreOptions): SessionStore {
  const { db, group, clock } = options;
  const redact = options.redact ?? ((text: string) => text);
  const logger = options.logger.child({ component: 'sessions' });
  migrate(db, 'sessions', STEPS);

  // Bound by position (the order of `QueuedTurn.rows`): named parameters cost a property lookup each, per row.
  const upsertSession = db.prepare(
    `INSERT INTO sessions (owner, id, created_at, updated_at, state) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(owner, id) DO UPDATE SET updated_at = excluded.updated_at, state = excluded.state`,
  );
  const insertMessage = db.prepare(
    `INSERT INTO session_messages (owner, session_id, seq, role, content, tool_calls, tool_call_id, tool_name, author, visible, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const lastSeq = db.prepare(
    'SELECT COALESCE(MAX(seq), 0) AS seq FROM session_messages WHERE owner = ? AND session_id = ?',
  );
  const selectState = db.prepare('SELECT state FROM sessions WHERE owner = ? AND id = ?');

  const queue: QueuedTurn[] = [];
  /** Last sequence number handed out per session with queued turns (the table lags until the flush). */
  const queuedSeq = new Map<string, number>();
  const writeQueued = () => {
    const items = queue.splice(0);
    queuedSeq.clear();
    for (const item of items) {
      upsertSession.run(item.owner, item.sessionId, item.now, item.now, item.state);
      for (const row of item.rows) insertMessage.run(row);
    }
  };
  /** Runs `read` after writing the queue, when it holds turns of the session (any turn, for a read of all sessions). */
  const flushed = <T>(read: () => T, key?: string): T => {
    if (key === undefined ? queue.length > 0 : queuedSeq.has(key)) group.flush();
    return read();
  };

  const readState = (owner: string, sessionId: string): SessionState => {
    const row = selectState.get(owner, sessionId) as { state: string } | undefined;
    return stateFromColumn(row?.state, logger, sessionId);
  };

  return {
    async commitTurn(principal, sessionId, messages, state, options) {
      const owner = principal.id;
      const key = sessionKey(owner, sessionId);
      const now = clock().toISOString();
      let seq =
        queuedSeq.get(key) ?? (options?.newSession ? 0 : (lastSeq.get(owner, sessionId) as { seq: number }).seq);
      const rows: unknown[][] = [];
      const stored = redactMessages(messages, redact).map((m): StoredMessage => {
        seq += 1;
        rows.push([
          owner,
          sessionId,
          seq,
          m.role,
          m.content,
          toolCallsColumn(m),
          m.toolCallId ?? null,
          m.toolName ?? null,
          m.author ?? null,
          m.visible ? 1 : 0,
          now,
        ]);
        return { ...m, sessionId, seq, createdAt: now };
      });
      queue.push({ owner, sessionId, now, state: JSON.stringify(SessionState.parse(state)), rows });
      queuedSeq.set(key, seq);
      try {
        await group.schedule(writeQueued);
      } catch (err) {
        logger.error('session write failed', { error: errorMessage(err) });
        throw err;
      }
      return stored;
    },
    messages: async (principal, sessionId, { visibleOnly = false, limit } = {}) =>
      flushed(
        () => {
          const where = visibleOnly ? 'owner = ? AND session_id = ? AND visible = 1' : 'owner = ? AND session_id = ?';
          const sql = limit
            ? `SELECT * FROM (SELECT * FROM session_messages WHERE ${where} ORDER BY seq DESC LIMIT ${Math.max(1, Math.floor(limit))}) ORDER BY seq`
            : `SELECT * FROM session_messages WHERE ${where} ORDER BY seq`;
          return (db.prepare(sql).all(principal.id, sessionId) as MessageRow[]).map(messageFromRow);
        },
        sessionKey(principal.id, sessionId),
      ),
    state: async (principal, sessionId) =>
      flushed(() => readState(principal.id, sessionId), sessionKey(principal.id, sessionId)),
    list: async (principal, limit = 100) =>
      flushed(() =>
        (
          db
            .prepare(
              `SELECT owner, id, updated_at, title, (SELECT substr(content, 1, @chars) FROM session_messages m
                 WHERE m.owner = sessions.owner AND m.session_id = sessions.id AND m.role = 'user'
                 ORDER BY seq LIMIT 1) AS first_message
               FROM sessions WHERE (@owner IS NULL OR owner = @owner) ORDER BY updated_at DESC LIMIT @limit`,
            )
            .all({ owner: visibleOwner(principal) ?? null, limit, chars: FIRST_MESSAGE_CHARS }) as {
            owner: string;
            id: string;
            updated_at: string;
            title: string | null;
            first_message: string | null;
          }[]
        ).map((r) => ({
          owner: r.owner,
          id: r.id,
          updatedAt: r.updated_at,
          ...(r.first_message !== null ? { firstMessage: r.first_message } : {}),
          ...(r.title !== null ? { title: r.title } : {}),
        })),
      ),
    rename: async (principal, sessionId, title) =>
      flushed(
        () =>
          db
            .prepare('UPDATE sessions SET title = ? WHERE owner = ? AND id = ?')
            .run(title.trim().slice(0, MAX_TITLE_CHARS) || null, principal.id, sessionId).changes > 0,
        sessionKey(principal.id, sessionId),
      ),
    delete: async (principal, sessionId) =>
      flushed(
        () => db.prepare('DELETE FROM sessions WHERE owner = ? AND id = ?').run(principal.id, sessionId).changes > 0,
        sessionKey(principal.id, sessionId),
      ),
  };
}
