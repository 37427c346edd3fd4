import { hash } from 'node:crypto';
import { Task, TaskPushNotificationConfig, TaskState, TaskStatus, taskStateToJSON } from '@a2a-js/sdk';
import { redactJsonText, type Redact } from '../log/redactJson';
import { INTERRUPTED_STATES } from '../protocol/taskStates';

/**
 * The rows of A2A tasks and their push-notification configs, behind an
 * interface a second database can implement (SQLite in
 * `store/sqlite/taskRows.ts`; the contract suite in
 * `test/store/contracts/taskRows.contract.ts`). Rows hold what a task was
 * when it was written, and the claim that starts each turn of a task
 * waiting for its caller (one turn at a time, whichever replica claims):
 * which task is live, and when it is written, is decided above
 * (`a2a/liveTasks.ts`). Every row is scoped to the tenant and
 * the caller that created it; the node's owner reads and lists every
 * caller's.
 */

/**
 * Where a task failed for its interrupted replica ("replica lost", "node
 * restarted") ran: the replica's id, in its failed status message's
 * metadata (the console names it beside the reason).
 */
export const INTERRUPTED_REPLICA_KEY = 'lango.replica';

/** Whose a task is: the tenant and the caller (the SDK's user scope) that created it. */
export interface TaskScope {
  tenant: string;
  owner: string;
}

/** Who is reading: a scope, and whether it is the node's owner (who reads every caller's tasks of the tenant). */
export interface TaskReader extends TaskScope {
  everyone: boolean;
}

/** A task and whose it is. */
export interface StoredTask {
  scope: TaskScope;
  task: Task;
  /**
   * The task's generation as written (issue 27: +1 per event over its life):
   * the next turn goes on counting from it. 0 for a row written before
   * generations were kept, or a task being created.
   */
  generation?: number;
  /**
   * While the task runs (submitted, working) and replicas share the
   * database: the replica running it, as its row names it. None otherwise.
   */
  replica?: string;
}

/** The turn claiming a task (see {@link TaskRows.claim}). */
export interface TaskTurnClaim {
  /** The message whose turn it is; none when a cancel claims the task to end it. */
  messageId?: string;
  /** When: the timestamp of the `working` status the claim writes. */
  at: Date;
  /**
   * The send's idempotency key (issue 27): the claim is refused when it is
   * recorded already (a retry: the loser learns the task it names), and a
   * claim that wins records it, in the same write.
   */
  send?: SendKey;
  /** The generation the caller expects the task to be at (`If-Generation-Match`): the claim is refused at any other. */
  generation?: number;
}

/**
 * What a claim found: the task, claimed (its row now `working`, as the
 * turn will fold it), or who holds it instead.
 */
export type TaskClaim =
  | { won: true; claimed: StoredTask }
  | {
      won: false;
      /** The task's state now; undefined when the scope has no such task. */
      state: TaskState | undefined;
      /** The replica that last wrote it (the one running its turn, while it is working); none on a single node. */
      replica?: string;
      /**
       * The message whose turn last claimed it: a retry of that very message
       * can be told from another one (issue 27 answers it from here).
       */
      messageId?: string;
      /** The task's generation as its row holds it. */
      generation?: number;
      /** The task the claim's send key is recorded for, when it is (the send is a retry of that one). */
      sentAs?: string;
    };

/** A ListTasks query, as the rows answer it. */
export interface TaskQuery {
  contextId?: string;
  /** Only tasks in this state (undefined or UNSPECIFIED: any). */
  state?: TaskState;
  /** Only tasks whose status changed after this time (ms since the epoch). */
  updatedAfter?: number;
  pageSize: number;
  /** The `nextPageToken` of the previous page; a token not made here is refused with {@link InvalidPageTokenError}. */
  pageToken?: string;
  /** Without: each task's artifacts come back empty. */
  includeArtifacts: boolean;
  /** Without: each task's history comes back empty. */
  includeHistory: boolean;
}

/** One page of tasks, newest status first (ties by id, descending). */
export interface TaskPage {
  tasks: Task[];
  /** Empty on the last page. */
  nextPageToken: string;
  /** How many tasks match the query, over all pages. */
  totalSize: number;
}

/** A page token the rows did not make (the A2A layer answers it as an invalid parameter). */
export class InvalidPageTokenError extends Error {
  constructor() {
    super('pageToken is not a page token from this server');
    this.name = 'InvalidPageTokenError';
  }
}

/**
 * A send's idempotency key (issue 27): whose send it is and its key (the
 * message id, or the caller's `Idempotency-Key`), kept `keptMs` from when
 * it is recorded (the database's clock).
 */
export interface SendKey {
  scope: TaskScope;
  key: string;
  keptMs: number;
}

/**
 * The id of the task a send creates: derived from its caller, its key and
 * the window of `keptMs` that `at` falls in (a UUID of version 8, RFC 9562),
 * so a retry within the window derives it again, or the previous window's
 * ({@link TaskRows.claimSend}). A store may then find a send's first task by
 * that id alone: one lookup of a row it writes anyway, where recording the
 * key beside it cost a write to a randomly ordered index per send.
 * @example
 * const taskId = sendTaskId(send, Date.now());
 */
export function sendTaskId(send: SendKey, at: number): string {
  const window = Math.floor(at / Math.max(1, send.keptMs));
  const hex = hash('sha256', `${send.scope.tenant}\n${send.scope.owner}\n${window}\n${send.key}`, 'hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** What {@link TaskRows.claimSend} found: the task of the send, and whether this call recorded it. */
export interface SendClaim {
  taskId: string;
  /** True: this send is the first (its turn runs); false: a retry of the send that recorded `taskId`. */
  created: boolean;
}

/** The task rows. */
export interface TaskRows {
  /**
   * Records `send` for the task `taskId`, which is the send's own
   * ({@link sendTaskId} of now); with `row`, the task is new and a retry
   * that finds the key must find it too: with replicas its first row
   * (naming the replica running it) is written in the same commit; where
   * one process owns the database the task is live in that process until
   * its first row, and should the process end first its restart sweep
   * ({@link failInterrupted}) writes the task the send started, failed.
   * When the key is recorded already and has not expired, nothing is
   * written and the task recorded for it is returned: of sends racing with
   * one key, on any replica, exactly one is `created`. A key is kept at
   * least `keptMs`; a store that finds it by the derived id keeps it until
   * the window after the one it was recorded in ends (at most twice as
   * long). Resolves once committed.
   */
  claimSend(send: SendKey, taskId: string, row?: StoredTask): Promise<SendClaim>;
  /**
   * Writes each task as it is now (the row is taken when `write` is called;
   * later changes to the object are not written), replacing its earlier row.
   * Writes are group-committed with the database's other writes: resolves
   * once the transaction holding them has committed.
   */
  write(rows: readonly StoredTask[]): Promise<void>;
  /** The task `id` of the reader's scope (the owner: of any caller of the tenant), as last written. */
  get(reader: TaskReader, id: string): Promise<StoredTask | undefined>;
  /**
   * Claims the task `id` of `scope` for one turn, atomically: only a task
   * waiting for its caller (input-required, auth-required) is claimed, and
   * the claim sets it `working` (with the replica, where there are
   * replicas, and the turn's message), so of two turns racing for it
   * exactly one wins, whichever replica each runs on. A task running or
   * finished is never claimed (fenced as a finished task's row is against
   * late writes). A new task needs no claim: its id is fresh, so writing
   * its first row is the claim.
   */
  claim(scope: TaskScope, id: string, turn: TaskTurnClaim): Promise<TaskClaim>;
  /** The reader's tasks (the owner: every caller's of the tenant) that match `query`, a page at a time. */
  list(reader: TaskReader, query: TaskQuery): Promise<TaskPage>;
  /**
   * Marks every task left submitted or working as failed with `reason` at
   * `at` (nobody runs them any more: the process that did has ended), and
   * writes failed any task a send created whose process ended before its
   * first row; resolves with how many.
   */
  failInterrupted(reason: string, at: Date): Promise<number>;
  /**
   * Deletes finished tasks (and their push configs and events) whose status
   * last changed before `olderThan`, the events of tasks ended long enough
   * ago (`ENDED_TASK_EVENTS_KEPT_MS`) and expired send keys; resolves with
   * how many tasks.
   */
  purgeFinished(olderThan: Date): Promise<number>;
  /** How many tasks of every caller are in each state (`TASK_STATE_WORKING`: 2, …): the node's metrics. */
  countByState(): Promise<Record<string, number>>;
}

/** A task's push config and the protocol version (`1.0`, `0.3`) its payloads are serialized for. */
export interface StoredPushConfig {
  config: TaskPushNotificationConfig;
  wireVersion: string;
  /** How the latest notification to it went, once one was sent. */
  delivery?: PushDelivery;
}

/**
 * How the latest notification to a push config went (A2A §13.2, issue
 * 26): `delivered` (a 2xx), `refused` (the receiver's 4xx, or the address
 * policy: not retried), `failed` (every attempt, the last one's reason
 * given). Stored on the config; a config saved again starts without one.
 */
export interface PushDelivery {
  outcome: 'delivered' | 'refused' | 'failed';
  attempts: number;
  /** The last attempt's HTTP status, when the receiver answered. */
  status?: number;
  /** Why the last attempt failed, when it did (never a credential: the origin and a short reason). */
  error?: string;
  /** When the last attempt ended (ISO 8601). */
  at: string;
}

/** The push-notification config rows, per task of a scope. */
export interface PushConfigRows {
  /** Saves (or replaces) `config` under its id, which the caller has set. */
  save(scope: TaskScope, taskId: string, config: TaskPushNotificationConfig, wireVersion: string): Promise<void>;
  /** The task's configs (unreadable rows are skipped with a warning). */
  load(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]>;
  /** Removes one config; nothing when there is none. */
  delete(scope: TaskScope, taskId: string, configId: string): Promise<void>;
  /** Records on one config how its latest notification went; nothing when the config is gone. */
  recordDelivery(scope: TaskScope, taskId: string, configId: string, delivery: PushDelivery): Promise<void>;
  /** Whether the task has any config: asked on every state change of every task, so it should not cost a query. */
  hasAny(scope: TaskScope, taskId: string): Promise<boolean>;
  /**
   * How many configs were saved since start, here or (heard) on another
   * replica: a `hasAny` false stands while this count is unchanged, so a
   * caller asking for each event of a task need not ask again.
   */
  readonly saves: number;
}

/** The task rows and push-config rows of one database, as the A2A layer takes them. */
export interface TaskRowStores {
  tasks: TaskRows;
  pushConfigs: PushConfigRows;
}

/** The states a claim takes a task from: those in which it waits for its caller. */
export const CLAIMABLE_STATES: readonly string[] = INTERRUPTED_STATES.map(taskStateToJSON);

/** The status columns a claim writes: `working` since `at`. */
export function claimedStatus(at: Date): { state: string; status: string; updated: number } {
  const status = { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: at.toISOString() };
  return {
    state: taskStateToJSON(status.state),
    status: JSON.stringify(TaskStatus.toJSON(status)),
    updated: at.getTime(),
  };
}

/** A task's columns as both databases store them: ProtoJSON text, each masked by the node's redactor. */
export interface TaskColumns {
  id: string;
  context_id: string;
  /** The status timestamp in ms since the epoch (0 when it has none). */
  status_last_updated: number;
  status_state: string | null;
  status: string | null;
  artifacts: string | null;
  history: string | null;
  metadata: string | null;
  /** The task's generation when the row was written ({@link StoredTask.generation}). */
  generation: number;
}

/** The columns a batch write binds for each task row, in this order, with their PostgreSQL types. */
export const TASK_ROW_COLUMNS = [
  ['tenant', 'text'],
  ['owner', 'text'],
  ['id', 'text'],
  ['context_id', 'text'],
  ['status_last_updated', 'bigint'],
  ['status_state', 'text'],
  ['status', 'text'],
  ['artifacts', 'text'],
  ['history', 'text'],
  ['metadata', 'text'],
  ['generation', 'bigint'],
] as const;

/** The values of `row` a batch write binds, in the order of {@link TASK_ROW_COLUMNS}. */
export function taskRowValues(row: TaskColumns & TaskScope): unknown[] {
  return TASK_ROW_COLUMNS.map(([name]) => row[name]);
}

/**
 * The one seam where a task becomes a row: nothing stored holds a secret
 * value (issue 11 G).
 */
export function taskColumns(task: Task, generation: number | undefined, redact?: Redact): TaskColumns {
  const payload = Task.toJSON(task) as Record<string, unknown>;
  const encode = (value: unknown) => {
    if (value === undefined) return null;
    const text = JSON.stringify(value);
    return redact ? redactJsonText(text, redact) : text;
  };
  return {
    id: task.id,
    context_id: task.contextId || '',
    status_last_updated: timestampMs(task.status?.timestamp),
    status_state: task.status ? taskStateToJSON(task.status.state) : null,
    status: encode(payload.status),
    artifacts: encode(payload.artifacts),
    history: encode(payload.history),
    metadata: encode(payload.metadata),
    generation: generation ?? 0,
  };
}

/** The task a row holds. */
export function taskOfColumns(row: Omit<TaskColumns, 'status_state' | 'status_last_updated' | 'generation'>): Task {
  const decode = (value: string | null) => (value ? JSON.parse(value) : undefined);
  return Task.fromJSON({
    id: row.id,
    contextId: row.context_id,
    status: decode(row.status),
    artifacts: decode(row.artifacts),
    history: decode(row.history),
    metadata: decode(row.metadata),
  });
}

/** A status timestamp in ms since the epoch; 0 for none or an unreadable one. */
export function timestampMs(timestamp: string | undefined): number {
  const parsed = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
}

/** The page cursor, in the SDK's format: base64 of `<ISO timestamp or ''>|<id>`. */
export function encodePageToken(updated: number, id: string): string {
  return Buffer.from(`${updated === 0 ? '' : new Date(updated).toISOString()}|${id}`).toString('base64');
}

/** The `(status_last_updated, id)` a page token continues after. */
export function decodePageToken(token: string): { updated: number; id: string } {
  const [timestamp, ...idParts] = Buffer.from(token, 'base64').toString('utf-8').split('|');
  if (idParts.length === 0) throw new InvalidPageTokenError();
  return { updated: timestampMs(timestamp), id: idParts.join('|') };
}

/** A push config as stored: its ProtoJSON without the fields the row's keys hold, plus the wire version. */
export function pushConfigData(config: TaskPushNotificationConfig, wireVersion: string): string {
  const payload = TaskPushNotificationConfig.toJSON(config) as Record<string, unknown>;
  delete payload.tenant;
  delete payload.id;
  delete payload.taskId;
  return JSON.stringify({ ...payload, wireVersion });
}

/** The push config a row holds (throws on unreadable data). */
export function pushConfigOfRow(
  tenant: string,
  taskId: string,
  configId: string,
  data: string | null,
): StoredPushConfig {
  const payload = JSON.parse(data || '{}') as Record<string, unknown>;
  const delivery =
    payload.delivery && typeof payload.delivery === 'object' ? (payload.delivery as PushDelivery) : undefined;
  return {
    config: TaskPushNotificationConfig.fromJSON({ ...payload, tenant, id: configId, taskId }),
    wireVersion: String(payload.wireVersion || '0.3'),
    ...(delivery ? { delivery } : {}),
  };
}

/** Length-prefixed, so no choice of tenant, owner and id can make two scopes share a key. */
export const scopedKey = (scope: TaskScope, taskId: string) =>
  `${scope.tenant.length}:${scope.tenant}${scope.owner.length}:${scope.owner}${taskId}`;
