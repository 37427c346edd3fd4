import { TaskState, taskStateFromJSON, taskStateToJSON } from '@a2a-js/sdk';
import type { Logger } from '../../log/logger';
import type { Redact } from '../../log/redactJson';
import {
  CLAIMABLE_STATES,
  claimedStatus,
  scopedKey,
  sendTaskId,
  taskColumns,
  taskOfColumns,
  type StoredTask,
  type SendClaim,
  type SendKey,
  type TaskClaim,
  type TaskColumns,
  type TaskPage,
  type TaskQuery,
  type TaskReader,
  type TaskRows,
  type TaskRowStores,
  type TaskScope,
  type TaskTurnClaim,
} from '../taskRows';
import { ENDED_TASK_EVENTS_KEPT_MS } from '../taskEvents';
import { migrate, type SqliteDatabase } from './database';
import {
  FINISHED,
  IN_FLIGHT,
  prepareTaskStatements,
  TASK_ROW_MIGRATIONS,
  type TaskStatements,
} from './taskRowStatements';
import type { GroupCommit } from './groupCommit';
import { createSqliteSql } from './sql';
import { listTasks } from '../sql/taskList';
import { createPushConfigRows, type PushConfigStore } from '../sql/pushConfigs';
import type { Sql } from '../sql/sql';

/**
 * A2A tasks and push configs in the node's SQLite file: the rows of the
 * SDK's database stores (`@a2a-js/sdk/server/database`: tenant + owner
 * scoping, ProtoJSON payloads, `(status_last_updated, id)` page cursors)
 * with prepared statements made once, task writes group-committed with the
 * database's other stores.
 */

type TaskRow = TaskColumns & { tenant: string; owner: string };
/** What is read of a recorded send key. */
interface SendKeyRow {
  task_id: string;
  expires_at: number;
}

/** A send that created its task, until the task's first row is written: its entry in `a2a_sends_started`. */
interface StartedSend {
  tenant: string;
  owner: string;
  taskId: string;
  /** None for a send claimed without its task's row (nothing to fail after a restart). */
  contextId: string | undefined;
  /** Its rowid once appended. */
  rowid?: number | bigint;
  /** Resolves once the commit that appended it has. */
  committed: Promise<void>;
}

/** Options of {@link createSqliteTaskRows}. */
export interface SqliteTaskRowsOptions {
  db: SqliteDatabase;
  /** The database's one group commit: task rows commit with the sessions' turns. */
  group: GroupCommit;
  logger: Logger;
  /** Masks known secret values in every task row written (issue 11 G). */
  redact?: Redact;
}

/** A row read back as the stored task it holds. */
const stored = (row: TaskRow): StoredTask => ({
  scope: { tenant: row.tenant, owner: row.owner },
  task: taskOfColumns(row),
  generation: row.generation,
});

/** A running task's key and context, as the restart sweep reads it. */
interface InterruptedRow {
  tenant: string;
  owner: string;
  id: string;
  context_id: string;
}

/** The status, as ProtoJSON, of a task the restart sweep fails for `reason` at `at`. */
function failedStatus(row: InterruptedRow, reason: string, at: Date) {
  return {
    state: taskStateToJSON(TaskState.TASK_STATE_FAILED),
    timestamp: at.toISOString(),
    message: {
      messageId: `restart-${row.id}`,
      taskId: row.id,
      contextId: row.context_id,
      role: 'ROLE_AGENT',
      parts: [{ text: reason, mediaType: 'text/plain' }],
    },
  };
}

/**
 * What waits for the database's next group commit: task rows written (by
 * scope and id, a later write replacing an earlier one) and the sends that
 * created their task. One process owns this database, so from its claim until
 * the task's first row is written a send is told from these, the rows and the
 * keys of follow-ups.
 */
class PendingTaskWrites {
  /** Rows waiting for the next group commit, by scope and id (a later write replaces an earlier one). */
  private readonly rows = new Map<string, TaskRow>();
  /** Sends that created their task, by scope and task id, from their claim until the task's first row is written. */
  private readonly started = new Map<string, StartedSend>();
  /** Started sends waiting for the next group commit to append them. */
  private startsQueued: StartedSend[] = [];
  /** The one writer the group commit runs, however often it is scheduled before a commit (it keys by identity). */
  private readonly writer = () => this.writeQueued();

  constructor(
    private readonly group: GroupCommit,
    private readonly statements: TaskStatements,
    private readonly logger: Logger,
  ) {}

  /** The row written under `key` and not committed yet: the latest. */
  row(key: string): TaskRow | undefined {
    return this.rows.get(key);
  }

  /** Whether any row waits for its commit. */
  get anyRows(): boolean {
    return this.rows.size > 0;
  }

  /** The send that created the task under `key`, while the task has no row yet. */
  startOf(key: string): StartedSend | undefined {
    return this.started.get(key);
  }

  /** Queues `row` under `key` for the next group commit (see {@link commit}). */
  queueRow(key: string, row: TaskRow): void {
    this.rows.set(key, row);
  }

  /** Records a send that created its task until the task's first row is written; resolves once appended. */
  start(key: string, start: StartedSend): Promise<void> {
    this.started.set(key, start);
    this.startsQueued.push(start);
    return this.commit();
  }

  /** Schedules the queued writes with the group's next commit. */
  commit(): Promise<void> {
    return this.group.schedule(this.writer);
  }

  /** Writes what is queued, inside the group's transaction: the starts appended, then the rows (ending their starts). */
  private writeQueued(): void {
    const { appendStarted, deleteStarted, upsert } = this.statements;
    const rows = [...this.rows.values()];
    this.rows.clear();
    const starts = this.startsQueued;
    this.startsQueued = [];
    try {
      for (const start of starts) {
        if (start.contextId === undefined) continue;
        start.rowid = appendStarted.run(start.tenant, start.owner, start.taskId, start.contextId).lastInsertRowid;
      }
      // Bound by position: named parameters cost a property lookup each, on every row of every commit.
      for (const row of rows) {
        const key = scopedKey(row, row.id);
        const start = this.started.get(key);
        if (start) {
          if (start.rowid !== undefined) deleteStarted.run(start.rowid);
          this.started.delete(key);
        }
        upsert.run(
          row.tenant,
          row.owner,
          row.id,
          row.context_id,
          row.status_last_updated,
          row.status_state,
          row.status,
          row.artifacts,
          row.history,
          row.metadata,
          row.generation,
        );
      }
    } catch (err) {
      this.logger.error('task write failed', {
        tasks: rows.length,
        error: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  }
}

/** What {@link SqliteTaskRows} works with: the options, and the statements, seam and push configs made on `db`. */
interface SqliteTaskRowsParts extends SqliteTaskRowsOptions {
  statements: TaskStatements;
  sql: Sql;
  pushConfigs: PushConfigStore;
}

/** The task rows on one SQLite file: reads see the pending writes, claims and sweeps flush them first. */
class SqliteTaskRows implements TaskRows {
  private readonly db: SqliteDatabase;
  private readonly group: GroupCommit;
  private readonly statements: TaskStatements;
  private readonly pending: PendingTaskWrites;
  private readonly sql: Sql;
  private readonly pushConfigs: PushConfigStore;
  private readonly logger: Logger;
  private readonly redact: Redact | undefined;

  constructor(parts: SqliteTaskRowsParts) {
    ({ db: this.db, group: this.group, statements: this.statements, sql: this.sql } = parts);
    ({ pushConfigs: this.pushConfigs, logger: this.logger, redact: this.redact } = parts);
    this.pending = new PendingTaskWrites(parts.group, parts.statements, parts.logger);
  }

  async claimSend(send: SendKey, taskId: string, row?: StoredTask): Promise<SendClaim> {
    const { tenant, owner } = send.scope;
    // The first send of this key is found by the id it derived: this window's (`taskId`), or the last one's.
    const ids = [taskId, sendTaskId(send, Date.now() - send.keptMs)] as const;
    for (const id of ids) {
      const key = scopedKey(send.scope, id);
      const first = this.pending.startOf(key);
      if (first) {
        // Answered once the first send's start has committed, after its caller heard it (and began its turn).
        await first.committed;
        return { taskId: id, created: false };
      }
      if (this.pending.row(key)) return { taskId: id, created: false };
    }
    // Its row under either id, or a follow-up's key (recorded with its claim) naming a task.
    // Positional: the scope once per branch of the statement.
    const sent = this.statements.selectSent.get(
      tenant,
      owner,
      ids[0],
      tenant,
      owner,
      ids[1],
      tenant,
      owner,
      send.key,
      Date.now(),
    ) as { task_id: string } | undefined;
    if (sent) return { taskId: sent.task_id, created: false };
    // The new task is live in this process until its first row is written (one write fewer per send); should the
    // process end first, the restart sweep writes the task its start names, failed.
    const start: StartedSend = {
      tenant,
      owner,
      taskId,
      contextId: row?.task.contextId,
      committed: Promise.resolve(),
    };
    start.committed = this.pending.start(scopedKey(send.scope, taskId), start);
    await start.committed;
    return { taskId, created: true };
  }

  write(rows: readonly StoredTask[]): Promise<void> {
    for (const { scope, task, generation } of rows) {
      this.pending.queueRow(scopedKey(scope, task.id), { ...scope, ...taskColumns(task, generation, this.redact) });
    }
    return this.pending.commit();
  }

  async get(reader: TaskReader, id: string): Promise<StoredTask | undefined> {
    // Written but not committed yet: the queued row is the latest.
    const pending = this.pending.row(scopedKey(reader, id));
    if (pending) return stored(pending);
    const own = this.statements.select.get(reader.tenant, reader.owner, id) as TaskRow | undefined;
    if (own) return stored(own);
    if (!reader.everyone) return undefined;
    this.group.flush();
    const anyones = this.statements.selectAnyOwner.get(reader.tenant, id) as TaskRow | undefined;
    return anyones ? stored(anyones) : undefined;
  }

  async claim(scope: TaskScope, id: string, turn: TaskTurnClaim): Promise<TaskClaim> {
    // A write still waiting for its group commit would land after the claim: it goes first.
    if (this.pending.row(scopedKey(scope, id))) this.group.flush();
    const claimed = this.claimAndRecordKey(scope, id, turn);
    if (claimed.row) return { won: true, claimed: stored(claimed.row) };
    const holder = this.statements.selectHolder.get(scope.tenant, scope.owner, id) as
      { status_state: string | null; turn_message: string | null; generation: number } | undefined;
    return {
      won: false,
      state: holder?.status_state ? taskStateFromJSON(holder.status_state) : undefined,
      messageId: holder?.turn_message ?? undefined,
      ...(holder ? { generation: holder.generation } : {}),
      ...('sentAs' in claimed ? { sentAs: claimed.sentAs } : {}),
    };
  }

  async list(reader: TaskReader, query: TaskQuery): Promise<TaskPage> {
    if (this.pending.anyRows) this.group.flush();
    return listTasks(this.sql, this.logger, reader, query);
  }

  async failInterrupted(reason: string, at: Date): Promise<number> {
    const { selectInFlight, selectUnwrittenSends, updateStatus, insertFailed, clearStarted } = this.statements;
    // Rows still waiting for their group commit must be on disk before the sweep reads the table.
    this.group.flush();
    const rows = selectInFlight.all(...IN_FLIGHT) as InterruptedRow[];
    const unwritten = selectUnwrittenSends.all() as InterruptedRow[];
    this.db.transaction(() => {
      for (const row of rows) {
        const status = failedStatus(row, reason, at);
        updateStatus.run(status.state, JSON.stringify(status), at.getTime(), row.tenant, row.owner, row.id);
      }
      for (const row of unwritten) {
        const status = failedStatus(row, reason, at);
        insertFailed.run(
          row.tenant,
          row.owner,
          row.id,
          row.context_id,
          at.getTime(),
          status.state,
          JSON.stringify(status),
        );
      }
      // Every task a start names has its row now.
      clearStarted.run();
    })();
    const count = rows.length + unwritten.length;
    if (count > 0) this.logger.warn('tasks interrupted by a restart marked failed', { count });
    return count;
  }

  async countByState(): Promise<Record<string, number>> {
    const counted = this.statements.countByState.all() as { state: string; count: number }[];
    return Object.fromEntries(counted.map((row) => [row.state, row.count]));
  }

  async purgeFinished(olderThan: Date): Promise<number> {
    const s = this.statements;
    this.group.flush();
    const cutoff = olderThan.getTime();
    const endedBefore = Date.now() - ENDED_TASK_EVENTS_KEPT_MS;
    const removed = this.db.transaction(() => {
      s.deleteFinishedPush.run(...FINISHED, cutoff);
      s.deleteFinishedEvents.run(...FINISHED, cutoff);
      s.deleteFinishedSnapshots.run(...FINISHED, cutoff);
      s.deleteFinishedKeys.run(...FINISHED, cutoff);
      s.pruneEndedEvents.run(endedBefore);
      s.pruneEndedSnapshots.run(endedBefore);
      s.deleteExpiredKeys.run(Date.now());
      return s.deleteFinished.run(...FINISHED, cutoff).changes;
    })();
    if (removed > 0) {
      await this.pushConfigs.reload();
      this.logger.info('finished tasks purged', { count: removed });
    }
    return removed;
  }

  /** The claim's update and the send key it records, one transaction; or the task a retry's key was sent as. */
  private claimAndRecordKey(scope: TaskScope, id: string, turn: TaskTurnClaim) {
    const { selectSendKey, claim, upsertSendKey } = this.statements;
    const status = claimedStatus(turn.at);
    const { send } = turn;
    const expected = turn.generation ?? null;
    // The send's key refuses a retry; the claim and the key it records are one transaction.
    return this.db.transaction(() => {
      const recorded = send && (selectSendKey.get(send.scope.tenant, send.scope.owner, send.key) as SendKeyRow);
      if (recorded && recorded.expires_at >= Date.now()) return { sentAs: recorded.task_id };
      const row = claim.get(
        status.state,
        status.status,
        status.updated,
        turn.messageId ?? null,
        scope.tenant,
        scope.owner,
        id,
        ...CLAIMABLE_STATES,
        expected,
        expected,
      ) as TaskRow | undefined;
      if (row && send)
        upsertSendKey.run(send.scope.tenant, send.scope.owner, send.key, id, Date.now() + send.keptMs, null);
      return { row };
    })();
  }
}

/**
 * The task and push-config rows on `db` (the schema applied once).
 * @example
 * const { tasks, pushConfigs } = createSqliteTaskRows({ db, group, logger });
 * await tasks.write([{ scope: { tenant: '', owner: 'alice' }, task }]);
 */
export function createSqliteTaskRows(options: SqliteTaskRowsOptions): TaskRowStores {
  const { db, group, logger } = options;
  migrate(db, 'a2a', TASK_ROW_MIGRATIONS);
  const statements = prepareTaskStatements(db);
  const sql = createSqliteSql(db, group);
  const pushConfigs = createPushConfigRows({ sql, logger });
  return { tasks: new SqliteTaskRows({ ...options, statements, sql, pushConfigs }), pushConfigs };
}
