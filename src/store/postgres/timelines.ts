import { visibleOwner } from '../../principal';
import {
  heldWrite,
  queueTurn,
  TIMELINE_COLUMNS,
  TIMELINE_SAVE_DELAY_MS,
  timelineOfRow,
  timelineRow,
  type TaskTimeline,
  type TimelineRow,
  type TimelineStore,
} from '../timelines';
import { prunePromptsSql, SharedPrompts, withStoredPrompts, type PromptRow } from '../timelinePrompts';
import { valuesList } from '../sql/dialect';
import { rows, rowStatements, type PgDatabase, type PgSchema } from './database';
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
    // The model steps' exchanges (the console's inspector): read only with one turn, never by a listing.
    `ALTER TABLE task_timelines ADD COLUMN exchanges TEXT`,
    // The system prompts turns share, written once (timelinePrompts.ts): an exchange names one by its digest.
    `CREATE TABLE timeline_prompts (digest TEXT PRIMARY KEY, text TEXT NOT NULL, used_at BIGINT NOT NULL)`,
  ],
};

/** The columns a save binds (the listing's, then the exchanges), with their PostgreSQL types. */
const SAVED_COLUMNS = [...TIMELINE_COLUMNS, 'exchanges'] as const;
const SAVED_TYPES = SAVED_COLUMNS.map((name) => (name === 'ms' ? 'integer' : 'text'));

/** The save of turns, a statement per run. */
const saveRows = rowStatements(
  'task_timelines_save',
  (rows) => `INSERT INTO task_timelines (${SAVED_COLUMNS.join(', ')})
     SELECT * FROM ${valuesList('postgres', SAVED_TYPES, rows, 1)} v
     ON CONFLICT (id) DO UPDATE SET ms = EXCLUDED.ms, status = EXCLUDED.status, agent = EXCLUDED.agent,
       error = EXCLUDED.error, steps = EXCLUDED.steps, replica = EXCLUDED.replica, exchanges = EXCLUDED.exchanges`,
  (row: TimelineRow) => SAVED_COLUMNS.map((name) => row[name] ?? null),
);

/** The save of shared prompts (their time of use rewritten), a statement per run. */
const savePromptRows = rowStatements(
  'timeline_prompts_save',
  (rows) => `INSERT INTO timeline_prompts (digest, text, used_at)
     SELECT * FROM ${valuesList('postgres', ['text', 'text', 'bigint'], rows, 1)} v
     ON CONFLICT (digest) DO UPDATE SET used_at = EXCLUDED.used_at`,
  (prompt: PromptRow) => [prompt.digest, prompt.text, prompt.used_at],
);

/**
 * The {@link TimelineStore} on PostgreSQL: turns queued (see
 * {@link TIMELINE_SAVE_DELAY_MS}) and written in the group commit (one
 * statement per group, however many turns ended; only the newest `kept`),
 * each stamped with this replica's id; the same commit deletes all but the
 * newest `kept` of every replica's (a replica writes its turns a few times
 * a second at most, so this costs little). A read waits for the turns this replica has queued, so it sees
 * every turn saved before it.
 */
export function createPgTimelineStore(options: {
  db: PgDatabase;
  group: PgGroupCommit;
  replicaId: string;
  /** Stamps the shared prompts' time of use. */
  clock: () => Date;
  kept: number;
}): TimelineStore {
  const { db, group, replicaId, kept } = options;
  let queue = new Map<string, TaskTimeline>();
  let unwritten = 0;
  const shared = new SharedPrompts(() => options.clock().getTime());
  const take = (): PgQueuedWrite => {
    const prompts = new Map<string, PromptRow>();
    const turns = [...queue.values()].map((turn) =>
      timelineRow(turn, replicaId, shared.exchangesJson(turn.exchanges, prompts)),
    );
    queue = new Map();
    return {
      statements: [
        ...saveRows(turns),
        ...promptWrites([...prompts.values()], shared.pruneBefore()),
        {
          name: 'task_timelines_prune',
          text: `DELETE FROM task_timelines WHERE (started_at COLLATE "C", id COLLATE "C") < (
              SELECT started_at COLLATE "C", id COLLATE "C" FROM task_timelines
              ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT 1 OFFSET $1)`,
          values: [kept - 1],
        },
      ],
      committed: () => shared.written(prompts.values()),
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
      for (const turn of turns) queueTurn(queue, turn, kept);
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
        `SELECT ${TIMELINE_COLUMNS.join(', ')} FROM task_timelines ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT $${params.length}`,
        params,
      );
      return found.map(timelineOfRow);
    },
    async turn(principal, id) {
      await written();
      const owner = visibleOwner(principal);
      const [row] = await rows<TimelineRow>(
        db,
        `SELECT ${TIMELINE_COLUMNS.join(', ')}, exchanges FROM task_timelines
         WHERE id = $1${owner !== undefined ? ' AND owner = $2' : ''}`,
        owner !== undefined ? [id, owner] : [id],
      );
      if (!row) return undefined;
      return withStoredPrompts(timelineOfRow(row), (digests) =>
        rows<{ digest: string; text: string }>(
          db,
          'SELECT digest, text FROM timeline_prompts WHERE digest = ANY($1::text[])',
          [digests],
        ),
      );
    },
    flush: () => saving.now(),
  };
}

/** The shared prompts' rows to write with a group (their time of use rewritten), and the prune when it is due. */
function promptWrites(prompts: PromptRow[], idleSince: number | undefined): PgQueuedWrite['statements'] {
  return [
    ...savePromptRows(prompts),
    ...(idleSince !== undefined
      ? [{ name: 'timeline_prompts_prune', text: prunePromptsSql('$1'), values: [idleSince] }]
      : []),
  ];
}
