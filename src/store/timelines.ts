import type { Principal } from '../principal';

/** One step of a turn: a transfer, a model, tool or remote call, an agent's turn at acting. */
export interface TimelineStep {
  kind: 'agent' | 'model' | 'tool' | 'transfer' | 'remote';
  name: string;
  /** The agent acting. */
  agent?: string;
  /** Milliseconds from the start of the turn. */
  atMs: number;
  /** How long it took (undefined while it runs, or when the turn ended first). */
  ms?: number;
  /** Arguments, masked, redacted and shortened. */
  args?: string;
  /** Result, redacted and shortened. */
  result?: string;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  hops?: number;
  /** The index in `steps` of the step this one ran inside (an agent's step, for its model, tool and remote calls). */
  parent?: number;
}

/** A tool call as an exchange keeps it: its arguments masked (credential-named keys) and redacted. */
export interface ExchangeToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One message a model step was sent, redacted and capped. */
export interface ExchangeMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  author?: string;
  /** A tool message: the tool's name and the call it answers. */
  name?: string;
  toolCallId?: string;
  toolCalls?: ExchangeToolCall[];
  /** A note the runtime added for the model, not what the user typed. */
  runtimeNote?: boolean;
}

/**
 * What one model step was sent and what it answered (the console's model
 * inspector), as a turn's timeline keeps it: registered secrets redacted,
 * tool-call arguments masked, every text and the whole capped (`cut` says
 * something was). Its tokens and latency are its step's.
 */
export interface ModelExchange {
  /** The index in the turn's `steps` of its model step. */
  step: number;
  /** The system prompt. */
  instruction: string;
  messages: ExchangeMessage[];
  /** The oldest messages left out to stay within the cap. */
  omittedMessages?: number;
  /** The tools offered: name, description and the JSON Schema of the arguments (as JSON text). */
  tools: Array<{ name: string; description: string; parameters?: string }>;
  answer: { text: string; toolCalls: ExchangeToolCall[] };
  /** Some text was cut to fit, or (past the turn's budget) the messages and tools were left out. */
  cut?: boolean;
}

/** One turn of a task (or of a conversation without a task: a CLI turn, a console tool run). */
export interface TaskTimeline {
  /** The turn's own id (a task has a turn per message it answered). */
  id: string;
  taskId?: string;
  sessionId: string;
  /** The principal the turn ran for: whose row this is. */
  caller: string;
  /** What the user asked, redacted and shortened. */
  asked?: string;
  /** The replica that ran the turn (PostgreSQL); a lone SQLite node names none. */
  replica?: string;
  startedAt: string;
  /** How long the turn took (undefined while it runs). */
  ms?: number;
  status?: string;
  /** The agent that answered. */
  agent?: string;
  error?: string;
  steps: TimelineStep[];
  /**
   * Its model steps' exchanges: saved with the turn, read only by
   * {@link TimelineStore.turn} (listings leave them out: they are the bulk).
   */
  exchanges?: ModelExchange[];
}

/** Which turns a read wants, newest first. */
export interface TimelineQuery {
  /** The turns of these tasks only. */
  taskIds?: readonly string[];
  /** The turns of one conversation only. */
  sessionId?: string;
  /** The turns run for this principal id only (the owner's filter; a caller always reads its own). */
  caller?: string;
  limit: number;
}

/**
 * Finished turns' timelines (issue 28): stored, so they survive a restart
 * and every replica reads every replica's. A row is the turn's caller's: a
 * caller reads its own, the owner everyone's. Written once a turn ends
 * (group-committed with the database's other writes); running turns live
 * with the sink that records them (`observe/timeline.ts`). A store keeps the
 * newest turns saved, as many as it was opened to keep
 * (`observability.timeline.tasks`), and lets the older ones go itself.
 */
export interface TimelineStore {
  /**
   * Writes finished turns (a row of the same id is replaced). The store
   * stamps each with its replica. Resolves once committed.
   */
  save(turns: readonly TaskTimeline[]): Promise<void>;
  /** Turns the principal may see that match `query`, newest first (by start, then id), without their exchanges. */
  list(principal: Principal, query: TimelineQuery): Promise<TaskTimeline[]>;
  /** One turn the principal may see, by its id, with its model exchanges; undefined when there is none. */
  turn(principal: Principal, id: string): Promise<TaskTimeline | undefined>;
  /** Hands the turns saved and not yet written to the database's next commit (the storage calls it as it closes). */
  flush(): void;
}

/**
 * How long a saved turn waits for others before it is written: turns ending
 * within this of each other share one statement, a turn's timeline, which
 * ends just after the turn's own rows were committed, does not cost a
 * transaction of its own, and under load the turns a store would let go
 * within the same write are never written ({@link queueTurn}). Reads and
 * closing write at once. A second: a store keeps its newest `kept` turns, so
 * it writes at most `kept` rows a second however busy the node is (at 250 ms
 * a busy node wrote four times as many, each turn's model exchange some
 * kilobytes of JSON, for rows the ring overwrote within the second; issue 35).
 */
export const TIMELINE_SAVE_DELAY_MS = 1_000;

/** Turns a store keeps when not told (`observability.timeline.tasks`' default). */
export const DEFAULT_TIMELINES_KEPT = 200;

/**
 * Queues a saved turn as the newest, letting go of the oldest queued past
 * `kept`: a write of more would only replace them again, and a turn held
 * no longer than that dies young (not promoted to the old heap under load).
 */
export function queueTurn(queued: Map<string, TaskTimeline>, turn: TaskTimeline, kept: number): void {
  queued.delete(turn.id);
  queued.set(turn.id, turn);
  if (queued.size > kept) queued.delete(queued.keys().next().value!);
}

/**
 * A write held for `delayMs` so the saves requested meanwhile share it:
 * `request()` resolves once the shared write has; `now()` starts a held
 * write at once.
 */
export function heldWrite(write: () => Promise<void>, delayMs: number): { request(): Promise<void>; now(): void } {
  let timer: NodeJS.Timeout | undefined;
  let waiting: { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } | undefined;
  const start = () => {
    clearTimeout(timer);
    timer = undefined;
    const started = waiting;
    waiting = undefined;
    if (started) write().then(started.resolve, started.reject);
  };
  return {
    request() {
      if (!waiting) {
        let resolve!: () => void;
        let reject!: (err: unknown) => void;
        const promise = new Promise<void>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        waiting = { promise, resolve, reject };
        timer = setTimeout(start, delayMs);
        timer.unref();
      }
      return waiting.promise;
    },
    now: start,
  };
}

/** A turn's row as both databases hold it. */
export interface TimelineRow {
  id: string;
  owner: string;
  task_id: string | null;
  session_id: string;
  replica: string | null;
  started_at: string;
  ms: number | null;
  status: string | null;
  agent: string | null;
  asked: string | null;
  error: string | null;
  steps: string;
  /** The model exchanges as JSON: written with the turn, selected only by a read of one turn. */
  exchanges?: string | null;
}

/**
 * The row of a turn, stamped with the replica writing it; its exchanges as
 * `SharedPrompts.exchangesJson` (`timelinePrompts.ts`) wrote them (shared prompts by digest).
 */
export function timelineRow(turn: TaskTimeline, replica: string | undefined, exchanges: string | null): TimelineRow {
  return {
    id: turn.id,
    owner: turn.caller,
    task_id: turn.taskId ?? null,
    session_id: turn.sessionId,
    replica: replica ?? null,
    started_at: turn.startedAt,
    ms: turn.ms ?? null,
    status: turn.status ?? null,
    agent: turn.agent ?? null,
    asked: turn.asked ?? null,
    error: turn.error ?? null,
    steps: JSON.stringify(turn.steps),
    exchanges,
  };
}

/** A JSON array column's items; a column that is not a JSON array reads as none. */
function arrayColumn<T>(text: string | null | undefined): T[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    // A row that is not JSON keeps its turn; only this column's items are lost.
    return [];
  }
}

/** The turn a row holds (an unreadable steps column reads as no steps); its exchanges when the read selected them. */
export function timelineOfRow(row: TimelineRow): TaskTimeline {
  const steps = arrayColumn<TimelineStep>(row.steps);
  return {
    id: row.id,
    ...(row.task_id !== null ? { taskId: row.task_id } : {}),
    sessionId: row.session_id,
    caller: row.owner,
    ...(row.asked !== null ? { asked: row.asked } : {}),
    ...(row.replica !== null ? { replica: row.replica } : {}),
    startedAt: row.started_at,
    ...(row.ms !== null ? { ms: Number(row.ms) } : {}),
    ...(row.status !== null ? { status: row.status } : {}),
    ...(row.agent !== null ? { agent: row.agent } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    steps,
    ...(row.exchanges !== undefined ? { exchanges: arrayColumn<ModelExchange>(row.exchanges) } : {}),
  };
}

/** Columns a listing reads, in the order both databases insert them (the row's exchanges follow them). */
export const TIMELINE_COLUMNS = [
  'id',
  'owner',
  'task_id',
  'session_id',
  'replica',
  'started_at',
  'ms',
  'status',
  'agent',
  'asked',
  'error',
  'steps',
] as const;
