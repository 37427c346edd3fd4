import { visibleOwner } from '../../principal';
import {
  heldWrite,
  TIMELINE_SAVE_DELAY_MS,
  timelineOfRow,
  timelineRow,
  type TimelineRow,
  type TimelineStore,
} from '../timelines';
import { rows, type PgDatabase, type PgSchema } from './database';
import type { PgGroupCommit, PgQueuedWrite } from './groupCommit';

/** Finished turns' timelines, shared by every replica; each row names the replica that ran the turn. */
export const TIMELINE_SCHEMA: PgSchema = {
  store: 'task_timelines',
  steps: [
    `CREATE TABLE task_timelines (
       id TEXT PRIMARY KEY, owner TEXT NOT NULL, task_id TEXT, session_id TEXT NOT NULL, replica TEXT,
       started_at TEXT NOT NULL, ms INTEGER, status TEXT, agent TEXT, asked TEXT, error TEXT, steps TEXT NOT NULL);
     CREATE INDEX task_timelines_by_task ON task_timelines (task_id, started_at);
     CREATE INDEX task_timelines_by_start ON task_timelines (started_at, id);`,
  ],
};

/**
 * The {@link TimelineStore} on PostgreSQL: turns queued (see
 * {@link TIMELINE_SAVE_DELAY_MS}) and written in the group commit (one
 * statement per group, however many turns ended), each
 * stamped with this replica's id. A read waits for the turns this replica
 * has queued, so it sees every turn saved before it.
 */
export function createPgTimelineStore(options: {
  db: PgDatabase;
  group: PgGroupCommit;
  replicaId: string;
}): TimelineStore {
  const { db, group, replicaId } = options;
  let queue: TimelineRow[] = [];
  let unwritten = 0;
  const take = (): PgQueuedWrite => {
    // A turn saved twice in one group keeps its last row: one row per id in the statement.
    const turns = [...new Map(queue.map((row) => [row.id, row])).values()];
    queue = [];
    const column = <K extends keyof TimelineRow>(key: K) => turns.map((row) => row[key]);
    return {
      statements: [
        {
          name: 'task_timelines_save',
          text: `INSERT INTO task_timelines
              (id, owner, task_id, session_id, replica, started_at, ms, status, agent, asked, error, steps)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
              $7::integer[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
            ON CONFLICT (id) DO UPDATE SET ms = EXCLUDED.ms, status = EXCLUDED.status, agent = EXCLUDED.agent,
              error = EXCLUDED.error, steps = EXCLUDED.steps, replica = EXCLUDED.replica`,
          values: [
            column('id'),
            column('owner'),
            column('task_id'),
            column('session_id'),
            column('replica'),
            column('started_at'),
            column('ms'),
            column('status'),
            column('agent'),
            column('asked'),
            column('error'),
            column('steps'),
          ],
        },
      ],
    };
  };
  const saving = heldWrite(() => group.schedule(take), TIMELINE_SAVE_DELAY_MS);
  const written = async () => {
    if (unwritten === 0) return;
    saving.now();
    await group.flush();
  };

  return {
    async save(turns) {
      if (turns.length === 0) return;
      for (const turn of turns) queue.push(timelineRow(turn, replicaId));
      unwritten += 1;
      try {
        await saving.request();
      } finally {
        unwritten -= 1;
      }
    },
    async list(principal, query) {
      await written();
      const where: string[] = [];
      const params: unknown[] = [];
      const owner = visibleOwner(principal) ?? query.caller;
      if (owner !== undefined) {
        params.push(owner);
        where.push(`owner = $${params.length}`);
      }
      if (query.taskIds) {
        if (query.taskIds.length === 0) return [];
        params.push([...query.taskIds]);
        where.push(`task_id = ANY($${params.length}::text[])`);
      }
      if (query.sessionId !== undefined) {
        params.push(query.sessionId);
        where.push(`session_id = $${params.length}`);
      }
      params.push(query.limit);
      // COLLATE "C": the byte order SQLite sorts text in, so both databases list alike.
      const found = await rows<TimelineRow>(
        db,
        `SELECT * FROM task_timelines ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT $${params.length}`,
        params,
      );
      return found.map(timelineOfRow);
    },
    async prune(keep) {
      await written();
      const result = await db.query(
        `DELETE FROM task_timelines WHERE (started_at COLLATE "C", id COLLATE "C") < (
           SELECT started_at COLLATE "C", id COLLATE "C" FROM task_timelines
           ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT 1 OFFSET $1)`,
        [Math.max(0, keep - 1)],
      );
      return result.rowCount ?? 0;
    },
    flush: () => saving.now(),
  };
}
