import type { Principal } from '../../principal';
import { visibleOwner } from '../../principal';
import { KnowledgeKind, type InquiryStore, type KnowledgeStore } from '../knowledge';
import {
  EMBEDDED_TEXT,
  normalizeQuestion,
  toInquiry,
  toKnowledge,
  toLearning,
  type InquiryRow,
  type KnowledgeRow,
  type LearningRow,
} from '../knowledgeRows';
import { migrate, type SqliteDatabase } from './database';
import { bm25Score, ftsQuery } from './fts';
import { placeholders } from './rows';

const KNOWLEDGE_STEPS = [
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
  // Knowledge belongs to the principal that saved it; rows saved before principals existed are the owner's.
  `ALTER TABLE knowledge ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
   ALTER TABLE learnings ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
   CREATE INDEX knowledge_by_owner ON knowledge (owner, id);
   CREATE INDEX learnings_by_owner ON learnings (owner, id);`,
];

/**
 * The {@link KnowledgeStore} in SQLite: knowledge and learnings, each with an
 * FTS5 index (porter stemming, so "deploying" finds "deployment") kept in step
 * by triggers. Vectors for retrieval live in `rag_vectors`, keyed by these ids.
 */
export function createSqliteKnowledgeStore(options: { db: SqliteDatabase; clock: () => Date }): KnowledgeStore {
  const { db, clock } = options;
  migrate(db, 'librarian_knowledge', KNOWLEDGE_STEPS);
  const byIds = <Row extends { id: number | string }, T>(
    table: string,
    principal: Principal,
    ids: string[],
    map: (r: Row) => T,
  ) => {
    if (ids.length === 0) return new Map<string, T>();
    const rows = db
      .prepare(`SELECT * FROM ${table} WHERE (? IS NULL OR owner = ?) AND id IN (${placeholders(ids.length)})`)
      .all(visibleOwner(principal) ?? null, visibleOwner(principal) ?? null, ...ids.map(Number)) as Row[];
    return new Map(rows.map((r) => [String(r.id), map(r)]));
  };

  return {
    async saveKnowledge(principal, input) {
      const row = db
        .prepare(
          `INSERT INTO knowledge (owner, kind, content, source, tags, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        )
        .get(
          principal.id,
          input.kind,
          input.content,
          input.source ?? null,
          JSON.stringify(input.tags ?? []),
          input.sessionId ?? null,
          clock().toISOString(),
        ) as KnowledgeRow;
      return toKnowledge(row);
    },
    async saveLearning(principal, input) {
      const row = db
        .prepare(
          `INSERT INTO learnings (owner, error_pattern, diagnosis, fix, tags, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        )
        .get(
          principal.id,
          input.errorPattern,
          input.diagnosis,
          input.fix,
          JSON.stringify(input.tags ?? []),
          input.sessionId ?? null,
          clock().toISOString(),
        ) as LearningRow;
      return toLearning(row);
    },
    async recentKnowledge(principal, options) {
      const owner = options.ownOnly ? principal.id : (visibleOwner(principal) ?? null);
      const found = db
        .prepare('SELECT * FROM knowledge WHERE (? IS NULL OR owner = ?) ORDER BY id DESC LIMIT ?')
        .all(owner, owner, options.limit) as KnowledgeRow[];
      return found.map(toKnowledge);
    },
    async searchKnowledge(principal, query, options) {
      const match = ftsQuery(query);
      if (!match) return [];
      const kinds = options.kinds?.length ? options.kinds : KnowledgeKind.options;
      const owner = visibleOwner(principal) ?? null;
      const rows = db
        .prepare(
          `SELECT k.*, bm25(knowledge_fts, 4.0, 2.0, 1.0) AS rank FROM knowledge_fts JOIN knowledge k ON k.id = knowledge_fts.rowid
           WHERE knowledge_fts MATCH ? AND (? IS NULL OR k.owner = ?) AND k.kind IN (${placeholders(kinds.length)})
           ORDER BY rank LIMIT ?`,
        )
        .all(match, owner, owner, ...kinds, options.limit) as (KnowledgeRow & { rank: number })[];
      return rows.map((r) => ({ ...toKnowledge(r), score: bm25Score(r.rank) }));
    },
    async searchLearnings(principal, query, options) {
      const match = ftsQuery(query);
      if (!match) return [];
      const owner = visibleOwner(principal) ?? null;
      const rows = db
        .prepare(
          `SELECT l.*, bm25(learnings_fts, 4.0, 2.0, 2.0, 1.0) AS rank FROM learnings_fts JOIN learnings l ON l.id = learnings_fts.rowid
           WHERE learnings_fts MATCH ? AND (? IS NULL OR l.owner = ?) ORDER BY rank LIMIT ?`,
        )
        .all(match, owner, owner, options.limit) as (LearningRow & { rank: number })[];
      return rows.map((r) => ({ ...toLearning(r), score: bm25Score(r.rank) }));
    },
    knowledgeByIds: async (principal, ids) => byIds('knowledge', principal, ids, toKnowledge),
    learningsByIds: async (principal, ids) => byIds('learnings', principal, ids, toLearning),
    async unembedded(collection, provider, afterId, limit) {
      const rows = db
        .prepare(
          `SELECT t.id AS id, t.owner AS owner, ${EMBEDDED_TEXT[collection]} AS text FROM ${collection} t
           WHERE t.id > ?
             AND NOT EXISTS (SELECT 1 FROM rag_vectors v WHERE v.collection = ? AND v.ref_id = t.id AND v.provider = ?)
           ORDER BY t.id LIMIT ?`,
        )
        .all(afterId === undefined ? 0 : Number(afterId), collection, provider, limit) as {
        id: number;
        owner: string;
        text: string;
      }[];
      return rows.map((r) => ({ id: String(r.id), owner: r.owner, text: r.text }));
    },
  };
}

const INQUIRY_STEPS = [
  `CREATE TABLE librarian_inquiries (
     id INTEGER PRIMARY KEY, question TEXT NOT NULL, normalized TEXT NOT NULL, origin TEXT NOT NULL, session_id TEXT,
     status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL, dismissed_at TEXT, reason TEXT);
   CREATE INDEX librarian_inquiries_status ON librarian_inquiries (status, id);`,
  `ALTER TABLE librarian_inquiries ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
   CREATE INDEX librarian_inquiries_by_owner ON librarian_inquiries (owner, status, id);`,
];

/** The {@link InquiryStore} in SQLite (`librarian_inquiries`). */
export function createSqliteInquiryStore(options: { db: SqliteDatabase; clock: () => Date }): InquiryStore {
  const { db, clock } = options;
  migrate(db, 'librarian_inquiries', INQUIRY_STEPS);
  return {
    async raise(principal, input) {
      const normalized = normalizeQuestion(input.question);
      const existing = db
        .prepare(`SELECT * FROM librarian_inquiries WHERE owner = ? AND normalized = ? AND status = 'pending'`)
        .get(principal.id, normalized) as InquiryRow | undefined;
      if (existing) return toInquiry(existing);
      const row = db
        .prepare(
          `INSERT INTO librarian_inquiries (owner, question, normalized, origin, session_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
        )
        .get(
          principal.id,
          input.question,
          normalized,
          input.origin,
          input.sessionId ?? null,
          clock().toISOString(),
        ) as InquiryRow;
      return toInquiry(row);
    },
    async pending(principal, limit, options = {}) {
      const owner = options.ownOnly ? principal.id : (visibleOwner(principal) ?? null);
      return (
        db
          .prepare(
            `SELECT * FROM librarian_inquiries WHERE status = 'pending' AND (? IS NULL OR owner = ?) ORDER BY id LIMIT ?`,
          )
          .all(owner, owner, limit) as InquiryRow[]
      ).map(toInquiry);
    },
    async dismiss(principal, id, reason) {
      const owner = visibleOwner(principal) ?? null;
      const row = db
        .prepare(
          `UPDATE librarian_inquiries SET status = 'dismissed', dismissed_at = ?, reason = ?
           WHERE id = ? AND status = 'pending' AND (? IS NULL OR owner = ?) RETURNING *`,
        )
        .get(clock().toISOString(), reason ?? null, Number(id), owner, owner) as InquiryRow | undefined;
      return row && toInquiry(row);
    },
  };
}
