import { visibleOwner } from '../../principal';
import type { BackgroundJob, BackgroundJobStore } from '../jobs';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
  `CREATE TABLE bg_jobs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, label TEXT, prompt TEXT NOT NULL,
     status TEXT NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, author TEXT);
   CREATE INDEX bg_jobs_by_status ON bg_jobs(status, seq);`,
  `ALTER TABLE bg_jobs ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
   CREATE INDEX bg_jobs_by_owner ON bg_jobs(owner, seq);`,
];

const COLUMNS = `id, owner, label, prompt, status, created_at AS createdAt, started_at AS startedAt,
  finished_at AS finishedAt, result, author`;

/** The {@link BackgroundJobStore} in SQLite (`bg_jobs`), in submission order. */
export function createSqliteBackgroundJobStore(options: { db: SqliteDatabase }): BackgroundJobStore {
  const { db } = options;
  migrate(db, 'automator.background', STEPS);
  return {
    async insert(principal, job) {
      db.prepare(
        `INSERT INTO bg_jobs (id, owner, label, prompt, status, created_at) VALUES (@id, @owner, @label, @prompt, 'queued', @createdAt)`,
      ).run({ ...job, owner: principal.id });
    },
    async get(principal, id) {
      const owner = visibleOwner(principal) ?? null;
      return db
        .prepare(`SELECT ${COLUMNS} FROM bg_jobs WHERE id = ? AND (? IS NULL OR owner = ?)`)
        .get(id, owner, owner) as BackgroundJob | undefined;
    },
    async list(principal, options) {
      return db
        .prepare(
          `SELECT ${COLUMNS} FROM bg_jobs WHERE (@owner IS NULL OR owner = @owner)
           AND (@status IS NULL OR status = @status) ORDER BY seq DESC LIMIT @limit`,
        )
        .all({
          owner: visibleOwner(principal) ?? null,
          status: options.status ?? null,
          limit: options.limit,
        }) as BackgroundJob[];
    },
    queued: async () =>
      db.prepare(`SELECT ${COLUMNS} FROM bg_jobs WHERE status = 'queued' ORDER BY seq`).all() as BackgroundJob[],
    async markRunning(id, startedAt) {
      return (
        db
          .prepare(`UPDATE bg_jobs SET status = 'running', started_at = ? WHERE id = ? AND status = 'queued'`)
          .run(startedAt, id).changes > 0
      );
    },
    async finish(id, fields) {
      db.prepare('UPDATE bg_jobs SET status = ?, finished_at = ?, result = ?, author = ? WHERE id = ?').run(
        fields.status,
        fields.finishedAt,
        fields.result,
        fields.author,
        id,
      );
    },
    async failInterrupted(finishedAt) {
      return db
        .prepare(
          `UPDATE bg_jobs SET status = 'failed', finished_at = ?, result = 'node restarted' WHERE status = 'running'`,
        )
        .run(finishedAt).changes;
    },
  };
}
