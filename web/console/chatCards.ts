/**
 * The cards of a chat exchange: what the agents did as the turn ran (a
 * transfer, a tool call and how it ended, a call to a remote agent and its
 * progress, a rejection), and once the turn has ended each tool's result in
 * full (from the turn's model exchanges, rendered) and a link to inspect
 * the turn.
 */
import { el, getJson } from './dom.js';
import { renderText } from './render.js';
import { linkTo } from './route.js';

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** A card of the turn: what happened, who did it, details as code. */
export function card(
  kind: string,
  title: string,
  detail?: string,
  attributes: Record<string, string> = {},
): HTMLElement {
  const item = el('li', undefined, { class: `card ${kind}`, ...attributes });
  item.append(el('span', kind === 'tool' ? 'tool' : kind, { class: 'badge' }), el('span', title, { class: 'title' }));
  if (detail) item.append(el('code', detail, { class: 'detail' }));
  return item;
}

/** The card for a progress update's metadata, or the tool card it completes. */
export function progressCard(cards: HTMLElement, meta: Record<string, unknown>): void {
  const event = text(meta.event);
  if (event === 'transfer') {
    cards.append(card('transfer', `${text(meta.from)} → ${text(meta.to)}`));
  } else if (event === 'transfer_refused') {
    cards.append(card('transfer refused', `${text(meta.from)} → ${text(meta.to)}`));
  } else if (event === 'tool_start') {
    const item = card('tool', `${text(meta.agent)} · ${text(meta.tool)}`, text(meta.args) || '{}', {
      'data-call': text(meta.callId),
      'data-state': 'running',
    });
    item.append(el('span', 'running…', { class: 'outcome muted' }));
    cards.append(item);
  } else if (event === 'tool_end') {
    const item = [...cards.querySelectorAll<HTMLElement>('li.card.tool')].find(
      (c) => c.dataset.call === text(meta.callId),
    );
    if (!item) return;
    const ok = meta.ok === true;
    const summary = text(meta.summary);
    item.dataset.state = ok ? 'ok' : summary === 'approval required' ? 'approval' : 'failed';
    const outcome = item.querySelector('.outcome')!;
    outcome.textContent = ok ? `→ ${summary}` : summary === 'approval required' ? 'waits for approval' : summary;
    outcome.className = `outcome ${ok ? '' : 'bad'}`;
  } else if (event === 'remote_call') {
    remoteCard(cards, meta);
  } else if (event === 'rejected') {
    cards.append(card('rejected', text(meta.agent)));
  }
}

/**
 * A call to a remote agent: one card per call, its title naming the peer
 * and its endpoint once known, its progress (`started → sending → working →
 * completed`) as the peer reports it.
 */
function remoteCard(cards: HTMLElement, meta: Record<string, unknown>): void {
  const agent = text(meta.agent);
  const status = text(meta.status);
  const last = cards.lastElementChild as HTMLElement | null;
  let item =
    last?.classList.contains('remote') && last.dataset.agent === agent && status !== 'started' ? last : undefined;
  if (!item) {
    item = card('remote', agent, '', { 'data-agent': agent });
    cards.append(item);
  }
  const endpoint = text(meta.endpoint);
  if (endpoint) item.querySelector('.title')!.textContent = `${agent} at ${endpoint}`;
  const trail = item.querySelector('.detail') ?? item.appendChild(el('code', '', { class: 'detail' }));
  const detail = text(meta.detail);
  trail.textContent = `${trail.textContent ? `${trail.textContent} → ` : ''}${status}${detail ? ` (${detail})` : ''}`;
  item.dataset.state = status;
}

/** A turn's exchanges as the console's turn route gives them (the part the chat reads). */
interface TurnDetail {
  turn: { id: string; steps: Array<{ kind: string }> };
  exchanges: Array<{ step: number; messages: Array<{ role: string; toolCallId?: string; content: string }> }>;
}

/**
 * Once a task's turn has ended: its tool cards get their results in full
 * (the progress events carry a short summary; the turn's model exchanges
 * hold what each tool answered, rendered), and the exchange a link to
 * inspect the turn in the tasks view.
 */
export async function turnDetails(taskId: string, cards: HTMLElement, acting: HTMLElement): Promise<void> {
  let detail: TurnDetail;
  try {
    const { turns } = await getJson<{ turns: Array<{ id: string }> }>(
      `/console/api/timelines/${encodeURIComponent(taskId)}`,
    );
    const latest = turns.at(-1);
    if (!latest) return;
    detail = await getJson<TurnDetail>(`/console/api/turns/${encodeURIComponent(latest.id)}`);
  } catch {
    // Timelines are off, or the turn was not stored: the summaries stay.
    return;
  }
  const results = new Map<string, string>();
  for (const exchange of detail.exchanges)
    for (const m of exchange.messages) if (m.role === 'tool' && m.toolCallId) results.set(m.toolCallId, m.content);
  for (const item of cards.querySelectorAll<HTMLElement>('li.card.tool')) {
    const result = results.get(item.dataset.call ?? '');
    if (result === undefined || item.querySelector('details.result')) continue;
    const full = el('details', undefined, { class: 'result' });
    full.append(el('summary', 'result'), renderText(result));
    item.append(full);
    // The one-line summary said the same, cut: the result in full replaces it.
    if (item.dataset.state === 'ok') item.querySelector<HTMLElement>('.outcome')!.hidden = true;
  }
  const firstModel = detail.turn.steps.findIndex((s) => s.kind === 'model');
  const inspect = el('a', 'inspect this turn', {
    href: linkTo('tasks', { task: taskId, turn: detail.turn.id, ...(firstModel >= 0 ? { step: firstModel } : {}) }),
    class: 'inspect',
  });
  acting.append(' · ', inspect);
}
