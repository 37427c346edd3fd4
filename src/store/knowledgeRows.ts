import type { EmbeddedCollection, Inquiry, KnowledgeEntry, KnowledgeKind, LearningEntry } from './knowledge';

/**
 * The rows of the knowledge and learnings tables as both databases return
 * them (SQLite's ids are integers, PostgreSQL's BIGSERIAL come as strings),
 * and the one mapping from a row to what the store answers.
 */
export interface KnowledgeRow {
  id: number | string;
  owner: string;
  kind: KnowledgeKind;
  content: string;
  source: string | null;
  tags: string;
  created_at: string;
}

/** A row of the learnings table (see {@link KnowledgeRow}). */
export interface LearningRow {
  id: number | string;
  owner: string;
  error_pattern: string;
  diagnosis: string;
  fix: string;
  tags: string;
  created_at: string;
}

export const toKnowledge = (r: KnowledgeRow): KnowledgeEntry => ({
  id: String(r.id),
  owner: r.owner,
  kind: r.kind,
  content: r.content,
  source: r.source,
  tags: JSON.parse(r.tags) as string[],
  createdAt: r.created_at,
});

export const toLearning = (r: LearningRow): LearningEntry => ({
  id: String(r.id),
  owner: r.owner,
  errorPattern: r.error_pattern,
  diagnosis: r.diagnosis,
  fix: r.fix,
  tags: JSON.parse(r.tags) as string[],
  createdAt: r.created_at,
});

/** The text each collection embeds, as SQL over its table `t` (the same expression in both dialects). */
export const EMBEDDED_TEXT: Record<EmbeddedCollection, string> = {
  knowledge: `t.kind || ': ' || t.content || ' ' || t.tags`,
  learnings: `t.error_pattern || ' ' || t.diagnosis || ' ' || t.fix`,
};

/** A row of the inquiries table (see {@link KnowledgeRow}). */
export interface InquiryRow {
  id: number | string;
  owner: string;
  question: string;
  origin: string;
  session_id: string | null;
  status: 'pending' | 'dismissed';
  created_at: string;
  dismissed_at: string | null;
  reason: string | null;
}

export const toInquiry = (r: InquiryRow): Inquiry => ({
  id: String(r.id),
  owner: r.owner,
  question: r.question,
  origin: r.origin,
  sessionId: r.session_id,
  status: r.status,
  createdAt: r.created_at,
  dismissedAt: r.dismissed_at,
  reason: r.reason,
});

/** An inquiry's question as lower-case words only, so "WAL mode?" and "wal  mode" are one gap. */
export const normalizeQuestion = (q: string) => (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
