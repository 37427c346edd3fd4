import { visibleOwner } from '../../principal';
import { prunePromptsSql, SharedPrompts, withStoredPrompts, type PromptRow } from '../timelinePrompts';
import * as timelines from '../timelines';
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
  // A ring of slots rewritten in place: no index to keep, nothing to prune (the slots are renumbered on open).
  `CREATE TABLE task_timeline_ring (
     slot INTEGER PRIMARY KEY, id TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT, session_id TEXT NOT NULL,
     replica TEXT, started_at TEXT NOT NULL, ms INTEGER, status TEXT, agent TEXT, asked TEXT, error TEXT,
     steps TEXT NOT NULL);
   INSERT INTO task_timeline_ring (slot, ${timelines.TIMELINE_COLUMNS.join(', ')})
     SELECT row_number() OVER (ORDER BY started_at, id) - 1, ${timelines.TIMELINE_COLUMNS.join(', ')} FROM task_timelines;
   DROP TABLE task_timelines;
   ALTER TABLE task_timeline_ring RENAME TO task_timelines;`,
  // The model steps' exchanges (the console's inspector): read only with one turn, never by a listing.
  `ALTER TABLE task_timelines ADD COLUMN exchanges TEXT`,
  // The system prompts turns share, written once (timelinePrompts.ts): an exchange names one by its digest.
  `CREATE TABLE timeline_prompts (digest TEXT PRIMARY KEY, text TEXT NOT NULL, used_at INTEGER NOT NULL)`,
];

/**
 * The {@link timelines.TimelineStore} in SQLite: a ring of `kept` slots, one finished
 * turn each, its steps as JSON. A turn takes the slot of the oldest saved
 * (or its own, saved again), so a save rewrites one row in place: no index,
 * no prune. Turns are queued (see {@link timelines.TIMELINE_SAVE_DELAY_MS}) and
 * written in the database's group commit; at most the newest `kept` are
 * queued, the rest would be overwritten in the same commit. A
 * read first commits what is queued, so it sees every turn saved before it.
 */
export function createSqliteTimelineStore(options: {
  db: SqliteDatabase;
  group: GroupCommit;
  /** Stamps the shared prompts' time of use. */
  clock: () => Date;
  kept: number;
}): timelines.TimelineStore {
  const { db, group, kept } = options;
  migrate(db, 'task_timelines', STEPS);
  const columns = ['slot', ...timelines.TIMELINE_COLUMNS, 'exchanges'];
  const put = db.prepare(
    `INSERT OR REPLACE INTO task_timelines (${columns.join(', ')}) VALUES (${placeholders(columns.length)})`,
  );
  const putPrompt = db.prepare(
    `INSERT INTO timeline_prompts (digest, text, used_at) VALUES (?, ?, ?)
     ON CONFLICT (digest) DO UPDATE SET used_at = excluded.used_at`,
  );
  const prunePrompts = db.prepare(prunePromptsSql('?'));
  const ring = openRing(db, kept);
  const shared = new SharedPrompts(() => options.clock().getTime());
  let queued = new Map<string, timelines.TaskTimeline>();
  /** The prompt rows written by the write under way, counted as written once its commit is. */
  let uncommitted: PromptRow[] = [];
  const writeQueued = () => {
    const turns = queued;
    queued = new Map();
    const prompts = new Map<string, PromptRow>();
    for (const turn of turns.values()) {
      const row = timelines.timelineRow(turn, undefined, shared.exchangesJson(turn.exchanges, prompts));
      put.run(ring.slotFor(turn.id), ...timelines.TIMELINE_COLUMNS.map((column) => row[column]), row.exchanges);
    }
    for (const prompt of prompts.values()) putPrompt.run(prompt.digest, prompt.text, prompt.used_at);
    uncommitted.push(...prompts.values());
    const idleSince = shared.pruneBefore();
    if (idleSince !== undefined) prunePrompts.run(idleSince);
  };
  const saving = timelines.heldWrite(async () => {
    try {
      await group.schedule(writeQueued);
      shared.written(uncommitted);
    } finally {
      uncommitted = [];
    }
  }, timelines.TIMELINE_SAVE_DELAY_MS);
  /** Commits the queued turns now (before a read that must see them). */
  const written = () => {
    if (queued.size === 0) return;
    saving.now();
    group.flush();
  };

  return {
    save(turns) {
      for (const turn of turns) timelines.queueTurn(queued, turn, kept);
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
      const sql = `SELECT ${timelines.TIMELINE_COLUMNS.join(', ')} FROM task_timelines
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, id DESC LIMIT ?`;
      return (db.prepare<unknown[]>(sql).all(...args, query.limit) as timelines.TimelineRow[]).map(
        timelines.timelineOfRow,
      );
    },
    async turn(principal, id) {
      written();
      const owner = visibleOwner(principal);
      const row = db
        .prepare<unknown[]>(
          `SELECT ${timelines.TIMELINE_COLUMNS.join(', ')}, exchanges FROM task_timelines
           WHERE id = ?${owner !== undefined ? ' AND owner = ?' : ''}`,
        )
        .get(id, ...(owner !== undefined ? [owner] : [])) as timelines.TimelineRow | undefined;
      if (!row) return undefined;
      return withStoredPrompts(
        timelines.timelineOfRow(row),
        async (digests) =>
          db
            .prepare<unknown[]>(
              `SELECT digest, text FROM timeline_prompts WHERE digest IN (${placeholders(digests.length)})`,
            )
            .all(...digests) as Array<{ digest: string; text: string }>,
      );
    },
    flush: () => saving.now(),
  };
}

/**
 * The ring's slots: which turn holds each, and the next to take (the oldest
 * saved). On open the rows are renumbered oldest first into `kept` slots
 * (the newest `kept` stay), so a changed `kept` takes effect at once.
 */
function openRing(db: SqliteDatabase, kept: number): { slotFor(id: string): number } {
  const rows = db.prepare('SELECT slot, id FROM task_timelines ORDER BY started_at, id').all() as Array<{
    slot: number;
    id: string;
  }>;
  const stay = rows.slice(Math.max(0, rows.length - kept));
  if (stay.some((row, index) => row.slot !== index) || stay.length < rows.length)
    db.transaction(() => {
      const move = db.prepare('UPDATE task_timelines SET slot = ? WHERE slot = ?');
      // Out of the way first (negative slots), then into place: no two rows ever share a slot.
      db.prepare('DELETE FROM task_timelines WHERE slot NOT IN (SELECT value FROM json_each(?))').run(
        JSON.stringify(stay.map((row) => row.slot)),
      );
      for (const row of stay) move.run(-1 - row.slot, row.slot);
      stay.forEach((row, index) => move.run(index, -1 - row.slot));
    })();
  const holders = stay.map((row) => row.id);
  const slots = new Map(holders.map((id, slot) => [id, slot]));
  let next = holders.length % kept;
  return {
    slotFor(id) {
      const own = slots.get(id);
      if (own !== undefined) return own;
      const slot = next;
      next = (next + 1) % kept;
      const evicted = holders[slot];
      if (evicted !== undefined) slots.delete(evicted);
      holders[slot] = id;
      slots.set(id, slot);
      return slot;
    },
  };
}
