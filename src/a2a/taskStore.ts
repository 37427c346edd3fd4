import { TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { migrate, type SqliteDatabase } from '../store/sqlite/database';
import type { GroupCommit } from '../store/sqlite/groupCommit';
import type { Logger } from '../log/logger';
import { SqlitePushStore, SqliteTaskStore } from './sqliteStores';
import type { Redact } from '../log/redactJson';
import { FINISHED_STATES, RUNNING_STATES } from '../protocol/taskStates';

/**
 * Durable A2A tasks and push-notification configs in the node's one SQLite
 * file. The rows are those of the SDK's database stores (`@a2a-js/sdk/server/database`);
 * {@link SqliteTaskStore} serves them with prepared statements instead of
 * kysely, which prepared every query anew and tripled the cost of a task.
 * We also own the two lifecycle chores the SDK does not do: failing tasks a
 * dead process left `working`, and purging finished tasks past their retention.
 */

const MIGRATIONS = [
  `CREATE TABLE a2a_tasks (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, id TEXT NOT NULL,
     context_id TEXT NOT NULL, status_last_updated INTEGER NOT NULL DEFAULT 0,
     status_state TEXT, status TEXT, artifacts TEXT, history TEXT, metadata TEXT,
     protocol_version TEXT,
     PRIMARY KEY (tenant, owner, id))`,
  `CREATE INDEX a2a_tasks_by_updated ON a2a_tasks (tenant, owner, status_last_updated DESC, id DESC)`,
  `CREATE INDEX a2a_tasks_by_state ON a2a_tasks (status_state, status_last_updated)`,
  `CREATE TABLE a2a_push_configs (
     tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
     config_data TEXT, protocol_version TEXT,
     PRIMARY KEY (tenant, owner, task_id, config_id))`,
];

const TASK_TABLE = 'a2a_tasks';
const PUSH_TABLE = 'a2a_push_configs';

/** States that end a task, as stored; only these are purged. */
const FINISHED = FINISHED_STATES.map(taskStateToJSON);

/** States a live executor owns, as stored; after a restart nobody does. */
const IN_FLIGHT = RUNNING_STATES.map(taskStateToJSON);

/** The two SDK stores over our database, plus the lifecycle chores. */
export interface A2AStores {
  readonly tasks: SqliteTaskStore;
  readonly pushConfigs: SqlitePushStore;
  /** Marks tasks left `submitted`/`working` by a previous process as failed; returns how many. */
  failInterrupted(reason: string): number;
  /** Deletes finished tasks (and their push configs) last updated before `olderThan`; returns how many. */
  purgeFinished(olderThan: Date): number;
}

/**
 * Creates the A2A stores on `db`, applying the schema once.
 * @example
 * const stores = createA2AStores({ db, group: createGroupCommit(db), logger, clock: () => new Date() });
 * stores.failInterrupted('node restarted');
 */
export function createA2AStores(options: {
  db: SqliteDatabase;
  /** The database's one group commit, shared with the other stores. */
  group: GroupCommit;
  logger: Logger;
  clock: () => Date;
  /** Masks known secret values in every task row written (issue 11 G). */
  redact?: Redact;
}): A2AStores {
  const { db, group, logger, clock } = options;
  migrate(db, 'a2a', MIGRATIONS);
  const tasks = new SqliteTaskStore(db, logger, group, TASK_TABLE, options.redact);
  const pushConfigs = new SqlitePushStore(db, logger, PUSH_TABLE);

  const selectInFlight = db.prepare(
    `SELECT tenant, owner, id, context_id FROM ${TASK_TABLE} WHERE status_state IN (${IN_FLIGHT.map(() => '?').join(',')})`,
  );
  const updateStatus = db.prepare(
    `UPDATE ${TASK_TABLE} SET status_state = ?, status = ?, status_last_updated = ? WHERE tenant = ? AND owner = ? AND id = ?`,
  );
  const finished = FINISHED.map(() => '?').join(',');
  const deletePush = db.prepare(
    `DELETE FROM ${PUSH_TABLE} WHERE (tenant, owner, task_id) IN (SELECT tenant, owner, id FROM ${TASK_TABLE}
       WHERE status_state IN (${finished}) AND status_last_updated < ?)`,
  );
  const deleteTasks = db.prepare(
    `DELETE FROM ${TASK_TABLE} WHERE status_state IN (${finished}) AND status_last_updated < ?`,
  );

  return {
    tasks,
    pushConfigs,
    failInterrupted(reason) {
      // Rows still waiting for their group commit must be on disk before the sweep reads the table.
      tasks.flushAndForget();
      const now = clock();
      const rows = selectInFlight.all(...IN_FLIGHT) as {
        tenant: string;
        owner: string;
        id: string;
        context_id: string;
      }[];
      db.transaction(() => {
        for (const row of rows) {
          const status = {
            state: taskStateToJSON(TaskState.TASK_STATE_FAILED),
            timestamp: now.toISOString(),
            message: {
              messageId: `restart-${row.id}`,
              taskId: row.id,
              contextId: row.context_id,
              role: 'ROLE_AGENT',
              parts: [{ text: reason, mediaType: 'text/plain' }],
            },
          };
          updateStatus.run(status.state, JSON.stringify(status), now.getTime(), row.tenant, row.owner, row.id);
        }
      })();
      if (rows.length > 0) logger.warn('tasks interrupted by a restart marked failed', { count: rows.length });
      return rows.length;
    },
    purgeFinished(olderThan) {
      const cutoff = olderThan.getTime();
      const removed = db.transaction(() => {
        deletePush.run(...FINISHED, cutoff);
        return deleteTasks.run(...FINISHED, cutoff).changes;
      })();
      if (removed > 0) logger.info('finished tasks purged', { count: removed });
      return removed;
    },
  };
}
