import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { messageText } from '../a2a/tasks/messages';
import { INTERRUPTED_REPLICA_KEY, type TaskRows } from '../store/taskRows';
import type { TaskTimeline, TimelineQuery } from '../store/timelines';

/** One row of the console's task list. */
export interface TaskSummary {
  taskId?: string;
  sessionId?: string;
  caller: string;
  /** What the user asked (the task's first turn known), redacted and shortened. */
  asked?: string;
  /** The replica that ran the latest turn, runs it now, or ran it when it was lost (PostgreSQL). */
  replica?: string;
  /** Why a task failed, was rejected or canceled, as its status says (`replica lost`, `node restarted`, …). */
  reason?: string;
  /** The turn's own id (its waterfall, inspector and replay open by it). */
  turnId?: string;
  /** The A2A state in kebab case (`working`, `completed`, `input-required`, …). */
  state: string;
  agent?: string;
  /** When the latest turn started, or (a stored task without a timeline here) when its status last changed. */
  startedAt: string;
  ms?: number;
  steps?: number;
  /** Whether a timeline of the task is stored (the list links to it). */
  timeline: boolean;
}

/** What the list is filtered by: a state name of {@link STATE_NAMES}, a caller's principal id (exact). */
export interface TaskFilter {
  state?: string;
  caller?: string;
}

/** The console's state names and the A2A states they stand for. */
const STATE_NAMES: Record<string, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
  rejected: TaskState.TASK_STATE_REJECTED,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  'auth-required': TaskState.TASK_STATE_AUTH_REQUIRED,
};
const NAME_OF_STATE = new Map(Object.entries(STATE_NAMES).map(([name, state]) => [state, name]));

/** Whether `name` is a state the list can be filtered by. */
export const isTaskStateName = (name: string) => Object.hasOwn(STATE_NAMES, name);

/** How many stored tasks one request lists (the newest). */
const LISTED = 50;

/**
 * The console's task list: the stored A2A tasks (every caller's, read as
 * the owner from the node's task rows, so older tasks and, in a cluster,
 * other replicas' tasks show), newest first, each with its latest turn's
 * timeline (stored, so every replica and a restarted node read it: what was
 * asked, the agent, how long it took, the replica); a turn without a stored
 * task (a CLI turn, a console tool run, a task not yet written) is listed
 * from its timeline.
 * @example
 * await listConsoleTasks(storage.taskRows.tasks, (q) => timelines.turns(q), { state: 'completed', caller: 'owner' });
 */
export async function listConsoleTasks(
  rows: TaskRows | undefined,
  turnsOf: (query: TimelineQuery) => Promise<TaskTimeline[]>,
  filter: TaskFilter,
): Promise<TaskSummary[]> {
  const scope = filter.caller;
  const reader = { tenant: '', owner: scope ?? '', everyone: scope === undefined };
  const page = rows
    ? await rows.list(reader, {
        state: filter.state ? STATE_NAMES[filter.state] : undefined,
        pageSize: LISTED,
        includeArtifacts: false,
        includeHistory: false,
      })
    : undefined;
  const ids = page?.tasks.map((task) => task.id) ?? [];
  const [ofListed, recent] = await Promise.all([
    turnsOf({ taskIds: ids, limit: LISTED * TURNS_PER_TASK }),
    turnsOf({ limit: LISTED, ...(filter.caller !== undefined ? { caller: filter.caller } : {}) }),
  ]);
  const byId = new Map([...ofListed, ...recent].map((turn) => [turn.id, turn]));
  const latest = summarise([...byId.values()].sort((a, b) => b.startedAt.localeCompare(a.startedAt)));
  const byTask = new Map(latest.flatMap((turn) => (turn.taskId ? [[turn.taskId, turn] as const] : [])));
  const listed: TaskSummary[] = [];
  const stored = new Set<string>();
  for (const task of page?.tasks ?? []) {
    stored.add(task.id);
    const turn = byTask.get(task.id);
    // The page does not say whose a task is, nor where it runs: the timeline does, else the row read by id.
    const row = turn ? undefined : await rows!.get(reader, task.id);
    const caller = filter.caller ?? turn?.caller ?? row?.scope.owner ?? '';
    const state = NAME_OF_STATE.get(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED) ?? 'unknown';
    const replica = turn?.replica ?? interruptedOn(task) ?? row?.replica;
    const reason = ENDED_BADLY.has(state) ? statusText(task) : undefined;
    // A task whose turn left no timeline (lost with its replica) says what it was asked from its own history.
    const asked = turn?.asked ?? firstAsked(row?.task);
    listed.push({
      ...turn,
      ...(asked !== undefined ? { asked } : {}),
      taskId: task.id,
      caller,
      state,
      ...(replica !== undefined ? { replica } : {}),
      ...(reason ? { reason } : {}),
      startedAt: turn?.startedAt ?? task.status?.timestamp ?? new Date(0).toISOString(),
      timeline: turn !== undefined,
    });
  }
  for (const turn of latest) {
    if (turn.taskId && stored.has(turn.taskId)) continue;
    if (filter.state && turn.state !== filter.state) continue;
    if (filter.caller !== undefined && turn.caller !== filter.caller) continue;
    // A task filtered out of the page by state is stored with another state: its turn is not listed either.
    if (turn.taskId && rows && filter.state && (await rows.get(everyone, turn.taskId))) continue;
    listed.push(turn);
  }
  return listed.sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, LISTED);
}

/** States whose status message says why. */
const ENDED_BADLY = new Set(['failed', 'rejected', 'canceled']);

/** A task's status message, the reason it ended (shortened). */
function statusText(task: Task): string | undefined {
  const message = task.status?.message;
  if (!message) return undefined;
  return shortened(messageText(message).trim());
}

/** What a stored task was first asked (the first user message of its history), shortened. */
function firstAsked(task: Task | undefined): string | undefined {
  const message = task?.history.find((m) => m.role === Role.ROLE_USER);
  return message ? shortened(messageText(message).trim()) : undefined;
}

const shortened = (text: string) => (text.length > 240 ? `${text.slice(0, 240)}…` : text || undefined);

/** The replica an interrupted task ran on, as its failed status names it. */
function interruptedOn(task: Task): string | undefined {
  const named = task.status?.message?.metadata?.[INTERRUPTED_REPLICA_KEY];
  return typeof named === 'string' ? named : undefined;
}

/** Turns read per listed task at most (a task is answered again for each message its user sends it). */
const TURNS_PER_TASK = 4;

const everyone = { tenant: '', owner: '', everyone: true };

/**
 * Each task's (or task-less turn's) latest turn, newest first, with the
 * state named as A2A names it and what the task's first turn here asked.
 */
export function summarise(turns: readonly TaskTimeline[]): TaskSummary[] {
  const byTask = new Map<string, TaskSummary>();
  const tasks: TaskSummary[] = [];
  for (const turn of turns) {
    const earlier = turn.taskId ? byTask.get(turn.taskId) : undefined;
    if (earlier) {
      // An older turn of a listed task: what it asked is what the task was asked.
      if (turn.asked !== undefined) earlier.asked = turn.asked;
      continue;
    }
    const summary: TaskSummary = {
      turnId: turn.id,
      taskId: turn.taskId,
      sessionId: turn.sessionId,
      caller: turn.caller,
      ...(turn.asked !== undefined ? { asked: turn.asked } : {}),
      ...(turn.replica !== undefined ? { replica: turn.replica } : {}),
      state: turnState(turn),
      agent: turn.agent,
      startedAt: turn.startedAt,
      ms: turn.ms,
      steps: turn.steps.length,
      timeline: true,
    };
    if (turn.taskId) byTask.set(turn.taskId, summary);
    tasks.push(summary);
  }
  return tasks;
}

/** A turn's outcome as a task state: running is working, an aborted turn failed. */
function turnState(turn: TaskTimeline): string {
  if (turn.ms === undefined) return 'working';
  const status = turn.status ?? 'completed';
  return status === 'aborted' ? 'failed' : status;
}
