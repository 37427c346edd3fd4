/**
 * The replay panel: the owner runs a stored turn again with an edited
 * message, one agent's system prompt edited, or another model, in a
 * scratch conversation of their own (the original conversation, its state
 * and its task are untouched; the tools the turn calls do run again), and
 * sees the original and the replay side by side.
 */
import { byId, el, postJson, took } from './dom.js';
import { renderText } from './render.js';
import { currentRoute, go, linkTo } from './route.js';
import type { TurnDetail } from './turns.js';

/** One side of the comparison (`ReplaySide` in `src/observe/consoleReplay.ts`). */
interface Side {
  turnId?: string;
  sessionId: string;
  answer?: string;
  status?: string;
  agent?: string;
  ms?: number;
  inputTokens: number;
  outputTokens: number;
  models: string[];
}
interface Outcome {
  original: Side;
  replay: Side;
  changed: { message: boolean; instruction?: string; model?: string };
}

/** The turn the panel replays. */
let replaying: string | undefined;

/** Hides the panel. */
export function closeReplay(): void {
  replaying = undefined;
  byId('replay').hidden = true;
  byId('replay-body').replaceChildren();
}

/** Shows the replay form for a turn (once per turn: a refresh keeps what was typed and the outcome). */
export function openReplay(detail: TurnDetail): void {
  if (replaying === detail.turn.id) return;
  replaying = detail.turn.id;
  const panel = byId('replay');
  panel.hidden = false;
  byId('replay-title').textContent = `Replay of turn ${detail.turn.id.slice(0, 8)}`;
  const body = byId('replay-body');
  if (!detail.replay.ready) {
    body.replaceChildren(el('p', 'This turn is still running: replay it once it has ended.', { class: 'muted' }));
    return;
  }
  const prompts = agentPrompts(detail);
  const form = el('form', undefined, { id: 'replay-form', class: 'replay-form' });
  const message = el('textarea', undefined, { id: 'replay-message', rows: '3' }) as HTMLTextAreaElement;
  message.value = detail.replay.message;
  const agent = el('select', undefined, { id: 'replay-agent' }) as HTMLSelectElement;
  agent.append(el('option', 'none: every prompt as it is now', { value: '' }));
  for (const name of prompts.keys()) agent.append(el('option', name, { value: name }));
  const instruction = el('textarea', undefined, {
    id: 'replay-instruction',
    rows: '8',
    disabled: '',
  }) as HTMLTextAreaElement;
  agent.addEventListener('change', () => {
    instruction.disabled = !agent.value;
    instruction.value = prompts.get(agent.value) ?? '';
  });
  const model = el('input', undefined, {
    id: 'replay-model',
    autocomplete: 'off',
    placeholder: `as the turn ran: ${detail.replay.model}`,
    ...(detail.replay.otherModels ? {} : { disabled: '' }),
  }) as HTMLInputElement;
  const run = el('button', 'Replay in a scratch conversation', {
    type: 'submit',
    id: 'replay-run',
  }) as HTMLButtonElement;
  const status = el('p', '', { id: 'replay-status', role: 'status', class: 'muted' });
  form.append(
    el(
      'p',
      'Runs as you, the owner, in a new scratch conversation (replay:…): the original conversation, its state and its task stay as they are. The tools the turn calls run again.',
      { class: 'note' },
    ),
    field('replay-message', 'Message', message),
    field('replay-agent', 'Edit the system prompt of', agent),
    field('replay-instruction', 'System prompt sent instead', instruction),
    field(
      'replay-model',
      'Model',
      model,
      detail.replay.otherModels
        ? 'a model name the node’s model endpoint serves; empty: the same'
        : `the node’s model (${detail.replay.model}) has no other models`,
    ),
    run,
    status,
  );
  const result = el('div', undefined, { id: 'replay-result' });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const changes = {
      ...(message.value.trim() && message.value !== detail.replay.message ? { message: message.value } : {}),
      ...(agent.value && instruction.value.trim()
        ? { instruction: { agent: agent.value, text: instruction.value } }
        : {}),
      ...(model.value.trim() ? { model: model.value.trim() } : {}),
    };
    void replay(detail, changes, run, status, result);
  });
  const close = el('button', 'Close', { type: 'button', class: 'link' });
  close.addEventListener('click', () => {
    const { params } = currentRoute();
    go('tasks', {
      task: params.get('task') ?? undefined,
      turn: params.get('turn') ?? undefined,
      step: params.get('step') ?? undefined,
    });
  });
  body.replaceChildren(form, result, close);
}

/** A labelled control with an optional hint. */
function field(id: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
  const wrap = el('div', undefined, { class: 'field' });
  wrap.append(el('label', label, { for: id }), control);
  if (hint) {
    control.setAttribute('aria-describedby', `${id}-hint`);
    wrap.append(el('small', hint, { id: `${id}-hint`, class: 'muted hint' }));
  }
  return wrap;
}

/** Each agent's system prompt as its first model step of the turn was sent it. */
function agentPrompts(detail: TurnDetail): Map<string, string> {
  const prompts = new Map<string, string>();
  for (const exchange of detail.exchanges) {
    const agent = detail.turn.steps[exchange.step]?.agent;
    if (agent && exchange.instruction && !prompts.has(agent)) prompts.set(agent, exchange.instruction);
  }
  return prompts;
}

async function replay(
  detail: TurnDetail,
  changes: Record<string, unknown>,
  run: HTMLButtonElement,
  status: HTMLElement,
  result: HTMLElement,
): Promise<void> {
  run.disabled = true;
  status.textContent = 'Replaying…';
  status.className = 'muted';
  try {
    const { status: code, body } = await postJson<Outcome & { error?: { message: string } }>(
      `/console/api/turns/${encodeURIComponent(detail.turn.id)}/replay`,
      changes,
    );
    if (code !== 200) throw new Error(body.error?.message ?? `HTTP ${code}`);
    status.textContent = `Replayed: ${describe(body.changed)}.`;
    result.replaceChildren(compare(body, detail));
  } catch (err) {
    status.textContent = `The replay failed: ${err instanceof Error ? err.message : String(err)}`;
    status.className = 'error';
  } finally {
    run.disabled = false;
  }
}

const describe = (changed: Outcome['changed']) =>
  [
    changed.message ? 'the message edited' : '',
    changed.instruction ? `the system prompt of ${changed.instruction} edited` : '',
    changed.model ? `the model ${changed.model}` : '',
  ]
    .filter(Boolean)
    .join(', ') || 'nothing changed';

/** The original and the replay side by side. */
function compare(outcome: Outcome, detail: TurnDetail): HTMLElement {
  const grid = el('div', undefined, { class: 'compare' });
  const task = detail.turn.taskId;
  grid.append(
    side(
      'Original',
      outcome.original,
      outcome.original.turnId ? linkTo('tasks', { task, turn: outcome.original.turnId }) : undefined,
    ),
    side(
      'Replay (scratch)',
      outcome.replay,
      outcome.replay.turnId ? linkTo('tasks', { turn: outcome.replay.turnId }) : undefined,
    ),
  );
  return grid;
}

function side(title: string, s: Side, href: string | undefined): HTMLElement {
  const part = el('section', undefined, { class: `side ${title.startsWith('Replay') ? 'replayed' : 'original'}` });
  part.append(el('h3', title));
  const facts = el('dl', undefined, { class: 'facts' });
  const fact = (term: string, value: string) => facts.append(el('dt', term), el('dd', value));
  fact('Status', s.status ?? '—');
  fact('Answered by', s.agent ?? '—');
  fact('Took', took(s.ms));
  fact('Tokens', `${s.inputTokens} in / ${s.outputTokens} out`);
  fact('Models', s.models.join(', ') || '—');
  fact('Conversation', s.sessionId);
  part.append(facts);
  const answer = el('div', undefined, { class: 'side-answer' });
  answer.append(s.answer ? renderText(s.answer) : el('p', '(no answer stored)', { class: 'muted' }));
  part.append(answer);
  if (href) part.append(el('a', 'open its waterfall', { href }));
  return part;
}
