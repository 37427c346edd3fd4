/**
 * The console's script (compiled by `npm run build` to dist/console; no
 * framework; elkjs, the one library, is loaded by the agents view). It
 * switches between the shell's five views (chat, tasks, agents, tools,
 * memory) as tabs, keeps the open view live over `/console/api/events`
 * (this replica's turns) and a short poll (other replicas' tasks, peers'
 * health, heartbeats), and starts each view's part.
 */
import { loadAgents, loadPeers, loadReplicas, startAgents } from './agents.js';
import { chatActingOn, loadConversations, startChat, startSignIn } from './chat.js';
import { byId } from './dom.js';
import { loadCallers, startMemory } from './memory.js';
import { loadTasks, openTimeline, refreshTimeline, startTasks } from './tasks.js';
import { loadTools, startTools } from './tools.js';

const VIEWS = ['chat', 'tasks', 'agents', 'tools', 'memory'] as const;
type View = (typeof VIEWS)[number];
/** How often the open view is read again besides the live stream (other replicas, peers' health). */
const POLL_MS = 5000;

interface Change {
  what: 'turn' | 'step' | 'end';
  taskId?: string;
  agent?: string;
}

let current: View = 'chat';

const isView = (name: string): name is View => (VIEWS as readonly string[]).includes(name);

/** Reads what the view shows. */
function load(view: View): void {
  if (view === 'chat') void loadConversations();
  else if (view === 'tasks') void loadTasks();
  else if (view === 'agents') void Promise.all([loadAgents(), loadPeers(), loadReplicas()]);
  else if (view === 'tools') void loadTools();
  else void loadCallers();
}

/** Shows one view and marks its tab (`focus`: the tab takes the focus, as arrow keys move it). */
function show(view: View, focus = false): void {
  current = view;
  for (const name of VIEWS) {
    const tab = byId(`tab-${name}`);
    const selected = name === view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    byId(`view-${name}`).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  if (location.hash !== `#${view}`) history.replaceState(null, '', `#${view}`);
  load(view);
}

/** The tabs: click or Enter, arrow keys, Home and End (WAI-ARIA tabs pattern). */
function startTabs(): void {
  for (const name of VIEWS) {
    const tab = byId(`tab-${name}`);
    tab.addEventListener('click', () => show(name));
    tab.addEventListener('keydown', (event) => {
      const at = VIEWS.indexOf(name);
      const to =
        event.key === 'ArrowRight'
          ? VIEWS[(at + 1) % VIEWS.length]
          : event.key === 'ArrowLeft'
            ? VIEWS[(at - 1 + VIEWS.length) % VIEWS.length]
            : event.key === 'Home'
              ? VIEWS[0]
              : event.key === 'End'
                ? VIEWS[VIEWS.length - 1]
                : undefined;
      if (!to) return;
      event.preventDefault();
      show(to, true);
    });
  }
  document.addEventListener('console:view', (event) => {
    const view = (event as CustomEvent<string>).detail;
    if (isView(view) && view !== current) show(view);
  });
  const asked = location.hash.slice(1);
  show(isView(asked) ? asked : 'chat');
}

/** Live updates: each change refreshes the open view, at most every 200 ms. */
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
function onChange(change: Change): void {
  if (change.what === 'step') chatActingOn(change.taskId, change.agent);
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    if (current === 'tasks') {
      void loadTasks();
      refreshTimeline(change.taskId);
    }
  }, 200);
}

function live(): void {
  const status = byId('live');
  const events = new EventSource('/console/api/events');
  let connected = false;
  events.addEventListener('ready', () => {
    status.textContent = 'live';
    // After a reconnect the changes missed meanwhile are read again: the open view refreshes in place.
    if (connected) onChange({ what: 'turn' });
    connected = true;
  });
  events.addEventListener('change', (event) => onChange(JSON.parse((event as MessageEvent<string>).data) as Change));
  events.addEventListener('error', () => (status.textContent = 'reconnecting…'));
  setInterval(() => {
    if (document.hidden) return;
    if (current === 'tasks') void loadTasks();
    else if (current === 'agents') void Promise.all([loadPeers(), loadReplicas()]);
  }, POLL_MS);
}

function startConsole(): void {
  startChat(openTimeline);
  startTasks();
  startAgents();
  startTools();
  startMemory();
  startTabs();
  live();
}

if (document.body.dataset.view === 'console') startConsole();
else if (document.body.dataset.view === 'signin') startSignIn();
