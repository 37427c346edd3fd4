import { TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import {
  decodePageToken,
  encodePageToken,
  taskOfColumns,
  type TaskColumns,
  type TaskPage,
  type TaskQuery,
  type TaskReader,
} from '../taskRows';
import type { Sql } from './sql';

/** The page size of a query that gives none. */
const DEFAULT_PAGE = 50;

/**
 * `TaskRows.list` on either database: the reader's tasks (the owner: every
 * caller's of the tenant) matching `query`, newest status first (ties by
 * id, descending, byte-wise on both), a page at a time; unreadable rows are
 * skipped with a warning.
 */
export async function listTasks(sql: Sql, logger: Logger, reader: TaskReader, query: TaskQuery): Promise<TaskPage> {
  const where = ['tenant = ?'];
  const params: unknown[] = [reader.tenant];
  const and = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (!reader.everyone) and('owner = ?', reader.owner);
  if (query.contextId) and('context_id = ?', query.contextId);
  if (query.state !== undefined && query.state !== TaskState.TASK_STATE_UNSPECIFIED)
    and('status_state = ?', taskStateToJSON(query.state));
  if (query.updatedAfter !== undefined) and('status_last_updated > ?', query.updatedAfter);
  const counted = await sql.get<{ n: number | string }>(
    `SELECT count(*) AS n FROM a2a_tasks WHERE ${where.join(' AND ')}`,
    params,
  );
  if (query.pageToken) {
    const cursor = decodePageToken(query.pageToken);
    and('(status_last_updated < ? OR (status_last_updated = ? AND id < ?))', cursor.updated, cursor.updated, cursor.id);
  }
  const pageSize = query.pageSize || DEFAULT_PAGE;
  const selected = [
    'id',
    'context_id',
    'status',
    'metadata',
    'status_last_updated',
    query.includeArtifacts ? 'artifacts' : 'NULL AS artifacts',
    query.includeHistory ? 'history' : 'NULL AS history',
  ].join(', ');
  const found = await sql.all<TaskColumns>(
    `SELECT ${selected} FROM a2a_tasks WHERE ${where.join(' AND ')}
     ORDER BY status_last_updated DESC, id DESC LIMIT ?`,
    [...params, pageSize + 1],
  );
  const page = found.slice(0, pageSize);
  const tasks = [];
  for (const row of page) {
    try {
      tasks.push(taskOfColumns(row));
    } catch (err) {
      logger.warn('unreadable task skipped', { taskId: row.id, error: errorMessage(err) });
    }
  }
  const last = page.at(-1);
  return {
    tasks,
    nextPageToken: found.length > pageSize && last ? encodePageToken(Number(last.status_last_updated), last.id) : '',
    totalSize: Number(counted?.n ?? 0),
  };
}
