/**
 * The console's script (compiled by `npm run build` to dist/console; no
 * framework; elkjs, the one library, is loaded by the agents view). It
 * switches between the shell's five views (chat, tasks, agents, tools,
 * memory) as tabs, follows the address (`#view=…`, deep links at any time),
 * keeps the open view live over `/console/api/events` (this replica's turns)
 * and a short poll (other replicas' tasks, peers' health, heartbeats), and
 * starts each view's part.
 */
import { loadAgents, loadPeers, loadReplicas, openAgent, startAgents } from './agents.js';
import { chatActingOn, loadChatAgents, openConversation, startChat, startSignIn } from './chat.js';
import { loadConversations } from './conversations.js';
import { byId } from './dom.js';
import { loadCallers, startMemory } from './memory.js';
import { go, startRouting, VIEWS, type Route, type View } from './route.js';
import { loadTasks, startTasks } from './tasks.js';
import { loadTools, openTool, startTools } from './tools.js';
import { refreshTurns, showTurns } from './turns.js';

/** How often the open view is read again besides the live stream (other replicas, peers' health). */
const POLL_MS = 5000;

interface Change {
  what: 'turn' | 'step' | 'end';
  taskId?: string;
  agent?: string;
}

let current: View | undefined;

/** Reads what the view shows. */
function load(view: View): void {
  if (view === 'chat') void Promise.all([loadConversations(), loadChatAgents()]);
  else if (view === 'tasks') void loadTasks();
  else if (view === 'agents') void Promise.all([loadAgents(), loadPeers(), loadReplicas()]);
  else if (view === 'tools') void loadTools();
  else void loadCallers();
}

/** Shows one view and marks its tab. */
function show(view: View): void {
  const changed = view !== current;
  current = view;
  for (const name of VIEWS) {
    const tab = byId(`tab-${name}`);
    const selected = name === view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    byId(`view-${name}`).hidden = !selected;
  }
  if (changed) load(view);
}

/** Follows the address: the view, then what it names. */
function follow({ view, params }: Route): void {
  show(view);
  const caller = params.get('caller') ?? undefined;
  if (view === 'tasks') {
    const task = params.get('task') ?? undefined;
    const turn = params.get('turn') ?? undefined;
    const step = params.get('step');
    void showTurns({ task, turn, step: step === null ? undefined : Number(step), replay: params.has('replay') });
  } else if (view === 'chat') {
    const conversation = params.get('conversation');
    if (conversation) void openConversation(conversation, caller ?? 'owner');
  } else if (view === 'agents') {
    const agent = params.get('agent');
    if (agent) void openAgent(agent);
  } else if (view === 'tools') {
    const tool = params.get('tool');
    if (tool) void openTool(tool);
  } else if (caller) {
    void loadCallers(caller);
  }
}

/** The tabs: click or Enter, arrow keys, Home and End (WAI-ARIA tabs pattern); each goes to its view's address. */
function startTabs(): void {
  for (const name of VIEWS) {
    const tab = byId(`tab-${name}`);
    tab.addEventListener('click', () => go(name));
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
      go(to);
      byId(`tab-${to}`).focus();
    });
  }
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
      refreshTurns(change.taskId);
    } else if (current === 'chat' && change.what !== 'step') void loadConversations();
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
  startChat();
  startTasks();
  startAgents();
  startTools();
  startMemory();
  startTabs();
  startRouting(follow);
  live();
}

if (document.body.dataset.view === 'console') startConsole();
else if (document.body.dataset.view === 'signin') startSignIn();
