/**
 * The console's task table (what was asked, state, agent, caller, replica,
 * when and how long) and the chosen task's timeline, read from the node's
 * stored tasks and timelines: every replica's, and older tasks after a
 * restart.
 */
import { byId, el, getJson, showError, took } from './dom.js';

interface TaskSummary {
  taskId?: string;
  caller: string;
  asked?: string;
  replica?: string;
  state: string;
  agent?: string;
  startedAt: string;
  ms?: number;
  /** Whether a timeline of the task is stored. */
  timeline: boolean;
}
interface TimelineStep {
  kind: string;
  name: string;
  agent?: string;
  atMs: number;
  ms?: number;
  args?: string;
  result?: string;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  hops?: number;
}
interface TaskTimeline {
  caller: string;
  asked?: string;
  replica?: string;
  startedAt: string;
  ms?: number;
  status?: string;
  agent?: string;
  error?: string;
  steps: TimelineStep[];
}

let selectedTask: string | undefined;

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
    const cell = el('td', undefined, { colspan: '8' });
    showError(cell, err);
    rows.replaceChildren(el('tr').appendChild(cell).parentElement!);
    return;
  }
  rows.replaceChildren(
    ...tasks.map((task) => {
      const row = el('tr', undefined, { 'data-task': task.taskId ?? '' });
      const asked = el('td', undefined, { class: 'asked' });
      const words = task.asked ?? (task.taskId ? `task ${task.taskId.slice(0, 8)}` : '—');
      if (task.taskId && task.timeline) {
        const open = el('button', words, {
          type: 'button',
          class: 'link',
          'aria-label': `Timeline of task ${task.taskId}: ${words}`,
        });
        open.addEventListener('click', () => void showTimeline(task.taskId!));
        asked.append(open);
      } else {
        asked.append(el('span', words, task.taskId ? { title: task.taskId } : {}));
        if (task.taskId) asked.append(' ', el('span', '(no timeline stored)', { class: 'muted' }));
      }
      row.append(
        asked,
        el('td', task.state, { class: `state ${task.state}` }),
        el('td', task.agent ?? ''),
        el('td', task.caller),
        el('td', task.replica ?? '—'),
        el('td', new Date(task.startedAt).toLocaleTimeString()),
        el('td', took(task.ms)),
      );
      if (task.taskId === selectedTask) row.classList.add('selected');
      return row;
    }),
  );
  if (tasks.length === 0) {
    rows.replaceChildren(
      el('tr').appendChild(el('td', 'No task matches.', { colspan: '7', class: 'muted' })).parentElement!,
    );
  }
}

/** Shows the tasks view with a task's timeline (from the chat's "show timeline"). */
export function openTimeline(taskId: string): void {
  document.dispatchEvent(new CustomEvent('console:view', { detail: 'tasks' }));
  void showTimeline(taskId);
}

/** The steps of each turn of a task, oldest turn first. */
async function showTimeline(taskId: string): Promise<void> {
  selectedTask = taskId;
  const rows = byId('timeline-rows');
  let turns: TaskTimeline[];
  try {
    ({ turns } = await getJson<{ turns: TaskTimeline[] }>(`/console/api/timelines/${encodeURIComponent(taskId)}`));
  } catch {
    byId('timeline-empty').hidden = false;
    byId('timeline-empty').textContent = `No timeline stored for task ${taskId}.`;
    byId('timeline-table').hidden = true;
    return;
  }
  byId('timeline-title').textContent = `Timeline of task ${taskId.slice(0, 8)}`;
  const lines: HTMLElement[] = [];
  for (const turn of turns) {
    const head = el('tr', undefined, { class: 'turn' });
    const outcome = `${turn.status ?? 'running'}${turn.agent ? `, answered by ${turn.agent}` : ''}`;
    const where = turn.replica ? ` on ${turn.replica}` : '';
    head.append(
      el('td', new Date(turn.startedAt).toLocaleTimeString()),
      el('td', `turn for ${turn.caller}${where}: ${outcome}`, { colspan: '2' }),
    );
    head.append(el('td', took(turn.ms)), el('td', ''), el('td', turn.asked ? `“${turn.asked}”` : (turn.error ?? '')));
    lines.push(head);
    for (const step of turn.steps) {
      const row = el('tr', undefined, { class: `step ${step.kind}` });
      const tokens =
        step.inputTokens !== undefined || step.outputTokens !== undefined
          ? `${step.inputTokens ?? 0} in / ${step.outputTokens ?? 0} out`
          : step.hops !== undefined
            ? `${step.hops} ${step.hops === 1 ? 'hop' : 'hops'}`
            : '';
      const io = [step.args, step.result && `→ ${step.result}`, step.error && `error: ${step.error}`]
        .filter(Boolean)
        .join(' ');
      row.append(
        el('td', `${step.atMs} ms`),
        el('td', `${step.kind} ${step.name}`),
        el('td', step.agent ?? ''),
        el('td', took(step.ms)),
        el('td', tokens),
        el('td', io, { class: 'io' }),
      );
      lines.push(row);
    }
  }
  rows.replaceChildren(...lines);
  byId('timeline-empty').hidden = true;
  byId('timeline-table').hidden = false;
  for (const row of byId('task-rows').querySelectorAll('tr')) {
    row.classList.toggle('selected', row.getAttribute('data-task') === taskId);
  }
}

/** Refreshes the open timeline when its task changed (`undefined`: any task). */
export function refreshTimeline(taskId: string | undefined): void {
  if (selectedTask && (!taskId || taskId === selectedTask)) void showTimeline(selectedTask);
}

/** Wires the filters. */
export function startTasks(): void {
  byId('filter-state').addEventListener('change', () => void loadTasks());
  byId('filter-caller').addEventListener('input', () => void loadTasks());
}
