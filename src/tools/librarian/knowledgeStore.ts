import { z } from 'zod';
import type { SqliteDatabase } from '../../store/database';
import { migrate } from '../../store/database';
import { bm25Score, ftsQuery } from './fts';

/** The kinds of knowledge the librarian keeps. */
export const KnowledgeKind = z.enum(['fact', 'rule', 'definition', 'preference']);
export type KnowledgeKind = z.infer<typeof KnowledgeKind>;

/** One saved piece of knowledge. */
export interface KnowledgeEntry {
  id: number;
  kind: KnowledgeKind;
  content: string;
  source: string | null;
  tags: string[];
  createdAt: string;
}

/** One saved learning: an error seen, why it happened, and what fixed it. */
export interface LearningEntry {
  id: number;
  errorPattern: string;
  diagnosis: string;
  fix: string;
  tags: string[];
  createdAt: string;
}

/** A search hit: the row and its bm25 relevance (higher is better). */
export type Scored<T> = T & { score: number };

const STEPS = [
  `CREATE TABLE knowledge (
     id INTEGER PRIMARY KEY, kind TEXT NOT NULL, content TEXT NOT NULL, source TEXT,
     tags TEXT NOT NULL DEFAULT '[]', session_id TEXT, created_at TEXT NOT NULL);
   CREATE VIRTUAL TABLE knowledge_fts USING fts5(content, tags, source, content='knowledge', content_rowid='id',
     tokenize='porter unicode61');
   CREATE TRIGGER knowledge_ai AFTER INSERT ON knowledge BEGIN
     INSERT INTO knowledge_fts(rowid, content, tags, source) VALUES (new.id, new.content, new.tags, coalesce(new.source, ''));
   END;
   CREATE TRIGGER knowledge_ad AFTER DELETE ON knowledge BEGIN
     INSERT INTO knowledge_fts(knowledge_fts, rowid, content, tags, source)
       VALUES ('delete', old.id, old.content, old.tags, coalesce(old.source, ''));
   END;
   CREATE TABLE learnings (
     id INTEGER PRIMARY KEY, error_pattern TEXT NOT NULL, diagnosis TEXT NOT NULL, fix TEXT NOT NULL,
     tags TEXT NOT NULL DEFAULT '[]', session_id TEXT, created_at TEXT NOT NULL);
   CREATE VIRTUAL TABLE learnings_fts USING fts5(error_pattern, diagnosis, fix, tags, content='learnings',
     content_rowid='id', tokenize='porter unicode61');
   CREATE TRIGGER learnings_ai AFTER INSERT ON learnings BEGIN
     INSERT INTO learnings_fts(rowid, error_pattern, diagnosis, fix, tags)
       VALUES (new.id, new.error_pattern, new.diagnosis, new.fix, new.tags);
   END;
   CREATE TRIGGER learnings_ad AFTER DELETE ON learnings BEGIN
     INSERT INTO learnings_fts(learnings_fts, rowid, error_pattern, diagnosis, fix, tags)
       VALUES ('delete', old.id, old.error_pattern, old.diagnosis, old.fix, old.tags);
   END;`,
];

interface KnowledgeRow {
  id: number;
  kind: KnowledgeKind;
  content: string;
  source: string | null;
  tags: string;
  created_at: string;
}
interface LearningRow {
  id: number;
  error_pattern: string;
  diagnosis: string;
  fix: string;
  tags: string;
  created_at: string;
}

const toKnowledge = (r: KnowledgeRow): KnowledgeEntry => ({
  id: r.id,
  kind: r.kind,
  content: r.content,
  source: r.source,
  tags: JSON.parse(r.tags) as string[],
  createdAt: r.created_at,
});
const toLearning = (r: LearningRow): LearningEntry => ({
  id: r.id,
  errorPattern: r.error_pattern,
  diagnosis: r.diagnosis,
  fix: r.fix,
  tags: JSON.parse(r.tags) as string[],
  createdAt: r.created_at,
});

/**
 * Knowledge and learnings in the node's database, each with an FTS5 index
 * (porter stemming, so "deploying" finds "deployment") kept in step by
 * triggers. Vectors for retrieval live in `rag_vectors`, keyed by these ids.
 */
export class KnowledgeStore {
  private readonly db: SqliteDatabase;
  private readonly clock: () => Date;

  constructor(options: { db: SqliteDatabase; clock: () => Date }) {
    this.db = options.db;
    this.clock = options.clock;
    migrate(this.db, 'librarian_knowledge', STEPS);
  }

  saveKnowledge(input: {
    kind: KnowledgeKind;
    content: string;
    source?: string;
    tags?: string[];
    sessionId?: string;
  }): KnowledgeEntry {
    const row = this.db
      .prepare(
        `INSERT INTO knowledge (kind, content, source, tags, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        input.kind,
        input.content,
        input.source ?? null,
        JSON.stringify(input.tags ?? []),
        input.sessionId ?? null,
        this.clock().toISOString(),
      ) as KnowledgeRow;
    return toKnowledge(row);
  }

  saveLearning(input: {
    errorPattern: string;
    diagnosis: string;
    fix: string;
    tags?: string[];
    sessionId?: string;
  }): LearningEntry {
    const row = this.db
      .prepare(
        `INSERT INTO learnings (error_pattern, diagnosis, fix, tags, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        input.errorPattern,
        input.diagnosis,
        input.fix,
        JSON.stringify(input.tags ?? []),
        input.sessionId ?? null,
        this.clock().toISOString(),
      ) as LearningRow;
    return toLearning(row);
  }

  /** Knowledge ranked by bm25 over content, tags and source. */
  searchKnowledge(query: string, options: { limit: number; kinds?: KnowledgeKind[] }): Scored<KnowledgeEntry>[] {
    const match = ftsQuery(query);
    if (!match) return [];
    const kinds = options.kinds?.length ? options.kinds : KnowledgeKind.options;
    const rows = this.db
      .prepare(
        `SELECT k.*, bm25(knowledge_fts, 4.0, 2.0, 1.0) AS rank FROM knowledge_fts JOIN knowledge k ON k.id = knowledge_fts.rowid
         WHERE knowledge_fts MATCH ? AND k.kind IN (${kinds.map(() => '?').join(',')}) ORDER BY rank LIMIT ?`,
      )
      .all(match, ...kinds, options.limit) as (KnowledgeRow & { rank: number })[];
    return rows.map((r) => ({ ...toKnowledge(r), score: bm25Score(r.rank) }));
  }

  /** Learnings ranked by bm25, the error pattern weighing most. */
  searchLearnings(query: string, options: { limit: number }): Scored<LearningEntry>[] {
    const match = ftsQuery(query);
    if (!match) return [];
    const rows = this.db
      .prepare(
        `SELECT l.*, bm25(learnings_fts, 4.0, 2.0, 2.0, 1.0) AS rank FROM learnings_fts JOIN learnings l ON l.id = learnings_fts.rowid
         WHERE learnings_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(match, options.limit) as (LearningRow & { rank: number })[];
    return rows.map((r) => ({ ...toLearning(r), score: bm25Score(r.rank) }));
  }

  knowledgeByIds(ids: number[]): Map<number, KnowledgeEntry> {
    if (ids.length === 0) return new Map();
    const rows = this.db
      .prepare(`SELECT * FROM knowledge WHERE id IN (${ids.map(() => '?').join(',')})`)
      .all(...ids) as KnowledgeRow[];
    return new Map(rows.map((r) => [r.id, toKnowledge(r)]));
  }

  learningsByIds(ids: number[]): Map<number, LearningEntry> {
    if (ids.length === 0) return new Map();
    const rows = this.db
      .prepare(`SELECT * FROM learnings WHERE id IN (${ids.map(() => '?').join(',')})`)
      .all(...ids) as LearningRow[];
    return new Map(rows.map((r) => [r.id, toLearning(r)]));
  }
}
