import type { Redact } from '../../log/redactJson';
import { taskStateFromJSON } from '@a2a-js/sdk';
import {
  CLAIMABLE_STATES,
  claimedStatus,
  scopedKey,
  TASK_ROW_COLUMNS,
  taskRowValues,
  taskColumns,
  type SendClaim,
  type SendKey,
  type StoredTask,
  type TaskClaim,
  type TaskScope,
  type TaskTurnClaim,
} from '../taskRows';
import { valuesList } from '../sql/dialect';
import { rows, rowStatements, type PgDatabase, type PgSchema } from './database';
import type { PgGroupCommit, PgQueuedWrite } from './groupCommit';

/**
 * The idempotency keys of sends (issue 27): the caller's key (a message id,
 * or its `Idempotency-Key`) and the task its first send created, kept for
 * `a2a.idempotencyWindow` (database time). The primary key decides which of
 * sends racing with one key on any replica is the first; a message that
 * continues a task records its key in its turn's claim ({@link claimTurn}).
 */
export const SEND_KEYS_SCHEMA: PgSchema = {
  store: 'a2a_send_keys',
  steps: [
    `CREATE TABLE a2a_send_keys (
       tenant TEXT NOT NULL, owner TEXT NOT NULL, key TEXT NOT NULL, task_id TEXT NOT NULL,
       expires_at TIMESTAMPTZ NOT NULL,
       PRIMARY KEY (tenant, owner, key));
     CREATE INDEX a2a_send_keys_by_expiry ON a2a_send_keys (expires_at);`,
  ],
};

/** One claim waiting for its group, and the callers of the same key in that group. */
interface QueuedClaim {
  send: SendKey;
  taskId: string;
  row: StoredTask | undefined;
  callers: Array<(claim: SendClaim) => void>;
  failures: Array<(err: unknown) => void>;
}

/** Options of {@link createPgSendKeys}. */
export interface PgSendKeysOptions {
  db: PgDatabase;
  group: PgGroupCommit;
  /** This replica: the new task's row names it as the one running the task. */
  replicaId: string;
  redact?: Redact;
}

/** The send keys on PostgreSQL (see {@link SEND_KEYS_SCHEMA}). */
export interface PgSendKeys {
  /** `TaskRows.claimSend`: the key and the new task's row in one statement of the group commit. */
  claim(send: SendKey, taskId: string, row?: StoredTask): Promise<SendClaim>;
  /** Deletes the keys past their window; resolves with how many. */
  purgeExpired(): Promise<number>;
}

/** A claim's columns: its key, then the new task's row (all null for a send claimed without one). */
const CLAIM_COLUMNS = [
  ['tenant', 'text'],
  ['owner', 'text'],
  ['key', 'text'],
  ['task_id', 'text'],
  ['kept_ms', 'double precision'],
  ...TASK_ROW_COLUMNS.map(([name, type]) => [`row_${name}`, type] as const),
] as const;

/** The values of one claim, in the order of {@link CLAIM_COLUMNS}. */
function claimValues(claim: QueuedClaim, redact: Redact | undefined): unknown[] {
  const { send, taskId, row } = claim;
  const key = [send.scope.tenant, send.scope.owner, send.key, taskId, send.keptMs];
  if (!row) return [...key, ...TASK_ROW_COLUMNS.map(() => null)];
  return [...key, ...taskRowValues({ ...row.scope, ...taskColumns(row.task, row.generation, redact) })];
}

/**
 * The claim of `claims` sends ($1: this replica): the keys not recorded (or
 * expired) inserted, and for each key inserted the new task's row. Returns
 * the keys it inserted.
 */
const claimText = (claims: number) =>
  `WITH k(${CLAIM_COLUMNS.map(([name]) => name).join(', ')}) AS ${valuesList(
    'postgres',
    CLAIM_COLUMNS.map(([, type]) => type),
    claims,
    2,
  )},
     claimed AS (
       INSERT INTO a2a_send_keys (tenant, owner, key, task_id, expires_at)
       SELECT k.tenant, k.owner, k.key, k.task_id, now() + make_interval(secs => k.kept_ms / 1000) FROM k
       ON CONFLICT (tenant, owner, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at
         WHERE a2a_send_keys.expires_at < now()
       RETURNING tenant, owner, key, task_id),
     created AS (
       INSERT INTO a2a_tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts,
         history, metadata, generation, protocol_version, replica)
       SELECT ${TASK_ROW_COLUMNS.map(([name]) => `k.row_${name}`).join(', ')}, '1.0', $1 FROM k
       WHERE k.row_id IS NOT NULL
         AND EXISTS (SELECT 1 FROM claimed c WHERE c.tenant = k.row_tenant AND c.owner = k.row_owner AND c.task_id = k.row_id)
       ON CONFLICT (tenant, owner, id) DO NOTHING)
   SELECT tenant, owner, key FROM claimed`;

/**
 * Creates the send keys on `db`. Claims are group-committed: each group's
 * claims are one statement per run of rows (`rowStatements`) that inserts the keys not recorded (or expired)
 * and, for each key it inserted, the new task's row; a key recorded by
 * another send (committed, or committing: the insert waits for it) is not
 * returned, and its task is read once the group has committed.
 * @example
 * const keys = createPgSendKeys({ db, group, replicaId: 'a' });
 * const { taskId, created } = await keys.claim({ scope, key: 'message:m1', keptMs: 86_400_000 }, id, row);
 */
export function createPgSendKeys(options: PgSendKeysOptions): PgSendKeys {
  const { db, group, replicaId, redact } = options;
  /** By scope and key: a second send of a key in one group rides on the first. */
  let queue = new Map<string, QueuedClaim>();
  const claimRows = rowStatements('a2a_send_keys_claim', claimText, (claim: QueuedClaim) => claimValues(claim, redact));

  const write = (batch: QueuedClaim[]): PgQueuedWrite => ({
    statements: claimRows(batch, replicaId),
    committed(results) {
      const won = new Set(
        results
          .flatMap((result) => result.rows as Array<{ tenant: string; owner: string; key: string }>)
          .map((r) => scopedKey({ tenant: r.tenant, owner: r.owner }, r.key)),
      );
      for (const claim of batch) {
        if (won.has(scopedKey(claim.send.scope, claim.send.key))) {
          const [first, ...retries] = claim.callers;
          first!({ taskId: claim.taskId, created: true });
          for (const retry of retries) retry({ taskId: claim.taskId, created: false });
        } else {
          // Recorded by another send, now committed: its task is the one every caller of this key gets.
          void recordedTask(claim.send).then(
            (taskId) => claim.callers.forEach((caller) => caller({ taskId: taskId ?? claim.taskId, created: false })),
            (err: unknown) => claim.failures.forEach((fail) => fail(err)),
          );
        }
      }
    },
  });

  const recordedTask = async (send: SendKey) => {
    const [found] = await rows<{ task_id: string }>(db, {
      name: 'a2a_send_keys_get',
      text: 'SELECT task_id FROM a2a_send_keys WHERE tenant = $1 AND owner = $2 AND key = $3',
      values: [send.scope.tenant, send.scope.owner, send.key],
    });
    return found?.task_id;
  };

  const takeQueued = () => {
    const batch = [...queue.values()];
    queue = new Map();
    return write(batch);
  };

  return {
    claim(send, taskId, row) {
      return new Promise<SendClaim>((resolve, reject) => {
        const k = scopedKey(send.scope, send.key);
        let claim = queue.get(k);
        if (!claim) queue.set(k, (claim = { send, taskId, row, callers: [], failures: [] }));
        claim.callers.push(resolve);
        claim.failures.push(reject);
        group.schedule(takeQueued).catch(reject);
      });
    },
    async purgeExpired() {
      const result = await db.query('DELETE FROM a2a_send_keys WHERE expires_at < now()');
      return result.rowCount ?? 0;
    },
  };
}

/**
 * `TaskRows.claim` on PostgreSQL: the conditional update that claims a task
 * waiting for its caller, in one statement with the send's key (a key
 * recorded already refuses the claim: a retry; a claim that wins records it)
 * and the generation the caller expects. A second claim waits for the
 * first one's row lock, then finds the row no longer claimable; the loser
 * reads (a new snapshot) who holds the task and the task its key names.
 * Resolves with the claimed row's `columns`, or what the loser learned.
 */
export async function claimTurn(
  db: PgDatabase,
  claim: { scope: TaskScope; id: string; turn: TaskTurnClaim; replicaId: string; columns: string },
): Promise<{ won: true; row: unknown } | Extract<TaskClaim, { won: false }>> {
  const { scope, id, turn, replicaId, columns } = claim;
  const status = claimedStatus(turn.at);
  const { send } = turn;
  const [claimed] = await rows(db, {
    name: 'a2a_tasks_claim',
    text: `WITH claimed AS (
             UPDATE a2a_tasks SET status_state = $4, status = $5, status_last_updated = $6, replica = $7,
               turn_message = $8
             WHERE tenant = $1 AND owner = $2 AND id = $3 AND status_state = ANY ($9::text[])
               AND ($10::bigint IS NULL OR generation = $10)
               AND NOT EXISTS (SELECT 1 FROM a2a_send_keys k
                 WHERE k.tenant = $1 AND k.owner = $2 AND k.key = $11 AND k.expires_at >= now())
             RETURNING ${columns}),
           keyed AS (
             INSERT INTO a2a_send_keys (tenant, owner, key, task_id, expires_at)
             SELECT tenant, owner, $11, id, now() + make_interval(secs => $12::double precision / 1000)
             FROM claimed WHERE $11::text IS NOT NULL
             ON CONFLICT (tenant, owner, key) DO UPDATE SET task_id = excluded.task_id,
               expires_at = excluded.expires_at WHERE a2a_send_keys.expires_at < now())
           SELECT * FROM claimed`,
    values: [
      scope.tenant,
      scope.owner,
      id,
      status.state,
      status.status,
      status.updated,
      replicaId,
      turn.messageId ?? null,
      CLAIMABLE_STATES,
      turn.generation ?? null,
      send?.key ?? null,
      send?.keptMs ?? 0,
    ],
  });
  if (claimed) return { won: true, row: claimed };
  const [holder] = await rows<{
    status_state: string | null;
    replica: string | null;
    turn_message: string | null;
    generation: string | null;
    sent_as: string | null;
  }>(db, {
    name: 'a2a_tasks_holder',
    text: `SELECT t.status_state, t.replica, t.turn_message, t.generation,
             (SELECT k.task_id FROM a2a_send_keys k WHERE k.tenant = $1 AND k.owner = $2 AND k.key = $4
               AND k.expires_at >= now()) AS sent_as
           FROM (SELECT 1) one LEFT JOIN a2a_tasks t ON t.tenant = $1 AND t.owner = $2 AND t.id = $3`,
    values: [scope.tenant, scope.owner, id, send?.key ?? null],
  });
  return {
    won: false,
    state: holder?.status_state ? taskStateFromJSON(holder.status_state) : undefined,
    ...(holder?.replica ? { replica: holder.replica } : {}),
    ...(holder?.turn_message ? { messageId: holder.turn_message } : {}),
    ...(holder?.generation !== null && holder?.generation !== undefined
      ? { generation: Number(holder.generation) }
      : {}),
    ...(holder?.sent_as ? { sentAs: holder.sent_as } : {}),
  };
}
