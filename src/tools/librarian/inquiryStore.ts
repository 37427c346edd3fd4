import type { SqliteDatabase } from '../../store/database';
import { migrate } from '../../store/database';

/** A knowledge gap: a question the librarian could not answer from what it holds. */
export interface Inquiry {
  id: number;
  question: string;
  /** The tool whose empty search raised it. */
  origin: string;
  sessionId: string | null;
  status: 'pending' | 'dismissed';
  createdAt: string;
  dismissedAt: string | null;
  reason: string | null;
}

const STEPS = [
  `CREATE TABLE librarian_inquiries (
     id INTEGER PRIMARY KEY, question TEXT NOT NULL, normalized TEXT NOT NULL, origin TEXT NOT NULL, session_id TEXT,
     status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL, dismissed_at TEXT, reason TEXT);
   CREATE INDEX librarian_inquiries_status ON librarian_inquiries (status, id);`,
];

interface InquiryRow {
  id: number;
  question: string;
  origin: string;
  session_id: string | null;
  status: 'pending' | 'dismissed';
  created_at: string;
  dismissed_at: string | null;
  reason: string | null;
}

const toInquiry = (r: InquiryRow): Inquiry => ({
  id: r.id,
  question: r.question,
  origin: r.origin,
  sessionId: r.session_id,
  status: r.status,
  createdAt: r.created_at,
  dismissedAt: r.dismissed_at,
  reason: r.reason,
});

/** Lower-case words only, so "WAL mode?" and "wal  mode" are one gap. */
const normalize = (q: string) => (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');

/** Knowledge gaps recorded by empty searches, until dismissed. */
export class InquiryStore {
  private readonly db: SqliteDatabase;
  private readonly clock: () => Date;

  constructor(options: { db: SqliteDatabase; clock: () => Date }) {
    this.db = options.db;
    this.clock = options.clock;
    migrate(this.db, 'librarian_inquiries', STEPS);
  }

  /** Records a gap, or returns the pending one already asking the same. */
  raise(input: { question: string; origin: string; sessionId?: string }): Inquiry {
    const normalized = normalize(input.question);
    const existing = this.db
      .prepare(`SELECT * FROM librarian_inquiries WHERE normalized = ? AND status = 'pending'`)
      .get(normalized) as InquiryRow | undefined;
    if (existing) return toInquiry(existing);
    const row = this.db
      .prepare(
        `INSERT INTO librarian_inquiries (question, normalized, origin, session_id, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(input.question, normalized, input.origin, input.sessionId ?? null, this.clock().toISOString()) as InquiryRow;
    return toInquiry(row);
  }

  pending(limit: number): Inquiry[] {
    return (
      this.db
        .prepare(`SELECT * FROM librarian_inquiries WHERE status = 'pending' ORDER BY id LIMIT ?`)
        .all(limit) as InquiryRow[]
    ).map(toInquiry);
  }

  /** Dismisses a pending inquiry; `undefined` when there is no such pending inquiry. */
  dismiss(id: number, reason?: string): Inquiry | undefined {
    const row = this.db
      .prepare(
        `UPDATE librarian_inquiries SET status = 'dismissed', dismissed_at = ?, reason = ? WHERE id = ? AND status = 'pending' RETURNING *`,
      )
      .get(this.clock().toISOString(), reason ?? null, id) as InquiryRow | undefined;
    return row && toInquiry(row);
  }
}
