import { TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { RUNNING_STATES } from '../../protocol/taskStates';
import { INTERRUPTED_REPLICA_KEY } from '../taskRows';
import type { ReplicaScope } from './cluster';
import { rows, transaction, type PgDatabase, type PgQueryable } from './database';
import { lockTasks, TASK_EVENTS_CHANNEL } from './taskEvents';

/**
 * The sweep of tasks nobody runs any more on PostgreSQL: a restarting
 * replica's own running tasks, and those of replicas silent past the lease.
 * Each is failed with its terminal event appended, so followers on any
 * replica end their streams.
 */

/** States a live task runs in, as stored: the ones a lost or restarted replica leaves behind. */
export const IN_FLIGHT = RUNNING_STATES.map(taskStateToJSON);

/** "The row's replica is gone": no heartbeat within the lease, or none recorded. Not this replica. */
export const LOST_ELSEWHERE = `replica IS DISTINCT FROM $1 AND (replica IS NULL OR NOT EXISTS (SELECT 1 FROM cluster_replicas r
    WHERE r.replica_id = replica AND r.heartbeat_at > now() - make_interval(secs => $2::double precision / 1000)))`;

/** The rows a sweep fails: their key and what the terminal event needs. */
interface FailedRow {
  tenant: string;
  owner: string;
  id: string;
  context_id: string;
  status: string;
  /** BIGINT as text. */
  generation: string;
}

/** A running task a sweep's condition selected, and the replica its row names. */
interface SweepCandidate {
  tenant: string;
  owner: string;
  id: string;
  replica: string | null;
}

/**
 * The status of a task failed for `reason` at `at`, as ProtoJSON: the row's
 * `status` column and the terminal event's status alike.
 */
function failedStatus(row: { id: string; context_id: string }, reason: string, at: Date, ranOn: string | null) {
  return {
    state: taskStateToJSON(TaskState.TASK_STATE_FAILED),
    timestamp: at.toISOString(),
    message: {
      messageId: `interrupted-${row.id}`,
      taskId: row.id,
      contextId: row.context_id,
      role: 'ROLE_AGENT',
      parts: [{ text: reason, mediaType: 'text/plain' }],
      ...(ranOn ? { metadata: { [INTERRUPTED_REPLICA_KEY]: ranOn } } : {}),
    },
  };
}

/**
 * Fails one task in `client`'s transaction, holding its advisory lock: the
 * row (still running and still matching `where`) gets the failed status and
 * the terminal event after the task's last, and followers are told.
 * Resolves false when the row no longer qualifies.
 */
async function failTask(
  client: PgQueryable,
  replica: ReplicaScope,
  where: string,
  candidate: SweepCandidate,
  reason: string,
  at: Date,
): Promise<boolean> {
  const key = { tenant: candidate.tenant, owner: candidate.owner, taskId: candidate.id };
  await lockTasks(client, [key]);
  const [row] = await rows<FailedRow>(
    client,
    `SELECT tenant, owner, id, context_id, status, generation FROM a2a_tasks
           WHERE tenant = $4 AND owner = $5 AND id = $6 AND status_state = ANY ($3::text[]) AND ${where}
           FOR UPDATE`,
    [replica.replicaId, replica.leaseMs, IN_FLIGHT, key.tenant, key.owner, key.taskId],
  );
  if (!row) return false;
  const status = failedStatus(row, reason, at, candidate.replica);
  const event = { statusUpdate: { taskId: row.id, contextId: row.context_id, status } };
  // The failure is the task's next generation: after its last event, or its row's when its turn wrote none.
  await client.query(
    `WITH ended AS (
             INSERT INTO a2a_task_events (tenant, owner, task_id, seq, event, terminal, replica, at)
             SELECT $1, $2, $3, GREATEST(COALESCE(max(seq), 0), $6::bigint) + 1, $4, true, $5, now() FROM a2a_task_events
               WHERE tenant = $1 AND owner = $2 AND task_id = $3
             ON CONFLICT DO NOTHING
             RETURNING seq)
           UPDATE a2a_tasks SET status_state = $7, status = $8, status_last_updated = $9,
             generation = COALESCE((SELECT seq FROM ended), generation + 1)
           WHERE tenant = $1 AND owner = $2 AND id = $3`,
    [
      key.tenant,
      key.owner,
      key.taskId,
      JSON.stringify(event),
      replica.replicaId,
      row.generation,
      status.state,
      JSON.stringify(status),
      at.getTime(),
    ],
  );
  await client.query('SELECT pg_notify($1, $2)', [
    TASK_EVENTS_CHANNEL,
    JSON.stringify([[key.tenant, key.owner, key.taskId]]),
  ]);
  return true;
}

/**
 * Fails the rows `where` selects (running, and `$1`/`$2` as in the
 * cluster's conditions: this replica and its lease), one task per
 * transaction: its advisory lock, the fenced update, the terminal event
 * after the task's last. Resolves with how many were failed.
 * @example
 * const count = await failRows(db, replica, LOST_ELSEWHERE, () => REPLICA_LOST, new Date());
 */
export async function failRows(
  db: PgDatabase,
  replica: ReplicaScope,
  where: string,
  reasonOf: (row: { replica: string | null }) => string,
  at: Date,
): Promise<number> {
  const candidates = await rows<SweepCandidate>(
    db,
    `SELECT tenant, owner, id, replica FROM a2a_tasks WHERE status_state = ANY ($3::text[]) AND ${where}`,
    [replica.replicaId, replica.leaseMs, IN_FLIGHT],
  );
  let failed = 0;
  for (const candidate of candidates) {
    const reason = reasonOf(candidate);
    const done = await transaction(db, (client) => failTask(client, replica, where, candidate, reason, at));
    if (done) failed += 1;
  }
  return failed;
}
