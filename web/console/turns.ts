/**
 * A task's turns (or one turn without a task) as waterfalls: each turn a
 * table of its steps, nested as they ran (the turn, each agent, its model,
 * tool and remote calls and transfers; a remote lango node's own steps
 * under the call that reached it), each with a bar placed by when it
 * started and how long it took. A step opens in the inspector, a turn in
 * the replay panel, each by its address.
 */
import { byId, el, getJson, showError, took } from './dom.js';
import { inspect, clearInspector } from './inspector.js';
import { closeReplay, openReplay } from './replay.js';
import { currentRoute, linkTo } from './route.js';
import { markSelected } from './tasks.js';

/** One bar of the waterfall (`src/observe/waterfall.ts`). */
export interface WaterfallSpan {
  kind: string;
  name: string;
  agent?: string;
  node?: string;
  atMs: number;
  ms?: number;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  hops?: number;
  args?: string;
  result?: string;
  step?: number;
  inspectable?: boolean;
  children: WaterfallSpan[];
}

/** A turn as the timeline keeps it (the parts shown here). */
export interface TurnSummary {
  id: string;
  taskId?: string;
  sessionId: string;
  caller: string;
  asked?: string;
  replica?: string;
  startedAt: string;
  ms?: number;
  status?: string;
  agent?: string;
  error?: string;
  steps: Array<{
    kind: string;
    name: string;
    agent?: string;
    inputTokens?: number;
    outputTokens?: number;
    ms?: number;
  }>;
}

/** What the console reads of one turn: the turn, its waterfall, its model exchanges and what a replay starts from. */
export interface TurnDetail {
  turn: TurnSummary;
  waterfall: WaterfallSpan;
  exchanges: Exchange[];
  replay: { message: string; startAgent?: string; ready: boolean; model: string; otherModels: boolean };
}

/** One model step's exchange (`ModelExchange` in `src/store/timelines.ts`). */
export interface Exchange {
  step: number;
  instruction: string;
  messages: Array<{
    role: string;
    content: string;
    author?: string;
    name?: string;
    toolCallId?: string;
    toolCalls?: ToolCall[];
    runtimeNote?: boolean;
  }>;
  omittedMessages?: number;
  tools: Array<{ name: string; description: string; parameters?: string }>;
  answer: { text: string; toolCalls: ToolCall[] };
  cut?: boolean;
}
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What the panel shows now: a task's turns or one turn, and each turn read so far. */
let showing: { task?: string; turn?: string } = {};
const details = new Map<string, TurnDetail>();

/** Reads one turn (its waterfall and exchanges), once per showing. */
async function detailOf(turnId: string): Promise<TurnDetail> {
  const known = details.get(turnId);
  if (known) return known;
  const detail = await getJson<TurnDetail>(`/console/api/turns/${encodeURIComponent(turnId)}`);
  details.set(turnId, detail);
  return detail;
}

/**
 * Shows what the address names: a task's turns (the one named, else the
 * latest, drawn open) or one turn, the step named in the inspector, the
 * replay panel when asked.
 */
export async function showTurns(target: {
  task?: string;
  turn?: string;
  step?: number;
  replay?: boolean;
}): Promise<void> {
  const holder = byId('turns');
  const same = showing.task === target.task && (target.task !== undefined || showing.turn === target.turn);
  if (!same) {
    details.clear();
    holder.replaceChildren();
    clearInspector();
  }
  showing = { task: target.task, turn: target.turn };
  markSelected();
  if (!target.task && !target.turn) {
    byId('timeline-empty').hidden = false;
    byId('timeline-title').textContent = 'Turns';
    closeReplay();
    return;
  }
  byId('timeline-empty').hidden = true;
  let ids: string[];
  const summaries = new Map<string, TurnSummary>();
  try {
    if (target.task) {
      const { turns } = await getJson<{ turns: TurnSummary[] }>(
        `/console/api/timelines/${encodeURIComponent(target.task)}`,
      );
      ids = turns.map((t) => t.id);
      for (const turn of turns) summaries.set(turn.id, turn);
    } else ids = [target.turn!];
  } catch (err) {
    const what = target.task ? `task ${target.task}` : `turn ${target.turn}`;
    showError(holder, new Error(`No timeline stored for ${what}: ${err instanceof Error ? err.message : String(err)}`));
    byId('timeline-title').textContent = 'Turns';
    closeReplay();
    return;
  }
  byId('timeline-title').textContent = target.task
    ? `Turns of task ${target.task.slice(0, 8)}`
    : `Turn ${target.turn!.slice(0, 8)}`;
  const chosen = target.turn && ids.includes(target.turn) ? target.turn : ids.at(-1)!;
  const sections = await Promise.all(ids.map((id) => turnSection(id, id === chosen, target.task, summaries.get(id))));
  holder.replaceChildren(...sections);
  const detail = details.get(chosen);
  if (!detail) return;
  if (target.step !== undefined) inspect(detail, target.step);
  if (target.replay) openReplay(detail);
  else closeReplay();
  if (target.step !== undefined) markStep(chosen, target.step);
}

/** One turn: a header (how it ended, where, how long, tokens), Replay, and its waterfall (drawn when open). */
async function turnSection(
  id: string,
  open: boolean,
  task: string | undefined,
  summary?: TurnSummary,
): Promise<HTMLElement> {
  const section = el('details', undefined, { class: 'turn', 'data-turn': id });
  if (open) section.setAttribute('open', '');
  // Drawn once: opening fires `toggle` too, while the first draw may still be reading.
  let drawn: Promise<void> | undefined;
  const draw = () =>
    (drawn ??= (async () => {
      try {
        const detail = await detailOf(id);
        section.append(turnActions(detail, task), waterfallTable(detail, task));
        section.querySelector('summary')!.replaceChildren(...turnHeadline(detail.turn));
      } catch (err) {
        showError(section, err);
      }
    })());
  const line = el('summary');
  line.append(...(summary ? turnHeadline(summary) : [`turn ${id.slice(0, 8)}`]));
  section.append(line);
  section.addEventListener('toggle', () => {
    if ((section as HTMLDetailsElement).open) void draw();
  });
  // A closed turn says how it ended (from the task's timeline); its waterfall is read when it opens.
  if (open) await draw();
  return section;
}

/** A turn's one line: when, for whom, where, how it ended, how long, its tokens. */
function turnHeadline(turn: TurnSummary): Array<string | HTMLElement> {
  const tokens = turn.steps.reduce(
    (sum, s) => ({ in: sum.in + (s.inputTokens ?? 0), out: sum.out + (s.outputTokens ?? 0) }),
    { in: 0, out: 0 },
  );
  const outcome = `${turn.status ?? 'running'}${turn.agent ? `, answered by ${turn.agent}` : ''}`;
  const where = turn.replica ? ` on ${turn.replica}` : '';
  const replay = turn.sessionId.startsWith('replay:') ? ' (a replay)' : '';
  return [
    el('span', new Date(turn.startedAt).toLocaleTimeString(), { class: 'muted' }),
    ` turn for ${turn.caller}${where}${replay}: `,
    el('strong', outcome, { class: `state ${turn.status ?? 'working'}` }),
    ` · ${took(turn.ms)} · ${tokens.in} in / ${tokens.out} out tokens`,
    ...(turn.asked ? [el('span', ` “${turn.asked}”`, { class: 'asked-words' })] : []),
  ];
}

/** The turn's actions: replay it (a finished turn). */
function turnActions(detail: TurnDetail, task: string | undefined): HTMLElement {
  const actions = el('div', undefined, { class: 'turn-actions' });
  if (detail.replay.ready)
    actions.append(
      el('a', 'Replay this turn', {
        href: linkTo('tasks', { task, turn: detail.turn.id, replay: 1 }),
        class: 'button-link',
        'data-replay': detail.turn.id,
      }),
    );
  if (detail.turn.error) actions.append(el('span', `error: ${detail.turn.error}`, { class: 'error small' }));
  return actions;
}

/** The waterfall: one row per step, indented by nesting, its bar placed on the turn's time. */
export function waterfallTable(detail: TurnDetail, task: string | undefined): HTMLElement {
  const total = Math.max(1, detail.waterfall.ms ?? lastEnd(detail.waterfall));
  const table = el('table', undefined, { class: 'list waterfall' });
  table.append(
    el('caption', `Waterfall of turn ${detail.turn.id.slice(0, 8)} over ${took(total)}`, { class: 'visually-hidden' }),
  );
  const head = el('thead');
  const headRow = el('tr');
  for (const label of ['Step', 'Took', 'Tokens / hops', 'When']) headRow.append(el('th', label, { scope: 'col' }));
  head.append(headRow);
  const body = el('tbody');
  const visit = (span: WaterfallSpan, depth: number) => {
    body.append(spanRow(span, depth, total, detail.turn.id, task));
    for (const child of span.children) visit(child, depth + 1);
  };
  visit(detail.waterfall, 0);
  table.append(head, body);
  const scroll = el('div', undefined, { class: 'table-scroll' });
  scroll.append(table);
  return scroll;
}

function spanRow(
  span: WaterfallSpan,
  depth: number,
  total: number,
  turn: string,
  task: string | undefined,
): HTMLElement {
  const row = el('tr', undefined, {
    class: `span ${span.kind}${span.error ? ' failed' : ''}`,
    ...(span.step !== undefined ? { 'data-step': String(span.step) } : {}),
  });
  const name = el('td', undefined, { class: 'span-name' });
  name.style.setProperty('--depth', String(depth));
  const label = span.kind === 'turn' ? 'turn' : `${span.kind} ${span.name}`;
  if (span.step !== undefined) {
    name.append(el('a', label, { href: linkTo('tasks', { task, turn, step: span.step }), class: 'step-link' }));
    if (span.inspectable) name.append(' ', el('span', 'inspect', { class: 'badge' }));
  } else name.append(label);
  if (span.node) name.append(' ', el('span', `on ${span.node}`, { class: 'badge remote-node' }));
  if (span.kind === 'turn' && span.agent)
    name.append(' ', el('span', `answered by ${span.agent}`, { class: 'muted small' }));
  // A remote call reports both: what its hops spent, and how many hops it took.
  const tokens = [
    ...(span.inputTokens !== undefined || span.outputTokens !== undefined
      ? [`${span.inputTokens ?? 0} in / ${span.outputTokens ?? 0} out`]
      : []),
    ...(span.hops !== undefined ? [`${span.hops} ${span.hops === 1 ? 'hop' : 'hops'}`] : []),
  ].join(' · ');
  const when = `from ${span.atMs} ms${span.ms !== undefined ? ` to ${span.atMs + span.ms} ms` : ''}`;
  const track = el('div', undefined, { class: 'track', title: when });
  const bar = el('div', undefined, { class: `bar ${span.kind}` });
  bar.style.left = `${Math.min(100, (span.atMs / total) * 100)}%`;
  bar.style.width = `${Math.max(0.5, Math.min(100 - (span.atMs / total) * 100, ((span.ms ?? total - span.atMs) / total) * 100))}%`;
  track.append(bar);
  const time = el('td', undefined, { class: 'time' });
  time.append(el('span', when, { class: 'visually-hidden' }), track);
  row.append(name, el('td', took(span.ms), { class: 'num' }), el('td', tokens, { class: 'num' }), time);
  return row;
}

/** When the last step ended (a turn still running has no length of its own). */
function lastEnd(span: WaterfallSpan): number {
  return Math.max(span.atMs + (span.ms ?? 0), ...span.children.map(lastEnd));
}

/** Marks the step the inspector shows. */
function markStep(turn: string, step: number): void {
  for (const row of byId('turns').querySelectorAll<HTMLElement>('tr.span')) {
    const current =
      row.closest<HTMLElement>('details.turn')?.dataset.turn === turn && row.dataset.step === String(step);
    row.classList.toggle('selected', current);
    const link = row.querySelector('a.step-link');
    if (current) link?.setAttribute('aria-current', 'step');
    else link?.removeAttribute('aria-current');
  }
}

/** Reads the shown task's turns again when it changed (`undefined`: any task): a running turn grows. */
export function refreshTurns(taskId: string | undefined): void {
  if (!showing.task || (taskId && taskId !== showing.task)) return;
  for (const [id, detail] of details) if (detail.turn.ms === undefined) details.delete(id);
  const { params } = currentRoute();
  const step = params.get('step');
  void showTurns({
    task: showing.task,
    turn: params.get('turn') ?? undefined,
    step: step === null ? undefined : Number(step),
    replay: params.has('replay'),
  });
}
