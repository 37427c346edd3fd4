/**
 * The console's script (compiled by `npm run build` to dist/console/console.js;
 * no framework, no third party). It fills the shell's four regions from
 * `/console/api`, keeps them live over `/console/api/events`, and chats with
 * the node over its own A2A endpoint (JSON-RPC `SendStreamingMessage`).
 */
export {};

/** Where the owner's token for the A2A endpoint is kept for this tab (the console pages use their cookie). */
const TOKEN_KEY = 'lango-owner-token';
/**
 * The node's generation extension (`src/protocol/generation.ts`, a separate bundle): activated, each chat event
 * carries an SSE id, and a stream that drops is taken up after the last one (SubscribeToTask, Last-Event-ID).
 */
const GENERATION_EXTENSION = 'https://lango.dev/a2a/ext/generation/v1';
/** How often a dropped chat stream is taken up again before the chat says it lost the answer. */
const RESUMES = 5;

interface GraphAgent {
  name: string;
  kind: 'llm' | 'remote';
  detail: string[];
  health?: { state: string; reason?: string };
  cardUrl?: string;
}
interface AgentGraph {
  root: string;
  agents: GraphAgent[];
}
interface TaskSummary {
  taskId?: string;
  caller: string;
  state: string;
  agent?: string;
  startedAt: string;
  ms?: number;
  /** Whether this replica holds the task's timeline. */
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
  startedAt: string;
  ms?: number;
  status?: string;
  agent?: string;
  error?: string;
  steps: TimelineStep[];
}
interface Change {
  what: 'turn' | 'step' | 'end';
  taskId?: string;
  agent?: string;
}

interface Part {
  text?: string;
}
interface Status {
  state?: string;
  message?: { parts?: Part[] };
}
/** One frame of the A2A stream (ProtoJSON `StreamResponse` in a JSON-RPC response). */
interface Frame {
  result?: {
    task?: { id: string; contextId?: string; status?: Status };
    statusUpdate?: { taskId: string; contextId?: string; status?: Status; metadata?: Record<string, unknown> };
    artifactUpdate?: {
      taskId: string;
      contextId?: string;
      append?: boolean;
      artifact?: { parts?: Part[]; metadata?: Record<string, unknown> };
    };
    message?: { parts?: Part[] };
  };
  error?: { message?: string };
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** Builds an element with text and attributes (never HTML from data). */
function el(tag: string, text?: string, attributes: Record<string, string> = {}): HTMLElement {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** A GET under /console/api; a refusal (expired session) reloads into the sign-in or refusal page. */
async function api(path: string): Promise<Response> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (res.status === 401 || res.status === 403) {
    location.assign('/console');
    throw new Error(`refused: ${res.status}`);
  }
  return res;
}

const took = (ms?: number) => (ms === undefined ? '…' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

// Agents: the server's SVG, each agent a focusable button opening its card or detail.
let graph: AgentGraph | undefined;

async function loadAgents(): Promise<void> {
  const [json, svg] = await Promise.all([api('/console/api/agents'), api('/console/api/agents.svg')]);
  graph = (await json.json()) as AgentGraph;
  const holder = byId('graph');
  // The node's own SVG, built with every label escaped.
  holder.innerHTML = await svg.text();
  // A picture of buttons, not an image: an `img` role would hide the agents from assistive technology.
  holder.querySelector('svg')?.setAttribute('role', 'group');
  for (const node of holder.querySelectorAll<SVGGElement>('g.agent')) {
    node.addEventListener('click', () => void openAgent(node.dataset.agent ?? ''));
    node.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        void openAgent(node.dataset.agent ?? '');
      }
    });
  }
}

async function openAgent(name: string): Promise<void> {
  const agent = graph?.agents.find((a) => a.name === name);
  const panel = byId('card');
  byId('card-title').textContent = agent?.kind === 'remote' ? `Card of ${name}` : name;
  let body: string;
  if (agent?.kind === 'remote') {
    const res = await api(`/console/api/agents/${encodeURIComponent(name)}/card`);
    const health = agent.health ? `${agent.health.state}${agent.health.reason ? `: ${agent.health.reason}` : ''}` : '';
    body = `health: ${health}\n` + (res.ok ? await res.text() : `no card held (${res.status})`);
  } else if (agent) {
    body = `specialist; tool families: ${agent.detail.join(', ') || 'none'}`;
  } else {
    body = `orchestrator over ${graph?.agents.length ?? 0} agents`;
  }
  byId('card-body').textContent = body;
  panel.hidden = false;
  byId<HTMLButtonElement>('card-close').focus();
}

// Tasks and the chosen task's timeline.
let selectedTask: string | undefined;

async function loadTasks(): Promise<void> {
  const state = byId<HTMLSelectElement>('filter-state').value;
  const caller = byId<HTMLInputElement>('filter-caller').value.trim();
  const query = new URLSearchParams({ ...(state ? { state } : {}), ...(caller ? { caller } : {}) });
  const { tasks } = (await (await api(`/console/api/tasks?${query}`)).json()) as { tasks: TaskSummary[] };
  const rows = byId('task-rows');
  rows.replaceChildren(
    ...tasks.map((task) => {
      const row = el('tr', undefined, { 'data-task': task.taskId ?? '' });
      const cell = el('td');
      if (task.taskId && !task.timeline) {
        cell.append(el('span', task.taskId.slice(0, 8), { title: task.taskId }), ' ');
        cell.append(el('span', 'no timeline on this replica', { class: 'muted' }));
      } else if (task.taskId) {
        const open = el('button', task.taskId.slice(0, 8), {
          type: 'button',
          'aria-label': `Timeline of task ${task.taskId}`,
        });
        open.addEventListener('click', () => void showTimeline(task.taskId!));
        cell.append(open);
      } else cell.textContent = '—';
      row.append(
        cell,
        el('td', task.state, { class: `state ${task.state}` }),
        el('td', task.caller),
        el('td', task.agent ?? ''),
        el('td', new Date(task.startedAt).toLocaleTimeString()),
        el('td', took(task.ms)),
      );
      if (task.taskId === selectedTask) row.classList.add('selected');
      return row;
    }),
  );
}

async function showTimeline(taskId: string): Promise<void> {
  selectedTask = taskId;
  const res = await api(`/console/api/timelines/${encodeURIComponent(taskId)}`);
  const rows = byId('timeline-rows');
  if (!res.ok) {
    byId('timeline-empty').textContent = `No timeline kept for task ${taskId}.`;
    return;
  }
  const { turns } = (await res.json()) as { turns: TaskTimeline[] };
  byId('timeline-title').textContent = `Timeline of task ${taskId.slice(0, 8)}`;
  const lines: HTMLElement[] = [];
  for (const turn of [...turns].reverse()) {
    const head = el('tr', undefined, { class: 'turn' });
    const outcome = `${turn.status ?? 'running'}${turn.agent ? `, answered by ${turn.agent}` : ''}`;
    head.append(el('td', '0 ms'), el('td', `turn for ${turn.caller}: ${outcome}`, { colspan: '2' }));
    head.append(el('td', took(turn.ms)), el('td', ''), el('td', turn.error ?? ''));
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

// Chat over the node's own A2A endpoint, streamed.
let contextId: string | undefined;
let chatTask: string | undefined;
let chatActing: HTMLElement | undefined;

const stateName = (state: unknown) =>
  typeof state === 'string'
    ? state
        .replace(/^TASK_STATE_/, '')
        .toLowerCase()
        .replace(/_/g, '-')
    : '';
/** States after which a task's turn is over (ended, or waiting for the user). */
const SETTLED_STATES = new Set(['completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required']);
const partsText = (parts?: Part[]) => (parts ?? []).map((p) => p.text ?? '').join('');

async function chat(text: string): Promise<void> {
  const authRequired = document.body.dataset.auth === 'true';
  const tokenInput = byId<HTMLInputElement>('chat-token');
  if (tokenInput.value) sessionStorage.setItem(TOKEN_KEY, tokenInput.value);
  const token = sessionStorage.getItem(TOKEN_KEY);
  const turn = el('div', undefined, { class: 'exchange' });
  const answer = el('p', '', { class: 'answer', 'data-chunks': '0', 'data-state': 'sent' });
  const acting = el('p', 'waiting for the orchestrator…', { class: 'acting muted' });
  turn.append(el('p', `You: ${text}`, { class: 'you' }), answer, acting);
  byId('chat-log').append(turn);
  chatActing = acting;
  chatTask = undefined;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'text/event-stream',
    'A2A-Version': '1.0',
    'A2A-Extensions': GENERATION_EXTENSION,
  };
  if (authRequired && token) headers.Authorization = `Bearer ${token}`;
  const message = {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(contextId ? { contextId } : {}),
  };
  const res = await fetch('/', {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message } }),
  });
  if (!res.ok || !res.body) {
    answer.dataset.state = 'failed';
    answer.textContent = `The node refused the message (HTTP ${res.status}).`;
    if (res.status === 401) showTokenInput();
    return;
  }
  let chunks = 0;
  let answeredBy = '';
  let closed = false;
  // The closing line is written once the task settles: live timeline updates no longer rewrite it after that.
  const close = () => {
    if (closed) return;
    closed = true;
    if (chatActing === acting) chatActing = undefined;
    acting.textContent = `${answer.dataset.state ?? ''}${answeredBy ? ` · answered by ${answeredBy}` : ''}`;
    if (chatTask) acting.append(' · ', taskLink(chatTask));
  };
  const handle = (frame: Frame) => {
    if (frame.error) {
      answer.dataset.state = 'failed';
      answer.textContent = `Error: ${frame.error.message ?? 'unknown'}`;
      return;
    }
    const result = frame.result ?? {};
    const task = result.task ?? result.statusUpdate ?? result.artifactUpdate;
    chatTask = result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId ?? chatTask;
    contextId = task?.contextId ?? contextId;
    if (result.artifactUpdate) {
      const update = result.artifactUpdate;
      const piece = partsText(update.artifact?.parts);
      if (!update.append) answer.textContent = '';
      answer.textContent += piece;
      if (piece) answer.dataset.chunks = String(++chunks);
      const agent = update.artifact?.metadata?.agent;
      if (typeof agent === 'string') {
        answeredBy = agent;
        acting.textContent = `${agent} is answering`;
      }
    }
    const status = result.statusUpdate?.status ?? result.task?.status;
    const settledBy = result.statusUpdate?.metadata?.agent;
    if (typeof settledBy === 'string') answeredBy = settledBy;
    if (status) {
      answer.dataset.state = stateName(status.state);
      const said = partsText(status.message?.parts);
      if (said && !answer.textContent) answer.textContent = said;
      if (SETTLED_STATES.has(answer.dataset.state)) close();
    }
    if (result.message) answer.textContent = partsText(result.message.parts);
  };
  const seen: { lastId?: string } = {};
  await readFrames(res.body, handle, seen);
  // The connection dropped before the turn ended: take the stream up after the last event (no reload, no gap).
  for (let attempt = 1; !closed && chatTask && attempt <= RESUMES; attempt++) {
    acting.textContent = 'connection lost: resuming…';
    await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    const resumed = await fetch('/', {
      method: 'POST',
      headers: seen.lastId ? { ...headers, 'Last-Event-ID': seen.lastId } : headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: chatTask } }),
    }).catch(() => undefined);
    if (resumed?.ok && resumed.body) await readFrames(resumed.body, handle, seen);
  }
  close();
}

/** Reads an SSE body frame by frame into `handle`, noting each event's id; a dropped connection just ends it. */
async function readFrames(
  body: NonNullable<Response['body']>,
  handle: (frame: Frame) => void,
  seen: { lastId?: string },
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const lines = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        const data = lines
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        const id = lines.find((line) => line.startsWith('id:'));
        if (id) seen.lastId = id.slice(3).trim();
        if (data) handle(JSON.parse(data) as Frame);
      }
    }
  } catch {
    // The connection dropped: the caller takes the stream up again.
  }
}

function taskLink(taskId: string): HTMLElement {
  const open = el('button', 'show timeline', { type: 'button', class: 'link' });
  open.addEventListener('click', () => void showTimeline(taskId));
  return open;
}

function showTokenInput(): void {
  byId('chat-token-label').hidden = false;
  byId('chat-token').hidden = false;
}

// Live updates: each change refreshes the list (and the open timeline), at most every 200 ms.
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
function onChange(change: Change): void {
  if (change.agent && change.taskId && change.taskId === chatTask && chatActing && change.what === 'step') {
    chatActing.textContent = `${change.agent} is acting`;
  }
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    void loadTasks();
    if (selectedTask && (!change.taskId || change.taskId === selectedTask)) void showTimeline(selectedTask);
  }, 200);
}

function live(): void {
  const status = byId('live');
  const events = new EventSource('/console/api/events');
  let connected = false;
  events.addEventListener('ready', () => {
    status.textContent = 'live: updates stream as tasks run';
    // After a reconnect the changes missed meanwhile are read again: the list and the open timeline refresh in place.
    if (connected) {
      void loadTasks();
      if (selectedTask) void showTimeline(selectedTask);
    }
    connected = true;
  });
  events.addEventListener('change', (event) => onChange(JSON.parse((event as MessageEvent<string>).data) as Change));
  events.addEventListener('error', () => (status.textContent = 'reconnecting…'));
}

function startConsole(): void {
  if (document.body.dataset.auth === 'true' && !sessionStorage.getItem(TOKEN_KEY)) showTokenInput();
  byId('card-close').addEventListener('click', () => {
    byId('card').hidden = true;
  });
  byId('filter-state').addEventListener('change', () => void loadTasks());
  byId('filter-caller').addEventListener('input', () => void loadTasks());
  byId('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId<HTMLInputElement>('chat-input');
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    const send = byId<HTMLButtonElement>('chat-send');
    send.disabled = true;
    chat(text)
      .catch((err: unknown) => {
        byId('chat-log').append(el('p', `The chat failed: ${String(err)}`, { class: 'error', role: 'alert' }));
      })
      .finally(() => {
        send.disabled = false;
        input.focus();
      });
  });
  void loadAgents();
  void loadTasks();
  live();
}

/** The sign-in form keeps the typed token for this tab's chat (the A2A endpoint takes a bearer header, not the cookie). */
function startSignIn(): void {
  byId('signin').addEventListener('submit', () => {
    sessionStorage.setItem(TOKEN_KEY, byId<HTMLInputElement>('token').value.trim());
  });
}

if (document.body.dataset.view === 'console') startConsole();
else if (document.body.dataset.view === 'signin') startSignIn();
