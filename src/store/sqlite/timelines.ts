import { visibleOwner } from '../../principal';
import {
  heldWrite,
  TIMELINE_COLUMNS,
  TIMELINE_SAVE_DELAY_MS,
  timelineOfRow,
  timelineRow,
  type TimelineRow,
  type TimelineStore,
} from '../timelines';
import { migrate, type SqliteDatabase } from './database';
import type { GroupCommit } from './groupCommit';
import { placeholders } from './rows';

const STEPS = [
  `CREATE TABLE task_timelines (
     id TEXT PRIMARY KEY, owner TEXT NOT NULL, task_id TEXT, session_id TEXT NOT NULL, replica TEXT,
     started_at TEXT NOT NULL, ms INTEGER, status TEXT, agent TEXT, asked TEXT, error TEXT, steps TEXT NOT NULL);
   CREATE INDEX task_timelines_by_task ON task_timelines (task_id, started_at);
   CREATE INDEX task_timelines_by_start ON task_timelines (started_at, id);`,
  // A task id lands on a random page of an index on it: one more page written per turn, for the console's reads of a
  // few tasks' turns, which scan the at most 10,000 rows kept (the default 200) as quickly.
  `DROP INDEX task_timelines_by_task`,
];

/**
 * The {@link TimelineStore} in SQLite: one row per finished turn, its steps
 * as JSON, queued (see {@link TIMELINE_SAVE_DELAY_MS}) and written in the
 * database's group commit. A read first commits what is queued, so it sees
 * every turn saved before it.
 */
export function createSqliteTimelineStore(options: { db: SqliteDatabase; group: GroupCommit }): TimelineStore {
  const { db, group } = options;
  migrate(db, 'task_timelines', STEPS);
  const upsert = db.prepare(
    `INSERT OR REPLACE INTO task_timelines (${TIMELINE_COLUMNS.join(', ')}) VALUES (${placeholders(TIMELINE_COLUMNS.length)})`,
  );
  const queued = new Map<string, TimelineRow>();
  const writeQueued = () => {
    const rows = [...queued.values()];
    queued.clear();
    for (const row of rows) upsert.run(...TIMELINE_COLUMNS.map((column) => row[column]));
  };
  const saving = heldWrite(() => group.schedule(writeQueued), TIMELINE_SAVE_DELAY_MS);
  /** Commits the queued turns now (before a read that must see them). */
  const written = () => {
    if (queued.size === 0) return;
    saving.now();
    group.flush();
  };
  const prune = db.prepare(
    `DELETE FROM task_timelines WHERE (started_at, id) < (
       SELECT started_at, id FROM task_timelines ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?)`,
  );

  return {
    save(turns) {
      for (const turn of turns) queued.set(turn.id, timelineRow(turn, undefined));
      return saving.request();
    },
    async list(principal, query) {
      written();
      const where: string[] = [];
      const args: unknown[] = [];
      const owner = visibleOwner(principal) ?? query.caller;
      if (owner !== undefined) {
        where.push('owner = ?');
        args.push(owner);
      }
      if (query.taskIds) {
        if (query.taskIds.length === 0) return [];
        where.push(`task_id IN (${placeholders(query.taskIds.length)})`);
        args.push(...query.taskIds);
      }
      if (query.sessionId !== undefined) {
        where.push('session_id = ?');
        args.push(query.sessionId);
      }
      const sql = `SELECT * FROM task_timelines ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY started_at DESC, id DESC LIMIT ?`;
      return (db.prepare<unknown[]>(sql).all(...args, query.limit) as TimelineRow[]).map(timelineOfRow);
    },
    async prune(keep) {
      written();
      return prune.run(Math.max(0, keep - 1)).changes;
    },
    flush: () => saving.now(),
  };
}
