/**
 * The step inspector: a model step's exchange (the system prompt, the
 * messages it was sent, the tools offered, what it answered: text and tool
 * calls, with its tokens and latency), or a tool, remote, transfer or agent
 * step's arguments, result and timing. Every text is rendered safely
 * (markdown, JSON foldable) and scrolls inside its card.
 */
import { byId, el, took } from './dom.js';
import { jsonView, parseJson, renderText } from './render.js';
import type { Exchange, ToolCall, TurnDetail, WaterfallSpan } from './turns.js';

/** What the inspector shows now (a finished turn's step is drawn once). */
let shown: { turn: string; step: number; finished: boolean } | undefined;

/** Empties the inspector. */
export function clearInspector(): void {
  shown = undefined;
  byId('inspector-title').textContent = 'Step';
  byId('inspector-body').replaceChildren(
    el('p', 'Choose a step of the waterfall: a model step shows what it was sent and what it answered.', {
      class: 'muted',
    }),
  );
}

/** Shows step `index` of the turn. */
export function inspect(detail: TurnDetail, index: number): void {
  const finished = detail.turn.ms !== undefined;
  if (shown && shown.turn === detail.turn.id && shown.step === index && shown.finished) return;
  shown = { turn: detail.turn.id, step: index, finished };
  const span = findSpan(detail.waterfall, index);
  const body = byId('inspector-body');
  if (!span) {
    byId('inspector-title').textContent = 'Step';
    body.replaceChildren(el('p', `Turn ${detail.turn.id.slice(0, 8)} has no step ${index}.`, { class: 'error' }));
    return;
  }
  byId('inspector-title').textContent = `${span.kind} ${span.name}`;
  const facts = el('dl', undefined, { class: 'facts' });
  const fact = (term: string, value: string | undefined) => {
    if (value) facts.append(el('dt', term), el('dd', value));
  };
  fact('Agent', span.agent);
  fact('Started', `${span.atMs} ms into the turn`);
  fact('Took', took(span.ms));
  if (span.inputTokens !== undefined || span.outputTokens !== undefined)
    fact('Tokens', `${span.inputTokens ?? 0} in / ${span.outputTokens ?? 0} out`);
  fact('Hops', span.hops !== undefined ? String(span.hops) : undefined);
  fact('Error', span.error);
  const parts: HTMLElement[] = [facts];
  const exchange = detail.exchanges.find((e) => e.step === index);
  if (exchange) parts.push(...exchangeParts(exchange));
  else parts.push(...stepParts(span));
  body.replaceChildren(...parts);
}

function findSpan(span: WaterfallSpan, index: number): WaterfallSpan | undefined {
  if (span.step === index) return span;
  for (const child of span.children) {
    const found = findSpan(child, index);
    if (found) return found;
  }
  return undefined;
}

/** A section that folds: its heading, open or not, and what it holds. */
function section(title: string, open: boolean, ...content: HTMLElement[]): HTMLElement {
  const part = el('details', undefined, { class: 'inspect-part' });
  if (open) part.setAttribute('open', '');
  part.append(el('summary', title), ...content);
  return part;
}

/** A model step: the answer first (what a person debugging looks for), then what was sent. */
function exchangeParts(exchange: Exchange): HTMLElement[] {
  const answer = el('div', undefined, { class: 'inspect-answer' });
  if (exchange.answer.text) answer.append(renderText(exchange.answer.text));
  if (exchange.answer.toolCalls.length) answer.append(toolCalls(exchange.answer.toolCalls));
  if (!exchange.answer.text && !exchange.answer.toolCalls.length)
    answer.append(el('p', '(nothing)', { class: 'muted' }));
  const omitted = exchange.omittedMessages
    ? [
        el('p', `${exchange.omittedMessages} earlier messages are not kept (the inspector's size cap).`, {
          class: 'muted small',
        }),
      ]
    : [];
  const messages = el('ol', undefined, { class: 'messages' });
  for (const m of exchange.messages) messages.append(messageItem(m));
  const tools = el('ul', undefined, { class: 'tools-offered' });
  for (const tool of exchange.tools) {
    const item = el('li');
    const fold = section(tool.name, false, el('p', tool.description));
    const parameters = tool.parameters ? parseJson(tool.parameters) : undefined;
    if (parameters !== undefined) fold.append(jsonView(parameters));
    item.append(fold);
    tools.append(item);
  }
  const prompt = el('pre', exchange.instruction || '(not kept)', { class: 'prompt', tabindex: '0' });
  return [
    ...(exchange.cut
      ? [el('p', 'Some of this exchange was cut to fit the inspector (…).', { class: 'muted small' })]
      : []),
    section('Answered', true, answer),
    section(`Messages sent (${exchange.messages.length})`, true, ...omitted, messages),
    section('System prompt', false, prompt),
    section(`Tools offered (${exchange.tools.length})`, false, tools),
  ];
}

function messageItem(m: Exchange['messages'][number]): HTMLElement {
  const item = el('li', undefined, { class: `message ${m.role}` });
  const who =
    m.role === 'tool'
      ? `tool ${m.name ?? ''}`
      : m.role === 'assistant'
        ? (m.author ?? 'assistant')
        : m.runtimeNote
          ? 'runtime note'
          : 'user';
  item.append(el('span', who, { class: 'badge' }));
  if (m.content) item.append(renderText(m.content));
  if (m.toolCalls?.length) item.append(toolCalls(m.toolCalls));
  return item;
}

function toolCalls(calls: ToolCall[]): HTMLElement {
  const list = el('ul', undefined, { class: 'tool-calls' });
  for (const call of calls) {
    const item = el('li');
    item.append(el('code', call.name), ' ');
    const args = parseJson(call.arguments);
    item.append(args !== undefined ? jsonView(args) : el('code', call.arguments));
    list.append(item);
  }
  return list;
}

/** A tool, remote, transfer or agent step: its arguments and result as the timeline keeps them. */
function stepParts(span: WaterfallSpan): HTMLElement[] {
  const parts: HTMLElement[] = [];
  if (span.args) parts.push(section('Arguments (masked)', true, renderText(span.args)));
  if (span.result) parts.push(section('Result (shortened)', true, renderText(span.result)));
  if (span.kind === 'model' && !parts.length)
    parts.push(
      el(
        'p',
        'No exchange is kept for this model step (it ran before the inspector existed, or past the turn’s cap).',
        { class: 'muted' },
      ),
    );
  return parts;
}
