/**
 * The console's conversation list: every caller's conversations, newest
 * first, grouped by kind (chats; one-shot CLI chats; replays' scratch
 * conversations; jobs' turns), each opened into the chat by its address,
 * renamed or deleted in place; the search box finds words in a title, the
 * first words, the id or the caller.
 */
import { ago, button, byId, el, getJson, postJson, showError } from './dom.js';
import { go, linkTo } from './route.js';

/** A conversation as the listing gives it. */
export interface Conversation {
  id: string;
  caller: string;
  kind: 'chat' | 'one-shot' | 'replay' | 'job';
  updatedAt: string;
  firstWords?: string;
  title?: string;
}

/** The groups, in the order they are shown, and whether each starts open. */
const GROUPS: ReadonlyArray<[Conversation['kind'], string, boolean]> = [
  ['chat', 'Chats', true],
  ['one-shot', 'One-shot CLI chats', false],
  ['replay', 'Replays', false],
  ['job', 'Jobs and tool runs', false],
];

/** The conversation the chat shows (marked in the list), and what to do when it is deleted. */
let open: { id: string; caller: string } | undefined;
let forgotten: (id: string) => void = () => {};
let searchTimer: ReturnType<typeof setTimeout> | undefined;
/** Which groups the owner opened or closed (kept across refreshes). */
const groupOpen = new Map<string, boolean>();

/** A conversation's name as the list shows it. */
export const conversationName = (c: Pick<Conversation, 'title' | 'firstWords'>) =>
  c.title ?? c.firstWords ?? '(no words yet)';

/** Marks the conversation the chat shows. */
export function markOpen(conversation: { id: string; caller: string } | undefined): void {
  open = conversation;
  for (const item of byId('conversation-groups').querySelectorAll<HTMLElement>('li[data-context]')) {
    const current = item.dataset.context === open?.id && item.dataset.caller === open?.caller;
    item.classList.toggle('current', current);
    const link = item.querySelector('a.conversation');
    if (current) link?.setAttribute('aria-current', 'true');
    else link?.removeAttribute('aria-current');
  }
}

/** The list, as the search box asks. */
export async function loadConversations(): Promise<void> {
  const holder = byId('conversation-groups');
  const q = byId<HTMLInputElement>('conversation-search').value.trim();
  let conversations: Conversation[];
  try {
    ({ conversations } = await getJson<{ conversations: Conversation[] }>(
      `/console/api/conversations${q ? `?${new URLSearchParams({ q })}` : ''}`,
    ));
  } catch (err) {
    return showError(holder, err);
  }
  const groups = GROUPS.flatMap(([kind, label, startsOpen]) => {
    const members = conversations.filter((c) => c.kind === kind);
    if (members.length === 0 && kind !== 'chat') return [];
    const group = el('details', undefined, { class: 'conversation-group', 'data-kind': kind });
    if (groupOpen.get(kind) ?? (startsOpen || q !== '')) group.setAttribute('open', '');
    group.addEventListener('toggle', () => groupOpen.set(kind, (group as HTMLDetailsElement).open));
    group.append(el('summary', `${label} (${members.length})`));
    const list = el('ul', undefined, { class: 'conversation-list', 'aria-label': label });
    list.append(...members.map(item));
    if (members.length === 0)
      list.append(el('li', q ? `Nothing matches “${q}”.` : 'No conversations yet.', { class: 'muted' }));
    group.append(list);
    return [group];
  });
  holder.replaceChildren(...groups);
  markOpen(open);
}

/** One conversation: its link, who and when, Rename and Delete. */
function item(c: Conversation): HTMLElement {
  const row = el('li', undefined, { 'data-context': c.id, 'data-caller': c.caller });
  const name = conversationName(c);
  const link = el('a', name, {
    class: 'conversation',
    href: linkTo('chat', { conversation: c.id, caller: c.caller }),
    title: name,
  });
  const meta = el('span', `${c.caller === 'owner' ? '' : `${c.caller} · `}${ago(c.updatedAt)}`, {
    class: 'muted small',
  });
  const actions = el('span', undefined, { class: 'row-actions' });
  actions.append(
    button('Rename', () => rename(row, c), { class: 'link', 'aria-label': `Rename “${name}”` }),
    button('Delete', () => confirmDelete(actions, c), { class: 'link danger', 'aria-label': `Delete “${name}”` }),
  );
  row.append(link, meta, actions);
  return row;
}

/** Turns a row into a small form naming the conversation (an empty name goes back to its first words). */
function rename(row: HTMLElement, c: Conversation): void {
  const form = el('form', undefined, { class: 'rename' });
  const id = `rename-${row.parentElement?.children.length ?? 0}-${Math.random().toString(36).slice(2, 8)}`;
  const input = el('input', undefined, {
    id,
    value: c.title ?? c.firstWords ?? '',
    maxlength: '200',
    autocomplete: 'off',
  });
  form.append(
    el('label', 'New name', { for: id, class: 'visually-hidden' }),
    input,
    el('button', 'Save', { type: 'submit' }),
    button('Cancel', () => void loadConversations(), { class: 'link' }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const { status, body } = await postJson<{ error?: { message: string } }>(
        `/console/api/conversations/${encodeURIComponent(c.id)}/rename`,
        { caller: c.caller, title: (input as HTMLInputElement).value },
      );
      if (status !== 200) return showError(row, new Error(body.error?.message ?? `HTTP ${status}`));
      if (open?.id === c.id && open.caller === c.caller)
        byId('chat-title').textContent =
          (input as HTMLInputElement).value.trim() || conversationName({ firstWords: c.firstWords });
      await loadConversations();
    })();
  });
  row.replaceChildren(form);
  input.focus();
}

/** Asks once more before deleting: the Delete button becomes "Delete for good" and Keep. */
function confirmDelete(actions: HTMLElement, c: Conversation): void {
  const name = conversationName(c);
  const sure = button('Delete for good', () => remove(c), {
    class: 'danger',
    'aria-label': `Delete “${name}” for good`,
  });
  actions.replaceChildren(
    sure,
    button('Keep', () => void loadConversations(), { class: 'link' }),
  );
  sure.focus();
}

async function remove(c: Conversation): Promise<void> {
  const { status, body } = await postJson<{ error?: { message: string } }>(
    `/console/api/conversations/${encodeURIComponent(c.id)}/delete`,
    { caller: c.caller },
  );
  if (status !== 200) return showError(byId('conversation-groups'), new Error(body.error?.message ?? `HTTP ${status}`));
  if (open?.id === c.id && open.caller === c.caller) forgotten(c.id);
  byId('conversation-search').focus();
  await loadConversations();
}

/** Wires the search box; `onForgotten` hears that the open conversation was deleted. */
export function startConversations(onForgotten: (id: string) => void): void {
  forgotten = onForgotten;
  byId('conversation-search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => void loadConversations(), 200);
  });
}

/** Opens a conversation in the chat (by its address). */
export const openInChat = (id: string, caller: string) => go('chat', { conversation: id, caller });
