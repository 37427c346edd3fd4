import type { Memory, MemoryStore } from '../memory';
import { memoryScope, toObservation, toReflection, type ObservationRow, type ReflectionRow } from '../memoryRows';
import { columnsOf, textSearch } from './dialect';
import { rowIds } from './rows';
import { inList, type Sql, type StoreSchema } from './sql';

/** Observations and reflections, each searchable (SQLite: FTS5 twins kept by triggers; PostgreSQL: GIN-indexed tsvectors). */
export const MEMORY_SCHEMA: StoreSchema = {
  store: 'chronicler_memory',
  sqlite: [
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
  ],
  postgres: [
    `CREATE TABLE memory_observations (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, session_id TEXT NOT NULL, content TEXT NOT NULL,
       origin TEXT NOT NULL, reflection_id BIGINT, created_at TEXT NOT NULL,
       search TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED);
     CREATE INDEX memory_observations_session ON memory_observations (owner, session_id, id);
     CREATE INDEX memory_observations_search ON memory_observations USING GIN (search);
     CREATE TABLE memory_reflections (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, session_id TEXT NOT NULL, content TEXT NOT NULL,
       observation_count INTEGER NOT NULL, created_at TEXT NOT NULL,
       search TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED);
     CREATE INDEX memory_reflections_session ON memory_reflections (owner, session_id, id);
     CREATE INDEX memory_reflections_search ON memory_reflections USING GIN (search);
     CREATE TABLE memory_progress (
       owner TEXT NOT NULL, session_id TEXT NOT NULL, observed_messages INTEGER NOT NULL,
       PRIMARY KEY (owner, session_id));`,
  ],
};

const OBSERVATION_COLUMNS = 'id, owner, session_id, content, origin, reflection_id, created_at';
const REFLECTION_COLUMNS = 'id, owner, session_id, content, observation_count, created_at';

/** How long "no memory exists" is believed before the database is asked again. */
const EMPTY_RECHECK_MS = 1000;

/** A recall hit from either table. */
type MemoryRow = ObservationRow & { type: 'observation' | 'reflection'; observation_count: number; rank: number };

/** The owner and session a read is limited to, bound as `?` four times (see {@link SCOPE_SQL}). */
const scopeValues = (...args: Parameters<typeof memoryScope>) => {
  const { owner, session } = memoryScope(...args);
  return [owner, owner, session, session];
};
const SCOPE_SQL = '(CAST(? AS TEXT) IS NULL OR m.owner = ?) AND (CAST(? AS TEXT) IS NULL OR m.session_id = ?)';

/**
 * The {@link MemoryStore}; recall ranks by the database's text search.
 * @example
 * const memory = createMemoryStore({ sql, clock: () => new Date() });
 * await memory.addObservations(OWNER, 'cli:1', ['prefers tea'], 'event');
 */
export function createMemoryStore(options: { sql: Sql; clock: () => Date }): MemoryStore {
  const { sql, clock } = options;
  const search = textSearch(sql.dialect);
  /**
   * Until a memory exists recall answers at once (it runs for every agent
   * of every turn). Another replica may write the first one, so "none yet"
   * is asked of the database again at most every second.
   */
  let hasMemories = false;
  let checkedEmptyAt = -Infinity;
  /** The check under way: the turns arriving meanwhile wait for its answer instead of asking again. */
  let checking: Promise<boolean> | undefined;
  const anyMemory = async () => {
    if (hasMemories || performance.now() - checkedEmptyAt < EMPTY_RECHECK_MS) return hasMemories;
    checking ??= sql
      .get<{ found: unknown }>(
        `SELECT CASE WHEN EXISTS (SELECT 1 FROM memory_observations) OR EXISTS (SELECT 1 FROM memory_reflections)
           THEN 1 ELSE 0 END AS found`,
      )
      .then((row) => {
        hasMemories ||= Number(row?.found) === 1;
        checkedEmptyAt = performance.now();
        return hasMemories;
      })
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };
  const scoped = (table: string, columns: string, condition = '') =>
    `SELECT * FROM (SELECT ${columns} FROM ${table} m WHERE ${SCOPE_SQL}${condition} ORDER BY id DESC LIMIT ?) r
     ORDER BY id`;
  return {
    async addObservations(principal, sessionId, contents, origin) {
      if (contents.length === 0) return [];
      hasMemories = true;
      const now = clock().toISOString();
      const rows = await sql.transaction(async (tx) => {
        const inserted: ObservationRow[] = [];
        for (const content of contents)
          inserted.push(
            (await tx.get<ObservationRow>(
              `INSERT INTO memory_observations (owner, session_id, content, origin, created_at) VALUES (?, ?, ?, ?, ?)
               RETURNING ${OBSERVATION_COLUMNS}`,
              [principal.id, sessionId, content, origin, now],
            ))!,
          );
        return inserted;
      });
      return rows.map(toObservation);
    },
    addReflection(principal, sessionId, content, observationIds) {
      hasMemories = true;
      return sql.transaction(async (tx) => {
        const row = (await tx.get<ReflectionRow>(
          `INSERT INTO memory_reflections (owner, session_id, content, observation_count, created_at)
           VALUES (?, ?, ?, ?, ?) RETURNING ${REFLECTION_COLUMNS}`,
          [principal.id, sessionId, content, observationIds.length, clock().toISOString()],
        ))!;
        const ids = rowIds(observationIds);
        if (ids.length > 0) {
          await tx.run(
            `UPDATE memory_observations SET reflection_id = ? WHERE owner = ? AND id IN (${inList(ids.length)})`,
            [row.id, principal.id, ...ids],
          );
        }
        return toReflection(row);
      });
    },
    async observations(principal, options) {
      const found = await sql.all<ObservationRow>(
        scoped('memory_observations', OBSERVATION_COLUMNS, options.unreflectedOnly ? ' AND reflection_id IS NULL' : ''),
        [...scopeValues(principal, options), options.limit],
      );
      return found.map(toObservation);
    },
    async reflections(principal, options) {
      const found = await sql.all<ReflectionRow>(scoped('memory_reflections', REFLECTION_COLUMNS), [
        ...scopeValues(principal, options),
        options.limit,
      ]);
      return found.map(toReflection);
    },
    async countUnreflected(principal, sessionId) {
      const row = await sql.get<{ n: number | string }>(
        'SELECT count(*) AS n FROM memory_observations WHERE owner = ? AND session_id = ? AND reflection_id IS NULL',
        [principal.id, sessionId],
      );
      return Number(row?.n ?? 0);
    },
    async recall(principal, query, options) {
      const match = search.query(query, { prefixes: true });
      if (!match || !(await anyMemory())) return [];
      // One round trip for both tables (recall runs for every agent of every turn); reflections weigh a little
      // more: they are what many observations agreed on.
      const hits = (table: string, type: string, columns: string, weight: string) =>
        `SELECT * FROM (SELECT '${type}' AS type, ${columns}, ${search.rank(table, 'm')}${weight} AS rank
           ${search.from(table, 'm')} AND ${SCOPE_SQL} ORDER BY ${search.best}, m.id LIMIT ?) ${type}s`;
      const params = [match, ...scopeValues(principal, options), options.limit];
      const found = await sql.all<MemoryRow>(
        `${hits('memory_observations', 'observation', `${columnsOf('m', OBSERVATION_COLUMNS)}, CAST(NULL AS INTEGER) AS observation_count`, '')}
         UNION ALL
         ${hits('memory_reflections', 'reflection', `m.id, m.owner, m.session_id, m.content, CAST(NULL AS TEXT), CAST(NULL AS INTEGER), m.created_at, m.observation_count`, ' * 1.2')}`,
        [...params, ...params],
      );
      const memories = found.map((r): Memory =>
        r.type === 'observation'
          ? { type: 'observation', score: search.score(r.rank), ...toObservation(r) }
          : { type: 'reflection', score: search.score(r.rank), ...toReflection(r as ReflectionRow) },
      );
      return memories.sort((a, b) => b.score - a.score).slice(0, options.limit);
    },
    async observedMessages(principal, sessionId) {
      const row = await sql.get<{ observed_messages: number }>(
        'SELECT observed_messages FROM memory_progress WHERE owner = ? AND session_id = ?',
        [principal.id, sessionId],
      );
      return row?.observed_messages ?? 0;
    },
    async setObservedMessages(principal, sessionId, count) {
      await sql.run(
        `INSERT INTO memory_progress (owner, session_id, observed_messages) VALUES (?, ?, ?)
         ON CONFLICT (owner, session_id) DO UPDATE SET observed_messages = excluded.observed_messages`,
        [principal.id, sessionId, count],
      );
    },
  };
}
