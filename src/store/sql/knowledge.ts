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
import { anyOrEqual, columnsOf, textSearch } from './dialect';
import { rowId, rowIds } from './rows';
import { inList, type Sql, type StoreSchema } from './sql';

/**
 * Knowledge and learnings, each searchable by its words: SQLite keeps an
 * FTS5 twin per table (porter stemming, so "deploying" finds "deployment")
 * in step by triggers, ranked by bm25 with column weights; PostgreSQL a
 * weighted generated tsvector under a GIN index: content before tags before
 * source; the error pattern before diagnosis and fix before tags.
 */
export const KNOWLEDGE_SCHEMA: StoreSchema = {
  store: 'librarian_knowledge',
  sqlite: [
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
  ],
  postgres: [
    `CREATE TABLE knowledge (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, content TEXT NOT NULL, source TEXT,
       tags TEXT NOT NULL DEFAULT '[]', session_id TEXT, created_at TEXT NOT NULL,
       search TSVECTOR GENERATED ALWAYS AS (
         setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', tags), 'B') ||
         setweight(to_tsvector('english', coalesce(source, '')), 'C')) STORED);
     CREATE INDEX knowledge_by_owner ON knowledge (owner, id);
     CREATE INDEX knowledge_search ON knowledge USING GIN (search);
     CREATE TABLE learnings (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, error_pattern TEXT NOT NULL, diagnosis TEXT NOT NULL,
       fix TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '[]', session_id TEXT, created_at TEXT NOT NULL,
       search TSVECTOR GENERATED ALWAYS AS (
         setweight(to_tsvector('english', error_pattern), 'A') ||
         setweight(to_tsvector('english', diagnosis || ' ' || fix), 'B') ||
         setweight(to_tsvector('english', tags), 'C')) STORED);
     CREATE INDEX learnings_by_owner ON learnings (owner, id);
     CREATE INDEX learnings_search ON learnings USING GIN (search);`,
  ],
};

/** Knowledge gaps (`librarian_inquiries`). */
export const INQUIRY_SCHEMA: StoreSchema = {
  store: 'librarian_inquiries',
  sqlite: [
    `CREATE TABLE librarian_inquiries (
       id INTEGER PRIMARY KEY, question TEXT NOT NULL, normalized TEXT NOT NULL, origin TEXT NOT NULL, session_id TEXT,
       status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL, dismissed_at TEXT, reason TEXT);
     CREATE INDEX librarian_inquiries_status ON librarian_inquiries (status, id);`,
    `ALTER TABLE librarian_inquiries ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
     CREATE INDEX librarian_inquiries_by_owner ON librarian_inquiries (owner, status, id);`,
  ],
  postgres: [
    `CREATE TABLE librarian_inquiries (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, question TEXT NOT NULL, normalized TEXT NOT NULL,
       origin TEXT NOT NULL, session_id TEXT, status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL,
       dismissed_at TEXT, reason TEXT);
     CREATE INDEX librarian_inquiries_by_owner ON librarian_inquiries (owner, status, id);
     CREATE UNIQUE INDEX librarian_inquiries_one_pending ON librarian_inquiries (owner, normalized)
       WHERE status = 'pending';`,
  ],
};

const KNOWLEDGE_COLUMNS = 'id, owner, kind, content, source, tags, created_at';
const LEARNING_COLUMNS = 'id, owner, error_pattern, diagnosis, fix, tags, created_at';
const INQUIRY_COLUMNS = 'id, owner, question, origin, session_id, status, created_at, dismissed_at, reason';

/** The {@link KnowledgeStore}. Vectors for retrieval live in `rag_vectors`, keyed by these ids. */
export function createKnowledgeStore(options: { sql: Sql; clock: () => Date }): KnowledgeStore {
  const { sql, clock } = options;
  const search = textSearch(sql.dialect);
  const byIds = async <Row extends { id: number | string }, T>(
    table: string,
    columns: string,
    principal: Principal,
    ids: string[],
    map: (r: Row) => T,
  ) => {
    const wanted = rowIds(ids);
    if (wanted.length === 0) return new Map<string, T>();
    const owner = visibleOwner(principal) ?? null;
    const found = await sql.all<Row>(
      `SELECT ${columns} FROM ${table} WHERE ${anyOrEqual('owner')} AND id IN (${inList(wanted.length)})`,
      [owner, owner, ...wanted],
    );
    return new Map(found.map((r) => [String(r.id), map(r)]));
  };
  const inserted = async <Row>(text: string, params: unknown[]) => (await sql.get<Row>(text, params))!;

  return {
    async saveKnowledge(principal, input) {
      const row = await inserted<KnowledgeRow>(
        `INSERT INTO knowledge (owner, kind, content, source, tags, session_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${KNOWLEDGE_COLUMNS}`,
        [
          principal.id,
          input.kind,
          input.content,
          input.source ?? null,
          JSON.stringify(input.tags ?? []),
          input.sessionId ?? null,
          clock().toISOString(),
        ],
      );
      return toKnowledge(row);
    },
    async saveLearning(principal, input) {
      const row = await inserted<LearningRow>(
        `INSERT INTO learnings (owner, error_pattern, diagnosis, fix, tags, session_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${LEARNING_COLUMNS}`,
        [
          principal.id,
          input.errorPattern,
          input.diagnosis,
          input.fix,
          JSON.stringify(input.tags ?? []),
          input.sessionId ?? null,
          clock().toISOString(),
        ],
      );
      return toLearning(row);
    },
    async recentKnowledge(principal, options) {
      const owner = options.ownOnly ? principal.id : (visibleOwner(principal) ?? null);
      const found = await sql.all<KnowledgeRow>(
        `SELECT ${KNOWLEDGE_COLUMNS} FROM knowledge WHERE ${anyOrEqual('owner')} ORDER BY id DESC LIMIT ?`,
        [owner, owner, options.limit],
      );
      return found.map(toKnowledge);
    },
    async searchKnowledge(principal, query, options) {
      const match = search.query(query);
      if (!match) return [];
      const kinds = options.kinds?.length ? options.kinds : KnowledgeKind.options;
      const owner = visibleOwner(principal) ?? null;
      const found = await sql.all<KnowledgeRow & { rank: number }>(
        `SELECT ${columnsOf('k', KNOWLEDGE_COLUMNS)}, ${search.rank('knowledge', 'k', '4.0, 2.0, 1.0')} AS rank
         ${search.from('knowledge', 'k')} AND ${anyOrEqual('k.owner')} AND k.kind IN (${inList(kinds.length)})
         ORDER BY ${search.best}, k.id LIMIT ?`,
        [match, owner, owner, ...kinds, options.limit],
      );
      return found.map((r) => ({ ...toKnowledge(r), score: search.score(r.rank) }));
    },
    async searchLearnings(principal, query, options) {
      const match = search.query(query);
      if (!match) return [];
      const owner = visibleOwner(principal) ?? null;
      const found = await sql.all<LearningRow & { rank: number }>(
        `SELECT ${columnsOf('l', LEARNING_COLUMNS)}, ${search.rank('learnings', 'l', '4.0, 2.0, 2.0, 1.0')} AS rank
         ${search.from('learnings', 'l')} AND ${anyOrEqual('l.owner')} ORDER BY ${search.best}, l.id LIMIT ?`,
        [match, owner, owner, options.limit],
      );
      return found.map((r) => ({ ...toLearning(r), score: search.score(r.rank) }));
    },
    knowledgeByIds: (principal, ids) => byIds('knowledge', KNOWLEDGE_COLUMNS, principal, ids, toKnowledge),
    learningsByIds: (principal, ids) => byIds('learnings', LEARNING_COLUMNS, principal, ids, toLearning),
    async unembedded(collection, provider, afterId, limit) {
      // `rag_vectors.ref_id` is an integer in SQLite, text on PostgreSQL.
      const ref = sql.dialect === 'postgres' ? 'CAST(t.id AS TEXT)' : 't.id';
      const found = await sql.all<{ id: number | string; owner: string; text: string }>(
        `SELECT t.id AS id, t.owner AS owner, ${EMBEDDED_TEXT[collection]} AS text FROM ${collection} t
         WHERE t.id > ?
           AND NOT EXISTS (SELECT 1 FROM rag_vectors v WHERE v.collection = ? AND v.ref_id = ${ref} AND v.provider = ?)
         ORDER BY t.id LIMIT ?`,
        [afterId === undefined ? 0 : (rowId(afterId) ?? 0), collection, provider, limit],
      );
      return found.map((r) => ({ id: String(r.id), owner: r.owner, text: r.text }));
    },
  };
}

/**
 * The {@link InquiryStore}: one pending inquiry per principal and question,
 * raised under its lock, so two replicas raising the same gap at once
 * record it once.
 */
export function createInquiryStore(options: { sql: Sql; clock: () => Date }): InquiryStore {
  const { sql, clock } = options;
  return {
    raise(principal, input) {
      const normalized = normalizeQuestion(input.question);
      return sql.transaction(
        async (tx) => {
          const existing = await tx.get<InquiryRow>(
            `SELECT ${INQUIRY_COLUMNS} FROM librarian_inquiries WHERE owner = ? AND normalized = ? AND status = 'pending'`,
            [principal.id, normalized],
          );
          if (existing) return toInquiry(existing);
          const row = await tx.get<InquiryRow>(
            `INSERT INTO librarian_inquiries (owner, question, normalized, origin, session_id, created_at)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING ${INQUIRY_COLUMNS}`,
            [principal.id, input.question, normalized, input.origin, input.sessionId ?? null, clock().toISOString()],
          );
          return toInquiry(row!);
        },
        { lock: `lango:inquiry:${principal.id.length}:${principal.id}${normalized}` },
      );
    },
    async pending(principal, limit, options = {}) {
      const owner = options.ownOnly ? principal.id : (visibleOwner(principal) ?? null);
      const found = await sql.all<InquiryRow>(
        `SELECT ${INQUIRY_COLUMNS} FROM librarian_inquiries WHERE status = 'pending' AND ${anyOrEqual('owner')}
         ORDER BY id LIMIT ?`,
        [owner, owner, limit],
      );
      return found.map(toInquiry);
    },
    async dismiss(principal, id, reason) {
      const wanted = rowId(id);
      if (wanted === undefined) return undefined;
      const owner = visibleOwner(principal) ?? null;
      const row = await sql.get<InquiryRow>(
        `UPDATE librarian_inquiries SET status = 'dismissed', dismissed_at = ?, reason = ?
         WHERE id = ? AND status = 'pending' AND ${anyOrEqual('owner')} RETURNING ${INQUIRY_COLUMNS}`,
        [clock().toISOString(), reason ?? null, wanted, owner, owner],
      );
      return row && toInquiry(row);
    },
  };
}
