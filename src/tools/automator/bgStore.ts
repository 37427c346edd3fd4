import { migrate, type SqliteDatabase } from '../../store/database';

/** A background job's state; the last four are final. */
export type BgStatus = 'queued' | 'running' | 'completed' | 'input-required' | 'failed' | 'cancelled';

/** A persisted background job. Times are ISO strings. */
export interface BgJob {
  id: string;
  label: string | null;
  prompt: string;
  status: BgStatus;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  result: string | null;
  author: string | null;
}

const STEPS = [
  `CREATE TABLE bg_jobs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, label TEXT, prompt TEXT NOT NULL,
     status TEXT NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT);
   CREATE INDEX bg_jobs_by_status ON bg_jobs(status, seq);`,
];

const COLUMNS = `id, label, prompt, status, created_at AS createdAt, started_at AS startedAt,
  finished_at AS finishedAt, result, author`;

/** SQLite persistence for background jobs, in submission order. */
export class BgStore {
  constructor(private readonly db: SqliteDatabase) {
    migrate(db, 'automator.background', STEPS);
  }

  insert(job: Pick<BgJob, 'id' | 'label' | 'prompt' | 'createdAt'>): void {
    this.db
      .prepare(
        `INSERT INTO bg_jobs (id, label, prompt, status, created_at) VALUES (@id, @label, @prompt, 'queued', @createdAt)`,
      )
      .run(job);
  }

  get(id: string): BgJob | undefined {
    return this.db.prepare(`SELECT ${COLUMNS} FROM bg_jobs WHERE id = ?`).get(id) as BgJob | undefined;
  }

  /** Most recent first, optionally only one status. */
  list(options: { status?: BgStatus; limit: number }): BgJob[] {
    const where = options.status ? 'WHERE status = @status' : '';
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM bg_jobs ${where} ORDER BY seq DESC LIMIT @limit`)
      .all({ status: options.status, limit: options.limit }) as BgJob[];
  }

  /** Queued job ids, oldest first. */
  queuedIds(): string[] {
    return (
      this.db.prepare(`SELECT id FROM bg_jobs WHERE status = 'queued' ORDER BY seq`).all() as { id: string }[]
    ).map((row) => row.id);
  }

  markRunning(id: string, startedAt: string): void {
    this.db.prepare(`UPDATE bg_jobs SET status = 'running', started_at = ? WHERE id = ?`).run(startedAt, id);
  }

  finish(id: string, fields: { status: BgStatus; finishedAt: string; result: string; author: string | null }): void {
    this.db
      .prepare('UPDATE bg_jobs SET status = ?, finished_at = ?, result = ?, author = ? WHERE id = ?')
      .run(fields.status, fields.finishedAt, fields.result, fields.author, id);
  }

  /** Jobs left `running` by a process that died: they will never finish. */
  failInterrupted(finishedAt: string): number {
    return this.db
      .prepare(
        `UPDATE bg_jobs SET status = 'failed', finished_at = ?, result = 'node restarted' WHERE status = 'running'`,
      )
      .run(finishedAt).changes;
  }
}
