/**
 * The console's task table (what was asked, state and why it ended badly,
 * agent, caller, replica, when and how long), read from the node's stored
 * tasks and timelines: every replica's, and older tasks after a restart.
 * A task (or a turn without a task: a CLI turn, a tool run, a replay)
 * opens its turns as waterfalls by its address.
 */
import { byId, el, getJson, showError, took } from './dom.js';
import { currentRoute, linkTo } from './route.js';

interface TaskSummary {
  taskId?: string;
  turnId?: string;
  sessionId?: string;
  caller: string;
  asked?: string;
  replica?: string;
  reason?: string;
  state: string;
  agent?: string;
  startedAt: string;
  ms?: number;
  /** Whether a timeline of the task is stored. */
  timeline: boolean;
}

/** The task list as the filters ask. */
export async function loadTasks(): Promise<void> {
  const state = byId<HTMLSelectElement>('filter-state').value;
  const caller = byId<HTMLInputElement>('filter-caller').value.trim();
  const query = new URLSearchParams({ ...(state ? { state } : {}), ...(caller ? { caller } : {}) });
  const rows = byId('task-rows');
  let tasks: TaskSummary[];
  try {
    ({ tasks } = await getJson<{ tasks: TaskSummary[] }>(`/console/api/tasks?${query}`));
  } catch (err) {
    const cell = el('td', undefined, { colspan: '7' });
    showError(cell, err);
    rows.replaceChildren(el('tr').appendChild(cell).parentElement!);
    return;
  }
  rows.replaceChildren(...tasks.map(taskRow));
  if (tasks.length === 0) {
    rows.replaceChildren(
      el('tr').appendChild(el('td', 'No task matches.', { colspan: '7', class: 'muted' })).parentElement!,
    );
  }
  markSelected();
}

/** One row: what was asked (a link to its turns when a timeline is stored), then its state and the rest. */
function taskRow(task: TaskSummary): HTMLElement {
  const row = el('tr', undefined, { 'data-task': task.taskId ?? '', 'data-turn': task.turnId ?? '' });
  const asked = el('td', undefined, { class: 'asked' });
  const words = task.asked ?? (task.taskId ? `task ${task.taskId.slice(0, 8)}` : '—');
  const replay = task.sessionId?.startsWith('replay:');
  if (task.timeline && (task.taskId || task.turnId)) {
    const href = task.taskId ? linkTo('tasks', { task: task.taskId }) : linkTo('tasks', { turn: task.turnId });
    asked.append(
      el('a', words, {
        href,
        class: 'open-task',
        'aria-label': `${task.taskId ? `Turns of task ${task.taskId}` : `Turn ${task.turnId}`}: ${words}`,
      }),
    );
    if (replay) asked.append(' ', el('span', 'replay', { class: 'badge replay' }));
  } else {
    asked.append(el('span', words, task.taskId ? { title: task.taskId } : {}));
    // A turn ends before its timeline is stored: a task lost with its replica has none (its state says why).
    if (task.taskId) asked.append(' ', el('span', '(no timeline stored)', { class: 'muted' }));
  }
  const state = el('td', undefined, { class: `state ${task.state}` });
  state.append(task.state);
  if (task.reason) state.append(el('span', task.reason, { class: 'reason small block' }));
  row.append(
    asked,
    state,
    el('td', task.agent ?? ''),
    el('td', task.caller),
    el('td', task.replica ?? '—', { class: 'replica' }),
    el('td', new Date(task.startedAt).toLocaleTimeString()),
    el('td', took(task.ms)),
  );
  return row;
}

/** Marks the row of the task or turn the address names. */
export function markSelected(): void {
  const { params } = currentRoute();
  const task = params.get('task');
  const turn = params.get('turn');
  for (const row of byId('task-rows').querySelectorAll<HTMLElement>('tr')) {
    const selected = task ? row.dataset.task === task : !!turn && row.dataset.turn === turn;
    row.classList.toggle('selected', selected);
  }
}

/** Wires the filters. */
export function startTasks(): void {
  byId('filter-state').addEventListener('change', () => void loadTasks());
  byId('filter-caller').addEventListener('input', () => void loadTasks());
}
