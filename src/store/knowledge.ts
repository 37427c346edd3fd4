import { z } from 'zod';
import type { Principal } from '../principal';

/** The kinds of knowledge the librarian keeps. */
export const KnowledgeKind = z.enum(['fact', 'rule', 'definition', 'preference']);
export type KnowledgeKind = z.infer<typeof KnowledgeKind>;

/** One saved piece of knowledge. */
export interface KnowledgeEntry {
  id: string;
  /** The principal that saved it. */
  owner: string;
  kind: KnowledgeKind;
  content: string;
  source: string | null;
  tags: string[];
  createdAt: string;
}

/** One saved learning: an error seen, why it happened, and what fixed it. */
export interface LearningEntry {
  id: string;
  owner: string;
  errorPattern: string;
  diagnosis: string;
  fix: string;
  tags: string[];
  createdAt: string;
}

/** A search hit: the row and its relevance (higher is better). */
export type Scored<T> = T & { score: number };

/** The collections whose rows are embedded for retrieval. */
export type EmbeddedCollection = 'knowledge' | 'learnings';

/** A row waiting for its embedding: the text to embed and whose row it is. */
export interface PendingEmbedding {
  id: string;
  owner: string;
  text: string;
}

/**
 * Knowledge and learnings, scoped to the principal that saved them: a
 * caller finds only its own, the owner everyone's. Ids grow in insertion
 * order (embedding resumes after the last one it handled).
 */
export interface KnowledgeStore {
  saveKnowledge(
    principal: Principal,
    input: { kind: KnowledgeKind; content: string; source?: string; tags?: string[]; sessionId?: string },
  ): Promise<KnowledgeEntry>;
  saveLearning(
    principal: Principal,
    input: { errorPattern: string; diagnosis: string; fix: string; tags?: string[]; sessionId?: string },
  ): Promise<LearningEntry>;
  /** Knowledge ranked by full-text relevance over content, tags and source. */
  searchKnowledge(
    principal: Principal,
    query: string,
    options: { limit: number; kinds?: KnowledgeKind[] },
  ): Promise<Scored<KnowledgeEntry>[]>;
  /** Learnings ranked by full-text relevance, the error pattern weighing most. */
  searchLearnings(principal: Principal, query: string, options: { limit: number }): Promise<Scored<LearningEntry>[]>;
  /**
   * The newest knowledge the principal can see, newest first (the owner's
   * reach is everyone's unless `ownOnly`): what a person browses.
   */
  recentKnowledge(principal: Principal, options: { limit: number; ownOnly?: boolean }): Promise<KnowledgeEntry[]>;
  /** The principal's visible knowledge rows among `ids`. */
  knowledgeByIds(principal: Principal, ids: string[]): Promise<Map<string, KnowledgeEntry>>;
  learningsByIds(principal: Principal, ids: string[]): Promise<Map<string, LearningEntry>>;
  /**
   * Rows of `collection` after `afterId` (all when undefined) that have no
   * vector from `provider` yet, oldest first: the embedding backlog. Node
   * maintenance, not a principal's read: each row says whose it is.
   */
  unembedded(
    collection: EmbeddedCollection,
    provider: string,
    afterId: string | undefined,
    limit: number,
  ): Promise<PendingEmbedding[]>;
}

/** A knowledge gap: a question the librarian could not answer from what it holds. */
export interface Inquiry {
  id: string;
  owner: string;
  question: string;
  /** The tool whose empty search raised it. */
  origin: string;
  sessionId: string | null;
  status: 'pending' | 'dismissed';
  createdAt: string;
  dismissedAt: string | null;
  reason: string | null;
}

/** Knowledge gaps recorded by empty searches, until dismissed; each principal has its own. */
export interface InquiryStore {
  /** Records a gap, or returns the principal's pending one already asking the same. */
  raise(principal: Principal, input: { question: string; origin: string; sessionId?: string }): Promise<Inquiry>;
  /** Pending inquiries the principal can see, oldest first (`ownOnly`: the principal's own, even for the owner). */
  pending(principal: Principal, limit: number, options?: { ownOnly?: boolean }): Promise<Inquiry[]>;
  /** Dismisses a pending inquiry the principal can see; `undefined` when there is no such inquiry. */
  dismiss(principal: Principal, id: string, reason?: string): Promise<Inquiry | undefined>;
}
