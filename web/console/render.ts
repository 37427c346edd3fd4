/**
 * How the console shows text a model, a tool or a peer wrote: JSON
 * pretty-printed and foldable, anything else as a safe subset of markdown.
 * Every node is built with `createElement` and `textContent`: no HTML from
 * the text ever reaches the page (a `<script>` in an answer is the text
 * "<script>"), a link is kept only when it is http(s) or mailto, and
 * what is too big or too deep is cut with a note rather than drawn.
 */
import { el } from './dom.js';

/** Longest text rendered as markdown; past it the text is shown as it is, wrapped. */
const MAX_MARKDOWN_CHARS = 1_000_000;
/** Longest text parsed as JSON for the tree view. */
const MAX_JSON_CHARS = 2_000_000;
/** JSON values drawn at most per view (each object, array and leaf counts one); the rest is summed up. */
const MAX_JSON_NODES = 3_000;
/** Deepest JSON level drawn; deeper values are shown folded as their size. */
const MAX_JSON_DEPTH = 40;
/** Levels open when a JSON view is first drawn. */
const OPEN_DEPTH = 2;
/** Deepest nesting of quotes and lists drawn; deeper lines are drawn as text of the level above. */
const MAX_BLOCK_DEPTH = 12;
/** A text longer than this (characters or lines) may scroll inside its card. */
const LONG_TEXT_CHARS = 1_500;
const LONG_TEXT_LINES = 20;
/** Longest line whose inline markup is read; a longer one is text (every pattern's scan stays bounded). */
const MAX_INLINE_CHARS = 20_000;

/** `text` as the console shows it: a JSON object or array as a foldable tree, else markdown. */
export function renderText(text: string): HTMLElement {
  const holder = el('div', undefined, { class: 'rendered' });
  // A long text scrolls inside its card: reachable by keyboard then (WCAG 2.1.1).
  if (text.length > LONG_TEXT_CHARS || text.split('\n', LONG_TEXT_LINES + 1).length > LONG_TEXT_LINES)
    holder.tabIndex = 0;
  const json = parseJson(text);
  if (json !== undefined) holder.append(jsonView(json));
  else holder.append(...markdown(text));
  return holder;
}

/** The JSON value `text` holds when it is a JSON object or array (whitespace around allowed), else undefined. */
export function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.length > MAX_JSON_CHARS || !/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/** A foldable tree of `value`: objects and arrays as `<details>`, the first levels open. */
export function jsonView(value: unknown): HTMLElement {
  const budget = { left: MAX_JSON_NODES };
  const view = el('div', undefined, { class: 'json-view' });
  view.append(jsonNode(value, undefined, 0, budget));
  if (budget.left < 0)
    view.append(el('p', `Only the first ${MAX_JSON_NODES} values are drawn.`, { class: 'muted small note' }));
  return view;
}

function jsonNode(value: unknown, key: string | undefined, depth: number, budget: { left: number }): HTMLElement {
  budget.left -= 1;
  const label = key === undefined ? undefined : el('span', `${key}: `, { class: 'json-key' });
  if (value === null || typeof value !== 'object') {
    const line = el('div', undefined, { class: 'json-line' });
    if (label) line.append(label);
    line.append(el('span', JSON.stringify(value) ?? String(value), { class: `json-${leafKind(value)}` }));
    return line;
  }
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  const size = `${entries.length} ${Array.isArray(value) ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'}`;
  const node = el('details', undefined, { class: 'json-branch' });
  const summary = el('summary');
  if (label) summary.append(label);
  summary.append(el('span', `${open} ${size} ${close}`, { class: 'json-size' }));
  node.append(summary);
  if (depth >= MAX_JSON_DEPTH) {
    node.append(el('div', `… nested deeper than ${MAX_JSON_DEPTH} levels: not drawn`, { class: 'muted small' }));
    return node;
  }
  if (depth < OPEN_DEPTH) node.setAttribute('open', '');
  const children = el('div', undefined, { class: 'json-children' });
  for (const [index, [childKey, child]] of entries.entries()) {
    if (budget.left <= 0) {
      children.append(el('div', `… ${entries.length - index} more not drawn`, { class: 'muted small' }));
      budget.left = -1;
      break;
    }
    children.append(jsonNode(child, childKey, depth + 1, budget));
  }
  node.append(children);
  return node;
}

const leafKind = (value: unknown) => (value === null ? 'null' : typeof value);

/** Markdown blocks of `text` as elements (a safe subset: see the module's comment). */
export function markdown(text: string, depth = 0): HTMLElement[] {
  if (text.length > MAX_MARKDOWN_CHARS) return [el('pre', text, { class: 'plain', tabindex: '0' })];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: HTMLElement[] = [];
  // A JSON block is tried once per run of lines between blank ones: a failed try is not tried again there.
  let jsonFailed = false;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      jsonFailed = false;
      i++;
      continue;
    }
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      const end = lines.findIndex((l, k) => k > i && l.trim().startsWith(fence[1]));
      const body = lines.slice(i + 1, end < 0 ? lines.length : end).join('\n');
      const pre = el('pre', undefined, { class: 'code', tabindex: '0' });
      pre.append(el('code', body, fence[2] ? { 'data-lang': fence[2] } : {}));
      blocks.push(pre);
      i = end < 0 ? lines.length : end + 1;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      // Headings inside an answer sit below the console's own: h4 to h6.
      const level = Math.min(6, heading[1].length + 3);
      blocks.push(inlineInto(el(`h${level}`, undefined, { class: 'md-heading' }), heading[2].replace(/\s+#+\s*$/, '')));
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push(el('hr'));
      i++;
      continue;
    }
    if (/^\s*>/.test(line) && depth < MAX_BLOCK_DEPTH) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ''));
      const quote = el('blockquote');
      quote.append(...markdown(quoted.join('\n'), depth + 1));
      blocks.push(quote);
      continue;
    }
    if (isTableStart(lines, i)) {
      const rows: string[] = [];
      while (i < lines.length && lines[i].includes('|') && lines[i].trim()) rows.push(lines[i++]);
      blocks.push(table(rows));
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: string[] = [];
      while (i < lines.length && (LIST_ITEM.test(lines[i]) || (/^\s{2,}\S/.test(lines[i]) && items.length)))
        items.push(lines[i++]);
      blocks.push(list(items, depth));
      continue;
    }
    const json = !jsonFailed && JSON_START.test(line) ? jsonBlock(lines, i) : undefined;
    if (json) {
      blocks.push(jsonView(json.value));
      i = json.end;
      continue;
    }
    if (JSON_START.test(line)) jsonFailed = true;
    const paragraph: string[] = [];
    while (
      i < lines.length &&
      lines[i].trim() &&
      !startsBlock(lines, i, depth) &&
      !(paragraph.length && !jsonFailed && JSON_START.test(lines[i]))
    )
      paragraph.push(lines[i++]);
    if (paragraph.length === 0) paragraph.push(lines[i++]);
    const p = el('p');
    paragraph.forEach((piece, k) => {
      if (k > 0) p.append(el('br'));
      inlineInto(p, piece);
    });
    blocks.push(p);
  }
  return blocks;
}

/**
 * A JSON object or array starting at line `i` (a tool's result inside an
 * answer): the lines up to the next blank one. Tried once per paragraph, so
 * a text of many would-be blocks costs one parse of each.
 */
function jsonBlock(lines: string[], i: number): { value: unknown; end: number } | undefined {
  const blank = lines.findIndex((l, k) => k > i && !l.trim());
  const end = blank < 0 ? lines.length : blank;
  const value = parseJson(lines.slice(i, end).join('\n'));
  return value === undefined ? undefined : { value, end };
}

/** A line that may start a JSON block (a tool's result after a line saying whose it is). */
const JSON_START = /^\s*[[{]/;

/** A list item: `-`, `*` or `+`, or a number and a dot, then a space. */
const LIST_ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+/;

function startsBlock(lines: string[], i: number, depth: number): boolean {
  const line = lines[i];
  return (
    /^\s*(```|~~~)/.test(line) ||
    /^#{1,6}\s/.test(line) ||
    (/^\s*>/.test(line) && depth < MAX_BLOCK_DEPTH) ||
    LIST_ITEM.test(line) ||
    isTableStart(lines, i)
  );
}

/** A table: a row of cells, then a line of dashes between pipes. */
function isTableStart(lines: string[], i: number): boolean {
  return (
    lines[i].includes('|') &&
    i + 1 < lines.length &&
    /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(lines[i + 1])
  );
}

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

function table(rows: string[]): HTMLElement {
  const wrap = el('div', undefined, { class: 'md-table', tabindex: '0' });
  const grid = el('table');
  const head = el('thead');
  const headRow = el('tr');
  for (const cell of cells(rows[0])) headRow.append(inlineInto(el('th', undefined, { scope: 'col' }), cell));
  head.append(headRow);
  const body = el('tbody');
  for (const row of rows.slice(2)) {
    const line = el('tr');
    for (const cell of cells(row)) line.append(inlineInto(el('td'), cell));
    body.append(line);
  }
  grid.append(head, body);
  wrap.append(grid);
  return wrap;
}

/** A list from its item lines; items indented further nest under the one before (up to {@link MAX_BLOCK_DEPTH}). */
function list(lines: string[], depth: number): HTMLElement {
  const ordered = /^\s*\d/.test(lines[0]);
  const root = el(ordered ? 'ol' : 'ul');
  const indent = (line: string) => /^\s*/.exec(line)![0].length;
  const base = indent(lines[0]);
  let item: HTMLElement | undefined;
  let nested: string[] = [];
  const flush = () => {
    if (item && nested.length)
      item.append(
        LIST_ITEM.test(nested[0]) && depth < MAX_BLOCK_DEPTH
          ? list(nested, depth + 1)
          : inlineInto(el('p'), nested.join(' ')),
      );
    nested = [];
  };
  for (const line of lines) {
    if (indent(line) > base && item) {
      nested.push(line);
      continue;
    }
    flush();
    item = inlineInto(el('li'), line.replace(LIST_ITEM, ''));
    root.append(item);
  }
  flush();
  return root;
}

/**
 * Appends `text`'s inline markdown to `into`: `code`, **strong**, *em* or
 * _em_, [links](https://…) and bare https links. Scans left to right; what
 * is not markup is text.
 */
export function inlineInto(into: HTMLElement, text: string): HTMLElement {
  if (text.length > MAX_INLINE_CHARS) {
    into.append(text);
    return into;
  }
  let plain = '';
  const flush = () => {
    if (plain) into.append(plain);
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const code = /^(`{1,3})([^`]|[^`][\s\S]{0,2000}?[^`])\1(?!`)/.exec(rest);
    if (code) {
      flush();
      into.append(el('code', code[2]));
      i += code[0].length;
      continue;
    }
    const link = /^\[([^\]\n]{1,500})\]\(([^)\s]{1,2000})\)/.exec(rest);
    if (link) {
      flush();
      into.append(anchor(link[1], link[2]));
      i += link[0].length;
      continue;
    }
    const bare = /^https?:\/\/[^\s<>()]{1,2000}/.exec(rest);
    if (bare && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      flush();
      const url = bare[0].replace(/[.,;:!?]+$/, '');
      into.append(anchor(url, url));
      i += url.length;
      continue;
    }
    const strong = /^(\*\*|__)(?=\S)([\s\S]{0,1000}?\S)\1/.exec(rest);
    if (strong) {
      flush();
      into.append(inlineInto(el('strong'), strong[2]));
      i += strong[0].length;
      continue;
    }
    const em = /^(\*|_)(?=\S)([^*_\n]{0,1000}?\S)\1(?![\w*])/.exec(rest);
    if (em && (em[1] === '*' || i === 0 || !/\w/.test(text[i - 1]))) {
      flush();
      into.append(inlineInto(el('em'), em[2]));
      i += em[0].length;
      continue;
    }
    plain += text[i];
    i++;
  }
  flush();
  return into;
}

/** A link when `href` is http(s) or mailto; otherwise the link's words as text (a `javascript:` URL never becomes one). */
function anchor(words: string, href: string): HTMLElement | Text {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return document.createTextNode(words);
  }
  if (!['http:', 'https:', 'mailto:'].includes(url.protocol)) return document.createTextNode(words);
  const link = el('a', undefined, { href: url.href, rel: 'noopener noreferrer nofollow', target: '_blank' });
  return inlineInto(link, words);
}
