/**
 * The console's memory view: per caller (the owner's own, or a caller's),
 * its knowledge (newest, or found by a search), its knowledge-graph
 * statements, and the observations and reflections its conversations were
 * condensed into. Read as that caller: nobody else's rows show.
 */
import { ago, byId, el, getJson, showError } from './dom.js';
import { go } from './route.js';

interface KnowledgeRow {
  id: string;
  kind: string;
  content: string;
  tags: string[];
  source: string | null;
  createdAt: string;
}
interface MemoryRow {
  id: string;
  sessionId: string;
  content: string;
  createdAt: string;
}
interface Triple {
  subject: string;
  predicate: string;
  object: string;
}

let searchTimer: ReturnType<typeof setTimeout> | undefined;

/** One list, or a line saying it is empty. */
function fill(list: HTMLElement, items: HTMLElement[], empty: string): void {
  list.replaceChildren(...(items.length ? items : [el('li', empty, { class: 'muted' })]));
}

/** Lists the callers whose rows may be browsed (the owner first); `caller`: the one to show (the address's). */
export async function loadCallers(caller?: string): Promise<void> {
  const select = byId<HTMLSelectElement>('memory-caller');
  try {
    const { callers } = await getJson<{ callers: string[] }>('/console/api/callers');
    const chosen = caller ?? (select.value || 'owner');
    select.replaceChildren(...callers.map((id) => el('option', id === 'owner' ? 'owner (you)' : id, { value: id })));
    select.value = callers.includes(chosen) ? chosen : 'owner';
  } catch (err) {
    showError(byId('knowledge-list'), err);
    return;
  }
  await loadMemory();
}

/** The chosen caller's knowledge, graph statements, observations and reflections. */
export async function loadMemory(): Promise<void> {
  const caller = byId<HTMLSelectElement>('memory-caller').value || 'owner';
  const q = byId<HTMLInputElement>('knowledge-query').value.trim();
  const query = new URLSearchParams({ caller, ...(q ? { q } : {}) });
  try {
    const [knowledge, memory] = await Promise.all([
      getJson<{ knowledge: KnowledgeRow[]; graph: { everyCaller: boolean; triples: Triple[] } }>(
        `/console/api/knowledge?${query}`,
      ),
      getJson<{ observations: MemoryRow[]; reflections: MemoryRow[] }>(
        `/console/api/memory?${new URLSearchParams({ caller })}`,
      ),
    ]);
    fill(
      byId('knowledge-list'),
      knowledge.knowledge.map((k) => {
        const item = el('li', undefined, { class: 'row' });
        item.append(el('span', k.kind, { class: 'badge' }), el('span', k.content, { class: 'content' }));
        const meta = [k.tags.length ? `#${k.tags.join(' #')}` : '', k.source ?? '', ago(k.createdAt)].filter(Boolean);
        item.append(el('span', meta.join(' · '), { class: 'muted small' }));
        return item;
      }),
      q ? `Nothing matches “${q}”.` : 'No knowledge saved.',
    );
    byId('graph-note').textContent = knowledge.graph.everyCaller ? "The owner's view: every caller's statements." : '';
    fill(
      byId('triple-list'),
      knowledge.graph.triples.map((t) => {
        const item = el('li', undefined, { class: 'row' });
        item.append(el('code', t.subject), ` ${t.predicate} `, el('code', t.object));
        return item;
      }),
      'No statements.',
    );
    const memoryItem = (m: MemoryRow) => {
      const item = el('li', undefined, { class: 'row' });
      item.append(
        el('span', m.content, { class: 'content' }),
        el('span', `${m.sessionId} · ${ago(m.createdAt)}`, { class: 'muted small' }),
      );
      return item;
    };
    fill(byId('observation-list'), memory.observations.map(memoryItem), 'No observations.');
    fill(byId('reflection-list'), memory.reflections.map(memoryItem), 'No reflections.');
  } catch (err) {
    showError(byId('knowledge-list'), err);
  }
}

/** Wires the caller picker and the search box. */
export function startMemory(): void {
  byId('memory-caller').addEventListener('change', () => {
    void loadMemory();
    go('memory', { caller: byId<HTMLSelectElement>('memory-caller').value });
  });
  byId('knowledge-query').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => void loadMemory(), 250);
  });
}
