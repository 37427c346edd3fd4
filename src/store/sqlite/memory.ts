import type { Memory, MemoryStore } from '../memory';
import { memoryScope, toObservation, toReflection, type ObservationRow, type ReflectionRow } from '../memoryRows';
import { migrate, type SqliteDatabase } from './database';
import { bm25Score, ftsQuery } from './fts';
import { placeholders } from './rows';

const STEPS = [
  `CREATE TABLE memory_observations (
     id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL, origin TEXT NOT NULL,
     reflection_id INTEGER, created_at TEXT NOT NULL);
   CREATE INDEX memory_observations_session ON memory_observations (session_id, id);
   CREATE VIRTUAL TABLE memory_observations_fts USING fts5(content, content='memory_observations', content_rowid='id',
     tokenize='porter unicode61');
   CREATE TRIGGER memory_observations_ai AFTER INSERT ON memory_observations BEGIN
     INSERT INTO memory_observations_fts(rowid, content) VALUES (new.id, new.content);
   END;
   CREATE TABLE memory_reflections (
     id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL, observation_count INTEGER NOT NULL,
     created_at TEXT NOT NULL);
   CREATE INDEX memory_reflections_session ON memory_reflections (session_id, id);
   CREATE VIRTUAL TABLE memory_reflections_fts USING fts5(content, content='memory_reflections', content_rowid='id',
     tokenize='porter unicode61');
   CREATE TRIGGER memory_reflections_ai AFTER INSERT ON memory_reflections BEGIN
     INSERT INTO memory_reflections_fts(rowid, content) VALUES (new.id, new.content);
   END;
   CREATE TABLE memory_progress (session_id TEXT PRIMARY KEY, observed_messages INTEGER NOT NULL);`,
  // Every memory belongs to a principal; memories kept before principals existed are the owner's.
  `ALTER TABLE memory_observations ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
   ALTER TABLE memory_reflections ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
   DROP INDEX memory_observations_session;
   DROP INDEX memory_reflections_session;
   CREATE INDEX memory_observations_session ON memory_observations (owner, session_id, id);
   CREATE INDEX memory_reflections_session ON memory_reflections (owner, session_id, id);
   CREATE TABLE memory_progress_by_owner (
     owner TEXT NOT NULL, session_id TEXT NOT NULL, observed_messages INTEGER NOT NULL, PRIMARY KEY (owner, session_id));
   INSERT INTO memory_progress_by_owner SELECT 'owner', session_id, observed_messages FROM memory_progress;
   DROP TABLE memory_progress;
   ALTER TABLE memory_progress_by_owner RENAME TO memory_progress;`,
];

const SCOPE_SQL = '(@owner IS NULL OR owner = @owner) AND (@session IS NULL OR session_id = @session)';

/**
 * The {@link MemoryStore} in SQLite: each table has an FTS5 twin `<table>_fts`
 * (porter stemming) kept in step by triggers, and recall ranks by bm25.
 * @example
 * const memory = createSqliteMemoryStore({ db, clock: () => new Date() });
 * await memory.addObservations(OWNER, 'cli:1', ['prefers tea'], 'event');
 */
export function createSqliteMemoryStore(options: { db: SqliteDatabase; clock: () => Date }): MemoryStore {
  const { db, clock } = options;
  migrate(db, 'chronicler_memory', STEPS);
  // False until a memory exists: recall then answers at once (it runs for every agent of every turn).
  let hasMemories =
    (
      db
        .prepare(
          'SELECT EXISTS (SELECT 1 FROM memory_observations) OR EXISTS (SELECT 1 FROM memory_reflections) AS found',
        )
        .get() as { found: number }
    ).found === 1;

  return {
    async addObservations(principal, sessionId, contents, origin) {
      const insert = db.prepare(
        'INSERT INTO memory_observations (owner, session_id, content, origin, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
      );
      const now = clock().toISOString();
      hasMemories = true;
      return db.transaction(() =>
        contents.map((c) => toObservation(insert.get(principal.id, sessionId, c, origin, now) as ObservationRow)),
      )();
    },
    async addReflection(principal, sessionId, content, observationIds) {
      hasMemories = true;
      return db.transaction(() => {
        const row = db
          .prepare(
            'INSERT INTO memory_reflections (owner, session_id, content, observation_count, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
          )
          .get(principal.id, sessionId, content, observationIds.length, clock().toISOString()) as ReflectionRow;
        if (observationIds.length > 0) {
          db.prepare(
            `UPDATE memory_observations SET reflection_id = ? WHERE owner = ? AND id IN (${placeholders(observationIds.length)})`,
          ).run(row.id, principal.id, ...observationIds.map(Number));
        }
        return toReflection(row);
      })();
    },
    async observations(principal, options) {
      const rows = db
        .prepare(
          `SELECT * FROM (SELECT * FROM memory_observations WHERE ${SCOPE_SQL}
             AND (@unreflected = 0 OR reflection_id IS NULL) ORDER BY id DESC LIMIT @limit) ORDER BY id`,
        )
        .all({
          ...memoryScope(principal, options),
          unreflected: options.unreflectedOnly ? 1 : 0,
          limit: options.limit,
        }) as ObservationRow[];
      return rows.map(toObservation);
    },
    async reflections(principal, options) {
      const rows = db
        .prepare(
          `SELECT * FROM (SELECT * FROM memory_reflections WHERE ${SCOPE_SQL} ORDER BY id DESC LIMIT @limit) ORDER BY id`,
        )
        .all({ ...memoryScope(principal, options), limit: options.limit }) as ReflectionRow[];
      return rows.map(toReflection);
    },
    async countUnreflected(principal, sessionId) {
      return (
        db
          .prepare(
            'SELECT count(*) AS n FROM memory_observations WHERE owner = ? AND session_id = ? AND reflection_id IS NULL',
          )
          .get(principal.id, sessionId) as { n: number }
      ).n;
    },
    async recall(principal, query, options) {
      if (!hasMemories) return [];
      const match = ftsQuery(query, { prefixes: true });
      if (!match) return [];
      const params = { match, ...memoryScope(principal, options), limit: options.limit };
      // Observations and reflections are searched alike: each table has its FTS5 twin `<table>_fts`.
      const search = <Row>(table: 'memory_observations' | 'memory_reflections') =>
        db
          .prepare(
            `SELECT m.*, bm25(${table}_fts) AS rank FROM ${table}_fts JOIN ${table} m ON m.id = ${table}_fts.rowid
             WHERE ${table}_fts MATCH @match AND (@owner IS NULL OR m.owner = @owner)
               AND (@session IS NULL OR m.session_id = @session) ORDER BY rank LIMIT @limit`,
          )
          .all(params) as (Row & { rank: number })[];
      const memories: Memory[] = [
        ...search<ObservationRow>('memory_observations').map((r) => ({
          type: 'observation' as const,
          score: bm25Score(r.rank),
          ...toObservation(r),
        })),
        // Reflections weigh a little more: they are what many observations agreed on.
        ...search<ReflectionRow>('memory_reflections').map((r) => ({
          type: 'reflection' as const,
          score: bm25Score(r.rank * 1.2),
          ...toReflection(r),
        })),
      ];
      return memories.sort((a, b) => b.score - a.score).slice(0, options.limit);
    },
    async observedMessages(principal, sessionId) {
      const row = db
        .prepare('SELECT observed_messages FROM memory_progress WHERE owner = ? AND session_id = ?')
        .get(principal.id, sessionId) as { observed_messages: number } | undefined;
      return row?.observed_messages ?? 0;
    },
    async setObservedMessages(principal, sessionId, count) {
      db.prepare(
        `INSERT INTO memory_progress (owner, session_id, observed_messages) VALUES (?, ?, ?)
         ON CONFLICT (owner, session_id) DO UPDATE SET observed_messages = excluded.observed_messages`,
      ).run(principal.id, sessionId, count);
    },
  };
}
