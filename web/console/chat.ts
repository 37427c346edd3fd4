/**
 * The console's chat: the owner talks to the node over its own A2A endpoint
 * (JSON-RPC `SendStreamingMessage`, the owner's session), to the
 * orchestrator or the agent chosen (a specialist, a remote agent), the
 * answer streaming in, rendered (markdown, JSON foldable); each transfer,
 * tool call, remote call and approval of the turn shows inline as a card,
 * an approval with Approve and Deny, and once the turn ends its tool
 * results in full and a link to inspect the turn; the log keeps the newest
 * exchange in view. Conversations reopen by their address.
 */
import { conversationName, loadConversations, markOpen, startConversations } from './conversations.js';
import { card, progressCard, turnDetails } from './chatCards.js';
import { ago, api, byId, button, el, getJson, showError } from './dom.js';
import { renderText } from './render.js';
import { go, linkTo } from './route.js';

/** Where the owner's token for the A2A endpoint is kept for this tab (the console pages use their cookie). */
export const TOKEN_KEY = 'lango-owner-token';
/**
 * The node's generation extension (`src/protocol/generation.ts`, a separate bundle): activated, each chat event
 * carries an SSE id, and a stream that drops is taken up after the last one (SubscribeToTask, Last-Event-ID).
 */
const GENERATION_EXTENSION = 'https://lango.dev/a2a/ext/generation/v1';
/** How often a dropped chat stream is taken up again before the chat says it lost the answer. */
const RESUMES = 5;
/** Message metadata naming the agent a turn starts at (`src/a2a/executor.ts` START_AGENT_KEY). */
const START_AGENT_KEY = 'lango.agent';
/** How often a streaming answer is rendered again at most (each chunk is kept; the drawing waits). */
const RENDER_MS = 80;

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
interface ConversationDetail {
  id: string;
  caller: string;
  messages: Array<{ role: string; text: string; author?: string; at: string }>;
  pendingApproval?: { agent: string; tool: string; question: string };
}

/** The conversation the chat continues (undefined: the next message starts one). */
let contextId: string | undefined;
/** The task waiting for the owner's answer (input-required): the next message answers it. */
let waitingTask: string | undefined;
/** The task of the exchange streaming now, and its line saying who acts. */
let chatTask: string | undefined;
let chatActing: HTMLElement | undefined;
/** The conversation shown (the owner's, or a caller's read only), as the address names it. */
let shown: { id: string; caller: string } | undefined;
/** Each answer's text as received: what it is rendered from. */
const answers = new WeakMap<HTMLElement, string>();

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

/** Keeps the newest reply in view. */
function scrollToNewest(): void {
  const log = byId('chat-log');
  log.scrollTop = log.scrollHeight;
}

/** Sets an answer's text and draws it rendered (markdown, JSON foldable); while it streams, at most every {@link RENDER_MS}. */
function setAnswer(answer: HTMLElement, text: string, now = true): void {
  answers.set(answer, text);
  if (now) {
    clearTimeout(Number(answer.dataset.timer));
    delete answer.dataset.timer;
    answer.replaceChildren(...(text ? [renderText(text)] : []));
    return;
  }
  if (answer.dataset.timer) return;
  answer.dataset.timer = String(setTimeout(() => setAnswer(answer, answers.get(answer) ?? ''), RENDER_MS));
}
const answerText = (answer: HTMLElement) => answers.get(answer) ?? '';

/** One exchange: the owner's words, the turn's cards, the answer and who gave it. */
function exchange(said: string): { turn: HTMLElement; cards: HTMLElement; answer: HTMLElement; acting: HTMLElement } {
  const turn = el('article', undefined, { class: 'exchange' });
  const you = el('div', undefined, { class: 'bubble you' });
  you.append(el('span', 'You', { class: 'who' }), el('p', said, { class: 'said' }));
  const cards = el('ol', undefined, { class: 'cards', 'aria-label': 'What the agents did' });
  const reply = el('div', undefined, { class: 'bubble agent' });
  const answer = el('div', undefined, { class: 'answer', 'data-chunks': '0', 'data-state': 'sent' });
  const acting = el('p', 'waiting for the orchestrator…', { class: 'acting muted' });
  reply.append(el('span', 'agent', { class: 'who' }), answer);
  turn.append(you, cards, reply, acting);
  byId('chat-log').append(turn);
  scrollToNewest();
  return { turn, cards, answer, acting };
}

/** The approval a turn waits for: the question, Approve and Deny (each sends the answer as the next message). */
function approvalCard(cards: HTMLElement, pending: NonNullable<ConversationDetail['pendingApproval']>): void {
  const item = card('approval', `${pending.agent} asks to run ${pending.tool}`, undefined, { 'data-state': 'pending' });
  item.append(el('pre', pending.question, { class: 'question' }));
  const actions = el('div', undefined, { class: 'actions' });
  const decide = (approve: boolean) => {
    for (const b of actions.querySelectorAll('button')) (b as HTMLButtonElement).disabled = true;
    item.dataset.state = approve ? 'approved' : 'denied';
    actions.append(el('span', approve ? 'approved' : 'denied', { class: 'muted' }));
    void send(approve ? 'yes' : 'no', approve ? 'Approved' : 'Denied');
  };
  actions.append(
    button('Approve', () => decide(true), { class: 'approve' }),
    button('Deny', () => decide(false), { class: 'deny' }),
  );
  item.append(actions);
  cards.append(item);
  scrollToNewest();
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

/** Sends `message` (shown as `said`) on the current conversation and streams the answer in. */
async function chat(message: string, said: string): Promise<void> {
  const authRequired = document.body.dataset.auth === 'true';
  const tokenInput = byId<HTMLInputElement>('chat-token');
  if (tokenInput.value) sessionStorage.setItem(TOKEN_KEY, tokenInput.value);
  const token = sessionStorage.getItem(TOKEN_KEY);
  const { cards, answer, acting } = exchange(said);
  chatActing = acting;
  chatTask = undefined;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'text/event-stream',
    'A2A-Version': '1.0',
    'A2A-Extensions': GENERATION_EXTENSION,
  };
  if (authRequired && token) headers.Authorization = `Bearer ${token}`;
  const agent = byId<HTMLSelectElement>('chat-agent').value;
  const a2aMessage = {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text: message }],
    ...(contextId ? { contextId } : {}),
    ...(contextId && waitingTask ? { taskId: waitingTask } : {}),
    ...(agent ? { metadata: { [START_AGENT_KEY]: agent } } : {}),
  };
  waitingTask = undefined;
  if (!contextId) byId('chat-title').textContent = said;
  const res = await fetch('/', {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: a2aMessage } }),
  });
  if (!res.ok || !res.body) {
    answer.dataset.state = 'failed';
    setAnswer(answer, `The node refused the message (HTTP ${res.status}).`);
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
  };
  const handle = (frame: Frame) => {
    if (frame.error) {
      answer.dataset.state = 'failed';
      setAnswer(answer, `Error: ${frame.error.message ?? 'unknown'}`);
      return;
    }
    const result = frame.result ?? {};
    const task = result.task ?? result.statusUpdate ?? result.artifactUpdate;
    chatTask = result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId ?? chatTask;
    if (!contextId && task?.contextId) {
      contextId = task.contextId;
      shown = { id: contextId, caller: 'owner' };
      // The address names the conversation from now on (without reopening it).
      history.replaceState(null, '', linkTo('chat', { conversation: contextId, caller: 'owner' }));
      markOpen(shown);
    }
    if (result.artifactUpdate) {
      const update = result.artifactUpdate;
      const piece = partsText(update.artifact?.parts);
      setAnswer(answer, (update.append ? answerText(answer) : '') + piece, false);
      if (piece) answer.dataset.chunks = String(++chunks);
      const agent = update.artifact?.metadata?.agent;
      if (typeof agent === 'string') {
        answeredBy = agent;
        acting.textContent = `${agent} is answering`;
      }
      scrollToNewest();
    }
    const metadata = result.statusUpdate?.metadata;
    if (metadata && typeof metadata.event === 'string') {
      progressCard(cards, metadata);
      scrollToNewest();
    }
    // The stream opens with the task as it stands: a task continued from input-required still says so then.
    const status = result.statusUpdate?.status;
    if (result.task && !SETTLED_STATES.has(stateName(result.task.status?.state))) {
      answer.dataset.state = stateName(result.task.status?.state);
    }
    const settledBy = metadata?.agent;
    if (typeof settledBy === 'string' && metadata?.event === undefined) answeredBy = settledBy;
    if (status) {
      const state = stateName(status.state);
      const settled = SETTLED_STATES.has(state);
      const spoken = partsText(status.message?.parts);
      // Drawn in full before the state says it settled: whoever waits for the state finds the answer there.
      if (settled) setAnswer(answer, answerText(answer) || spoken);
      answer.dataset.state = state;
      if (settled) close();
    }
    if (result.message) setAnswer(answer, partsText(result.message.parts));
    if (answeredBy) answer.parentElement!.querySelector('.who')!.textContent = answeredBy;
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
  if (answer.dataset.state === 'input-required') waitingTask = chatTask;
  if (answer.dataset.state === 'input-required' && contextId) {
    const detail = await getJson<ConversationDetail>(`/console/api/conversations/${encodeURIComponent(contextId)}`);
    if (detail.pendingApproval) {
      // The question is the approval card's: the answer line would only repeat it.
      answer.closest('.bubble')?.setAttribute('hidden', '');
      approvalCard(cards, detail.pendingApproval);
    }
  }
  if (chatTask) await turnDetails(chatTask, cards, acting);
  void loadConversations();
}

/** Sends one message from the form or an approval button, the send button held while it streams. */
async function send(message: string, said = message): Promise<void> {
  const sendButton = byId<HTMLButtonElement>('chat-send');
  sendButton.disabled = true;
  try {
    await chat(message, said);
  } catch (err) {
    byId('chat-log').append(el('p', `The chat failed: ${String(err)}`, { class: 'error', role: 'alert' }));
  } finally {
    sendButton.disabled = false;
    scrollToNewest();
  }
}

function showTokenInput(): void {
  byId('chat-token-label').hidden = false;
  byId('chat-token').hidden = false;
}

/**
 * Shows a conversation's messages (the address's `conversation` and
 * `caller`); the owner's becomes the one the chat continues, a caller's is
 * read only.
 */
export async function openConversation(id: string, caller: string): Promise<void> {
  if (shown?.id === id && shown.caller === caller) return;
  const res = await api(`/console/api/conversations/${encodeURIComponent(id)}?caller=${encodeURIComponent(caller)}`);
  const log = byId('chat-log');
  if (!res.ok) return showError(log, new Error(`the conversation could not be read (HTTP ${res.status})`));
  const detail = (await res.json()) as ConversationDetail;
  const mine = caller === 'owner';
  shown = { id, caller };
  contextId = mine ? id : undefined;
  waitingTask = undefined;
  log.replaceChildren();
  const listed = [...byId('conversation-groups').querySelectorAll<HTMLElement>('li[data-context]')].find(
    (item) => item.dataset.context === id && item.dataset.caller === caller,
  );
  const name = listed?.querySelector('a.conversation')?.textContent ?? undefined;
  byId('chat-title').textContent = mine
    ? (name ?? conversationName({ firstWords: detail.messages.find((m) => m.role === 'user')?.text }))
    : `${caller}'s conversation (read only)`;
  let current: ReturnType<typeof exchange> | undefined;
  for (const message of detail.messages) {
    if (message.role === 'user') {
      current = exchange(message.text);
      current.acting.textContent = ago(message.at);
      current.answer.dataset.state = 'stored';
    } else if (current) {
      setAnswer(current.answer, message.text);
      if (message.author) current.answer.parentElement!.querySelector('.who')!.textContent = message.author;
      if (message.author) current.acting.textContent = `${ago(message.at)} · answered by ${message.author}`;
    }
  }
  if (current && detail.pendingApproval && mine) {
    current.answer.closest('.bubble')?.setAttribute('hidden', '');
    approvalCard(current.cards, detail.pendingApproval);
  }
  byId<HTMLInputElement>('chat-input').disabled = !mine;
  byId<HTMLButtonElement>('chat-send').disabled = !mine;
  scrollToNewest();
  markOpen(shown);
}

/** Clears the chat: the next message starts a new conversation. */
function newConversation(): void {
  contextId = undefined;
  waitingTask = undefined;
  shown = undefined;
  byId('chat-log').replaceChildren();
  byId('chat-title').textContent = 'New conversation';
  byId<HTMLInputElement>('chat-input').disabled = false;
  byId<HTMLButtonElement>('chat-send').disabled = false;
  markOpen(undefined);
  go('chat');
  byId('chat-input').focus();
  void loadConversations();
}

/** Says which agent acts on the chat's task as its steps come in (from the live stream). */
export function chatActingOn(taskId: string | undefined, agent: string | undefined): void {
  if (agent && taskId && taskId === chatTask && chatActing) chatActing.textContent = `${agent} is acting`;
}

/** The agents of the tree as the graph lists them. */
interface GraphAgents {
  root: string;
  agents: Array<{ name: string; kind: 'llm' | 'remote'; health?: { state: string } }>;
}

/** Fills the "Talk to" picker: the orchestrator, each specialist, each remote agent with its health. */
export async function loadChatAgents(): Promise<void> {
  const picker = byId<HTMLSelectElement>('chat-agent');
  let graph: GraphAgents;
  try {
    graph = await getJson<GraphAgents>('/console/api/agents');
  } catch {
    return;
  }
  const chosen = picker.value;
  const specialists = el('optgroup', undefined, { label: 'Specialists' });
  const remotes = el('optgroup', undefined, { label: 'Remote agents' });
  for (const agent of graph.agents) {
    const healthy = !agent.health || agent.health.state === 'healthy';
    const label = agent.kind === 'remote' && !healthy ? `${agent.name} (${agent.health!.state})` : agent.name;
    (agent.kind === 'remote' ? remotes : specialists).append(el('option', label, { value: agent.name }));
  }
  picker.replaceChildren(
    el('option', `${graph.root} (orchestrator)`, { value: '' }),
    ...[specialists, remotes].filter((group) => group.children.length > 0),
  );
  picker.value = [...picker.options].some((o) => o.value === chosen) ? chosen : '';
}

/** Wires the chat: the form, the conversation list, the agent picker, the token field. */
export function startChat(): void {
  if (document.body.dataset.auth === 'true' && !sessionStorage.getItem(TOKEN_KEY)) showTokenInput();
  startConversations(() => newConversation());
  byId('new-conversation').addEventListener('click', newConversation);
  byId('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId<HTMLInputElement>('chat-input');
    const message = input.value.trim();
    if (!message) return;
    input.value = '';
    void send(message).finally(() => input.focus());
  });
}

/** The sign-in form keeps the typed token for this tab's chat (the A2A endpoint takes a bearer header, not the cookie). */
export function startSignIn(): void {
  byId('signin').addEventListener('submit', () => {
    sessionStorage.setItem(TOKEN_KEY, byId<HTMLInputElement>('token').value.trim());
  });
}
