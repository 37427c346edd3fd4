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
import { rowIds, rows, type PgDatabase, type PgSchema } from './database';
import { rankScore, tsQuery } from './fts';

/**
 * Knowledge and learnings, each with a weighted generated tsvector under a
 * GIN index (SQLite: FTS5 with bm25 column weights): content before tags
 * before source; the error pattern before diagnosis and fix before tags.
 */
export const KNOWLEDGE_SCHEMA: PgSchema = {
  store: 'librarian_knowledge',
  steps: [
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

const KNOWLEDGE_COLUMNS = 'id, owner, kind, content, source, tags, created_at';
const LEARNING_COLUMNS = 'id, owner, error_pattern, diagnosis, fix, tags, created_at';

/** The {@link KnowledgeStore} on PostgreSQL. Vectors for retrieval live in `rag_vectors`, keyed by these ids. */
export function createPgKnowledgeStore(options: { db: PgDatabase; clock: () => Date }): KnowledgeStore {
  const { db, clock } = options;
  const byIds = async <Row extends { id: string | number }, T>(
    table: string,
    columns: string,
    principal: Principal,
    ids: string[],
    map: (r: Row) => T,
  ) => {
    const wanted = rowIds(ids);
    if (wanted.length === 0) return new Map<string, T>();
    const found = await rows<Row>(
      db,
      `SELECT ${columns} FROM ${table} WHERE ($1::text IS NULL OR owner = $1) AND id = ANY($2::bigint[])`,
      [visibleOwner(principal) ?? null, wanted],
    );
    return new Map(found.map((r) => [String(r.id), map(r)]));
  };

  return {
    async saveKnowledge(principal, input) {
      const [row] = await rows<KnowledgeRow>(
        db,
        `INSERT INTO knowledge (owner, kind, content, source, tags, session_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KNOWLEDGE_COLUMNS}`,
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
      const [row] = await rows<LearningRow>(
        db,
        `INSERT INTO learnings (owner, error_pattern, diagnosis, fix, tags, session_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${LEARNING_COLUMNS}`,
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
      const found = await rows<KnowledgeRow>(
        db,
        `SELECT ${KNOWLEDGE_COLUMNS} FROM knowledge WHERE ($1::text IS NULL OR owner = $1) ORDER BY id DESC LIMIT $2`,
        [options.ownOnly ? principal.id : (visibleOwner(principal) ?? null), options.limit],
      );
      return found.map(toKnowledge);
    },
    async searchKnowledge(principal, query, options) {
      const match = tsQuery(query);
      if (!match) return [];
      const kinds = options.kinds?.length ? options.kinds : KnowledgeKind.options;
      const found = await rows<KnowledgeRow & { rank: number }>(
        db,
        `SELECT ${KNOWLEDGE_COLUMNS}, ts_rank(search, q) AS rank FROM knowledge, to_tsquery('english', $1) q
         WHERE search @@ q AND ($2::text IS NULL OR owner = $2) AND kind = ANY($3::text[])
         ORDER BY rank DESC, id LIMIT $4`,
        [match, visibleOwner(principal) ?? null, kinds, options.limit],
      );
      return found.map((r) => ({ ...toKnowledge(r), score: rankScore(r.rank) }));
    },
    async searchLearnings(principal, query, options) {
      const match = tsQuery(query);
      if (!match) return [];
      const found = await rows<LearningRow & { rank: number }>(
        db,
        `SELECT ${LEARNING_COLUMNS}, ts_rank(search, q) AS rank FROM learnings, to_tsquery('english', $1) q
         WHERE search @@ q AND ($2::text IS NULL OR owner = $2) ORDER BY rank DESC, id LIMIT $3`,
        [match, visibleOwner(principal) ?? null, options.limit],
      );
      return found.map((r) => ({ ...toLearning(r), score: rankScore(r.rank) }));
    },
    knowledgeByIds: async (principal, ids) => byIds('knowledge', KNOWLEDGE_COLUMNS, principal, ids, toKnowledge),
    learningsByIds: async (principal, ids) => byIds('learnings', LEARNING_COLUMNS, principal, ids, toLearning),
    async unembedded(collection, provider, afterId, limit) {
      const found = await rows<{ id: string; owner: string; text: string }>(
        db,
        `SELECT t.id AS id, t.owner AS owner, ${EMBEDDED_TEXT[collection]} AS text FROM ${collection} t
         WHERE t.id > $1
           AND NOT EXISTS (SELECT 1 FROM rag_vectors v WHERE v.collection = $2 AND v.ref_id = t.id::text AND v.provider = $3)
         ORDER BY t.id LIMIT $4`,
        [afterId === undefined ? 0 : (rowIds([afterId])[0] ?? 0), collection, provider, limit],
      );
      return found.map((r) => ({ id: String(r.id), owner: r.owner, text: r.text }));
    },
  };
}

/** Knowledge gaps (`librarian_inquiries`). */
export const INQUIRY_SCHEMA: PgSchema = {
  store: 'librarian_inquiries',
  steps: [
    `CREATE TABLE librarian_inquiries (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, question TEXT NOT NULL, normalized TEXT NOT NULL,
       origin TEXT NOT NULL, session_id TEXT, status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL,
       dismissed_at TEXT, reason TEXT);
     CREATE INDEX librarian_inquiries_by_owner ON librarian_inquiries (owner, status, id);
     CREATE UNIQUE INDEX librarian_inquiries_one_pending ON librarian_inquiries (owner, normalized)
       WHERE status = 'pending';`,
  ],
};

const INQUIRY_COLUMNS = 'id, owner, question, origin, session_id, status, created_at, dismissed_at, reason';

/**
 * The {@link InquiryStore} on PostgreSQL. A partial unique index keeps one
 * pending inquiry per principal and question, so two replicas raising the
 * same gap at once record it once.
 */
export function createPgInquiryStore(options: { db: PgDatabase; clock: () => Date }): InquiryStore {
  const { db, clock } = options;
  return {
    async raise(principal, input) {
      const normalized = normalizeQuestion(input.question);
      const [inserted] = await rows<InquiryRow>(
        db,
        `INSERT INTO librarian_inquiries (owner, question, normalized, origin, session_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (owner, normalized) WHERE status = 'pending' DO NOTHING RETURNING ${INQUIRY_COLUMNS}`,
        [principal.id, input.question, normalized, input.origin, input.sessionId ?? null, clock().toISOString()],
      );
      if (inserted) return toInquiry(inserted);
      const [existing] = await rows<InquiryRow>(
        db,
        `SELECT ${INQUIRY_COLUMNS} FROM librarian_inquiries WHERE owner = $1 AND normalized = $2 AND status = 'pending'`,
        [principal.id, normalized],
      );
      return toInquiry(existing);
    },
    async pending(principal, limit, options = {}) {
      const owner = options.ownOnly ? principal.id : (visibleOwner(principal) ?? null);
      return (
        await rows<InquiryRow>(
          db,
          `SELECT ${INQUIRY_COLUMNS} FROM librarian_inquiries WHERE status = 'pending' AND ($1::text IS NULL OR owner = $1)
           ORDER BY id LIMIT $2`,
          [owner, limit],
        )
      ).map(toInquiry);
    },
    async dismiss(principal, id, reason) {
      const [wanted] = rowIds([id]);
      if (wanted === undefined) return undefined;
      const [row] = await rows<InquiryRow>(
        db,
        `UPDATE librarian_inquiries SET status = 'dismissed', dismissed_at = $1, reason = $2
         WHERE id = $3 AND status = 'pending' AND ($4::text IS NULL OR owner = $4) RETURNING ${INQUIRY_COLUMNS}`,
        [clock().toISOString(), reason ?? null, wanted, visibleOwner(principal) ?? null],
      );
      return row && toInquiry(row);
    },
  };
}
