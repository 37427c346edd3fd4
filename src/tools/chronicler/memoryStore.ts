import type { SqliteDatabase } from '../../store/database';
import { migrate } from '../../store/database';
import { bm25Score, ftsQuery } from '../librarian/fts';

/** One condensed note about a conversation. */
export interface Observation {
  id: number;
  sessionId: string;
  content: string;
  /** `observer` when condensed from messages, `event` when recorded with observe_event. */
  origin: 'observer' | 'event';
  /** The reflection that absorbed it, once reflected. */
  reflectionId: number | null;
  createdAt: string;
}

/** A condensation of several observations of a session. */
export interface Reflection {
  id: number;
  sessionId: string;
  content: string;
  observationCount: number;
  createdAt: string;
}

/** A recalled memory with its relevance (bm25, higher is better). */
export type Memory =
  ({ type: 'observation'; score: number } & Observation) | ({ type: 'reflection'; score: number } & Reflection);

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
];

interface ObservationRow {
  id: number;
  session_id: string;
  content: string;
  origin: 'observer' | 'event';
  reflection_id: number | null;
  created_at: string;
}
interface ReflectionRow {
  id: number;
  session_id: string;
  content: string;
  observation_count: number;
  created_at: string;
}

const toObservation = (r: ObservationRow): Observation => ({
  id: r.id,
  sessionId: r.session_id,
  content: r.content,
  origin: r.origin,
  reflectionId: r.reflection_id,
  createdAt: r.created_at,
});
const toReflection = (r: ReflectionRow): Reflection => ({
  id: r.id,
  sessionId: r.session_id,
  content: r.content,
  observationCount: r.observation_count,
  createdAt: r.created_at,
});

/** Observations, reflections and how far each session has been observed, in the node's database. */
export class MemoryStore {
  private readonly db: SqliteDatabase;
  private readonly clock: () => Date;

  /** False until a memory exists: recall then answers at once (it runs for every agent of every turn). */
  private hasMemories: boolean;

  constructor(options: { db: SqliteDatabase; clock: () => Date }) {
    this.db = options.db;
    this.clock = options.clock;
    migrate(this.db, 'chronicler_memory', STEPS);
    const row = this.db
      .prepare(
        'SELECT EXISTS (SELECT 1 FROM memory_observations) OR EXISTS (SELECT 1 FROM memory_reflections) AS found',
      )
      .get() as { found: number };
    this.hasMemories = row.found === 1;
  }

  addObservations(sessionId: string, contents: string[], origin: Observation['origin']): Observation[] {
    const insert = this.db.prepare(
      'INSERT INTO memory_observations (session_id, content, origin, created_at) VALUES (?, ?, ?, ?) RETURNING *',
    );
    const now = this.clock().toISOString();
    this.hasMemories = true;
    return this.db.transaction(() =>
      contents.map((c) => toObservation(insert.get(sessionId, c, origin, now) as ObservationRow)),
    )();
  }

  /** Stores a reflection and marks the observations it absorbed. */
  addReflection(sessionId: string, content: string, observationIds: number[]): Reflection {
    this.hasMemories = true;
    return this.db.transaction(() => {
      const row = this.db
        .prepare(
          'INSERT INTO memory_reflections (session_id, content, observation_count, created_at) VALUES (?, ?, ?, ?) RETURNING *',
        )
        .get(sessionId, content, observationIds.length, this.clock().toISOString()) as ReflectionRow;
      const mark = this.db.prepare('UPDATE memory_observations SET reflection_id = ? WHERE id = ?');
      for (const id of observationIds) mark.run(row.id, id);
      return toReflection(row);
    })();
  }

  /** Observations newest last; of one session, or of all with `sessionId` undefined. */
  observations(options: { sessionId?: string; limit: number; unreflectedOnly?: boolean }): Observation[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM (SELECT * FROM memory_observations WHERE (@session IS NULL OR session_id = @session)
           AND (@unreflected = 0 OR reflection_id IS NULL) ORDER BY id DESC LIMIT @limit) ORDER BY id`,
      )
      .all({
        session: options.sessionId ?? null,
        unreflected: options.unreflectedOnly ? 1 : 0,
        limit: options.limit,
      }) as ObservationRow[];
    return rows.map(toObservation);
  }

  reflections(options: { sessionId?: string; limit: number }): Reflection[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM (SELECT * FROM memory_reflections WHERE (@session IS NULL OR session_id = @session)
           ORDER BY id DESC LIMIT @limit) ORDER BY id`,
      )
      .all({ session: options.sessionId ?? null, limit: options.limit }) as ReflectionRow[];
    return rows.map(toReflection);
  }

  countUnreflected(sessionId: string): number {
    return (
      this.db
        .prepare('SELECT count(*) AS n FROM memory_observations WHERE session_id = ? AND reflection_id IS NULL')
        .get(sessionId) as { n: number }
    ).n;
  }

  /** Observations and reflections matching `query`, best first; reflections weigh a little more. */
  recall(query: string, options: { limit: number; sessionId?: string }): Memory[] {
    if (!this.hasMemories) return [];
    const match = ftsQuery(query, { prefixes: true });
    if (!match) return [];
    const params = { match, session: options.sessionId ?? null, limit: options.limit };
    // Observations and reflections are searched alike: each table has its FTS5 twin `<table>_fts`.
    const search = <Row>(table: 'memory_observations' | 'memory_reflections') =>
      this.db
        .prepare(
          `SELECT m.*, bm25(${table}_fts) AS rank FROM ${table}_fts JOIN ${table} m ON m.id = ${table}_fts.rowid
           WHERE ${table}_fts MATCH @match AND (@session IS NULL OR m.session_id = @session) ORDER BY rank LIMIT @limit`,
        )
        .all(params) as (Row & { rank: number })[];
    const observations = search<ObservationRow>('memory_observations');
    const reflections = search<ReflectionRow>('memory_reflections');
    const memories: Memory[] = [
      ...observations.map((r) => ({ type: 'observation' as const, score: bm25Score(r.rank), ...toObservation(r) })),
      ...reflections.map((r) => ({ type: 'reflection' as const, score: bm25Score(r.rank * 1.2), ...toReflection(r) })),
    ];
    return memories.sort((a, b) => b.score - a.score).slice(0, options.limit);
  }

  /** How many of a session's messages the observer has already condensed. */
  observedMessages(sessionId: string): number {
    const row = this.db.prepare('SELECT observed_messages FROM memory_progress WHERE session_id = ?').get(sessionId) as
      { observed_messages: number } | undefined;
    return row?.observed_messages ?? 0;
  }

  setObservedMessages(sessionId: string, count: number): void {
    this.db
      .prepare(
        `INSERT INTO memory_progress (session_id, observed_messages) VALUES (?, ?)
         ON CONFLICT (session_id) DO UPDATE SET observed_messages = excluded.observed_messages`,
      )
      .run(sessionId, count);
  }
}
