import type { Memory, MemoryStore } from '../memory';
import { memoryScope, toObservation, toReflection, type ObservationRow, type ReflectionRow } from '../memoryRows';
import { rowIds, rows, transaction, type PgDatabase, type PgSchema } from './database';
import { rankScore, tsQuery } from './fts';

/** Observations and reflections, each with a generated tsvector under a GIN index (SQLite: FTS5 twins). */
export const MEMORY_SCHEMA: PgSchema = {
  store: 'chronicler_memory',
  steps: [
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

/** The owner and session a read is limited to, as $1 and $2 (see memoryScope). */
const scopeValues = (...args: Parameters<typeof memoryScope>) => {
  const { owner, session } = memoryScope(...args);
  return [owner, session];
};
const SCOPE_SQL = '($1::text IS NULL OR owner = $1) AND ($2::text IS NULL OR session_id = $2)';

/** The {@link MemoryStore} on PostgreSQL: recall ranks with ts_rank over the GIN-indexed tsvectors. */
export function createPgMemoryStore(options: { db: PgDatabase; clock: () => Date }): MemoryStore {
  const { db, clock } = options;
  /**
   * Until a memory exists recall answers at once, as in SQLite (it runs for
   * every agent of every turn). Another replica may write the first one, so
   * "none yet" is asked of the database again at most every second.
   */
  let hasMemories = false;
  let checkedEmptyAt = -Infinity;
  /** The check under way: the turns arriving meanwhile wait for its answer instead of asking again. */
  let checking: Promise<boolean> | undefined;
  const anyMemory = async () => {
    if (hasMemories || performance.now() - checkedEmptyAt < EMPTY_RECHECK_MS) return hasMemories;
    checking ??= rows<{ found: boolean }>(
      db,
      'SELECT EXISTS (SELECT 1 FROM memory_observations) OR EXISTS (SELECT 1 FROM memory_reflections) AS found',
    )
      .then(([row]) => {
        hasMemories ||= row.found;
        checkedEmptyAt = performance.now();
        return hasMemories;
      })
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };
  return {
    async addObservations(principal, sessionId, contents, origin) {
      if (contents.length === 0) return [];
      hasMemories = true;
      const inserted = await rows<ObservationRow>(
        db,
        `INSERT INTO memory_observations (owner, session_id, content, origin, created_at)
         SELECT $1, $2, c, $3, $4 FROM unnest($5::text[]) WITH ORDINALITY AS t(c, n) ORDER BY n
         RETURNING ${OBSERVATION_COLUMNS}`,
        [principal.id, sessionId, origin, clock().toISOString(), contents],
      );
      return inserted.sort((a, b) => Number(a.id) - Number(b.id)).map(toObservation);
    },
    async addReflection(principal, sessionId, content, observationIds) {
      hasMemories = true;
      return transaction(db, async (client) => {
        const [row] = await rows<ReflectionRow>(
          client,
          `INSERT INTO memory_reflections (owner, session_id, content, observation_count, created_at)
           VALUES ($1, $2, $3, $4, $5) RETURNING ${REFLECTION_COLUMNS}`,
          [principal.id, sessionId, content, observationIds.length, clock().toISOString()],
        );
        const ids = rowIds(observationIds);
        if (ids.length > 0) {
          await client.query(
            'UPDATE memory_observations SET reflection_id = $1 WHERE owner = $2 AND id = ANY($3::bigint[])',
            [row.id, principal.id, ids],
          );
        }
        return toReflection(row);
      });
    },
    async observations(principal, options) {
      const found = await rows<ObservationRow>(
        db,
        `SELECT * FROM (SELECT ${OBSERVATION_COLUMNS} FROM memory_observations WHERE ${SCOPE_SQL}
           AND (NOT $3 OR reflection_id IS NULL) ORDER BY id DESC LIMIT $4) o ORDER BY id`,
        [...scopeValues(principal, options), options.unreflectedOnly === true, options.limit],
      );
      return found.map(toObservation);
    },
    async reflections(principal, options) {
      const found = await rows<ReflectionRow>(
        db,
        `SELECT * FROM (SELECT ${REFLECTION_COLUMNS} FROM memory_reflections WHERE ${SCOPE_SQL}
           ORDER BY id DESC LIMIT $3) r ORDER BY id`,
        [...scopeValues(principal, options), options.limit],
      );
      return found.map(toReflection);
    },
    async countUnreflected(principal, sessionId) {
      const [row] = await rows<{ n: string }>(
        db,
        'SELECT count(*) AS n FROM memory_observations WHERE owner = $1 AND session_id = $2 AND reflection_id IS NULL',
        [principal.id, sessionId],
      );
      return Number(row.n);
    },
    async recall(principal, query, options) {
      const match = tsQuery(query, { prefixes: true });
      if (!match || !(await anyMemory())) return [];
      // One round trip for both tables (recall runs for every agent of every turn); reflections weigh a little
      // more: they are what many observations agreed on.
      const found = await rows<MemoryRow>(db, {
        name: 'memory_recall',
        text: `WITH q AS (SELECT to_tsquery('english', $3) AS q)
          (SELECT 'observation' AS type, ${OBSERVATION_COLUMNS}, NULL::integer AS observation_count,
             ts_rank(search, q.q) AS rank
           FROM memory_observations, q WHERE search @@ q.q AND ${SCOPE_SQL} ORDER BY rank DESC, id LIMIT $4)
          UNION ALL
          (SELECT 'reflection', id, owner, session_id, content, NULL, NULL, created_at, observation_count,
             ts_rank(search, q.q) * 1.2
           FROM memory_reflections, q WHERE search @@ q.q AND ${SCOPE_SQL} ORDER BY 10 DESC, id LIMIT $4)`,
        values: [...scopeValues(principal, options), match, options.limit],
      });
      const memories = found.map((r): Memory =>
        r.type === 'observation'
          ? { type: 'observation', score: rankScore(r.rank), ...toObservation(r) }
          : { type: 'reflection', score: rankScore(r.rank), ...toReflection(r as ReflectionRow) },
      );
      return memories.sort((a, b) => b.score - a.score).slice(0, options.limit);
    },
    async observedMessages(principal, sessionId) {
      const [row] = await rows<{ observed_messages: number }>(
        db,
        'SELECT observed_messages FROM memory_progress WHERE owner = $1 AND session_id = $2',
        [principal.id, sessionId],
      );
      return row?.observed_messages ?? 0;
    },
    async setObservedMessages(principal, sessionId, count) {
      await db.query(
        `INSERT INTO memory_progress (owner, session_id, observed_messages) VALUES ($1, $2, $3)
         ON CONFLICT (owner, session_id) DO UPDATE SET observed_messages = EXCLUDED.observed_messages`,
        [principal.id, sessionId, count],
      );
    },
  };
}
