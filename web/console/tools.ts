/**
 * The console's tool runner: the owner picks a tool, fills a form generated
 * from the JSON Schema the model is given for its arguments, and runs it as
 * the owner through the node's runner (grant check, argument parsing,
 * redaction and a timeline, as for a model's call). A tool that asks first
 * shows its question and an "Approve and run" button.
 */
import { button, byId, el, getJson, postJson, showError } from './dom.js';
import { renderText } from './render.js';
import { go } from './route.js';

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
}
interface ConsoleTool {
  name: string;
  description: string;
  agent: string;
  schema: JsonSchema;
}
interface ToolRunResult {
  status: 'completed' | 'failed' | 'approval-required';
  agent?: string;
  text: string;
}

/** How a field's value becomes an argument. */
type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'list' | 'json';
/** Argument names whose text is usually long: a text area. */
const LONG_TEXT = /^(content|text|prompt|body|code|script|command|instruction|question|description|message)$/;

let tools: ConsoleTool[] = [];

const kindOf = (schema: JsonSchema): FieldKind => {
  if (Array.isArray(schema.enum)) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'string') return 'text';
  if (type === 'number') return 'number';
  if (type === 'integer') return 'integer';
  if (type === 'boolean') return 'boolean';
  if (type === 'array' && schema.items && (schema.items.type === 'string' || Array.isArray(schema.items.enum)))
    return 'list';
  return 'json';
};

/** One labelled control for an argument, with its description as the hint. */
function field(name: string, schema: JsonSchema, required: boolean): HTMLElement {
  const kind = kindOf(schema);
  const id = `arg-${name}`;
  const wrap = el('div', undefined, { class: `field ${kind}` });
  const hint = [
    schema.description,
    kind === 'list' ? 'one per line' : '',
    kind === 'json' ? 'JSON' : '',
    required ? '' : 'optional',
  ]
    .filter(Boolean)
    .join(' · ');
  const label = el('label', `${name}${required ? ' (required)' : ''}`, { for: id });
  let control: HTMLElement;
  if (kind === 'enum') {
    control = el('select', undefined, { id });
    if (!required) control.append(el('option', '—', { value: '' }));
    for (const value of schema.enum ?? []) control.append(el('option', String(value), { value: String(value) }));
  } else if (kind === 'boolean') {
    control = el('input', undefined, { id, type: 'checkbox' });
    if (schema.default === true) (control as HTMLInputElement).checked = true;
  } else if (kind === 'number' || kind === 'integer') {
    control = el('input', undefined, { id, type: 'number', step: kind === 'integer' ? '1' : 'any' });
    if (schema.minimum !== undefined) control.setAttribute('min', String(schema.minimum));
    if (schema.maximum !== undefined) control.setAttribute('max', String(schema.maximum));
  } else if (kind === 'text' && !LONG_TEXT.test(name)) {
    control = el('input', undefined, { id, type: 'text', autocomplete: 'off' });
  } else {
    control = el('textarea', undefined, { id, rows: kind === 'text' ? '3' : '4' });
  }
  control.dataset.arg = name;
  control.dataset.kind = kind;
  if (required && kind !== 'boolean') control.setAttribute('required', '');
  if (hint) {
    control.setAttribute('aria-describedby', `${id}-hint`);
    wrap.append(label, control, el('small', hint, { id: `${id}-hint`, class: 'muted hint' }));
  } else wrap.append(label, control);
  return wrap;
}

/** The arguments the form holds, typed by its schema; an unreadable field throws naming it. */
function formArguments(): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const control of byId('tool-fields').querySelectorAll<HTMLInputElement>('[data-arg]')) {
    const name = control.dataset.arg!;
    const kind = control.dataset.kind as FieldKind;
    if (kind === 'boolean') {
      args[name] = control.checked;
      continue;
    }
    const value = control.value.trim();
    if (!value) continue;
    if (kind === 'number' || kind === 'integer') args[name] = Number(value);
    else if (kind === 'list')
      args[name] = value
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean);
    else if (kind === 'json') {
      try {
        args[name] = JSON.parse(value);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    } else args[name] = value;
  }
  return args;
}

/** Shows the chosen tool's description and form. */
function choose(name: string): void {
  const tool = tools.find((t) => t.name === name);
  const fields = byId('tool-fields');
  byId('tool-result-box').hidden = true;
  if (!tool) {
    byId('tool-description').textContent = '';
    fields.replaceChildren();
    byId<HTMLButtonElement>('tool-run').disabled = true;
    return;
  }
  byId('tool-description').textContent = `${tool.agent} · ${tool.description}`;
  const required = new Set(tool.schema.required ?? []);
  const properties = Object.entries(tool.schema.properties ?? {});
  fields.replaceChildren(...properties.map(([arg, schema]) => field(arg, schema, required.has(arg))));
  if (properties.length === 0) fields.append(el('p', 'This tool takes no arguments.', { class: 'muted' }));
  byId<HTMLButtonElement>('tool-run').disabled = false;
}

/** Runs the chosen tool with the form's arguments (`approved`: the owner said yes to its question). */
async function run(approved: boolean): Promise<void> {
  const name = byId<HTMLSelectElement>('tool-select').value;
  const box = byId('tool-result-box');
  const result = byId('tool-result');
  const runButton = byId<HTMLButtonElement>('tool-run');
  box.hidden = false;
  byId('tool-approval').replaceChildren();
  let args: Record<string, unknown>;
  try {
    args = formArguments();
  } catch (err) {
    result.dataset.status = 'invalid';
    result.textContent = err instanceof Error ? err.message : String(err);
    return;
  }
  runButton.disabled = true;
  result.dataset.status = 'running';
  result.textContent = `Running ${name}…`;
  try {
    const { status, body } = await postJson<ToolRunResult & { error?: { message: string } }>(
      `/console/api/tools/${encodeURIComponent(name)}/run`,
      { arguments: args, approved },
    );
    if (body.error) throw new Error(body.error.message);
    result.dataset.status = status === 200 ? body.status : 'failed';
    byId('tool-result-title').textContent =
      body.status === 'completed'
        ? `${name} returned`
        : body.status === 'failed'
          ? `${name} failed`
          : `${name} asks first`;
    result.replaceChildren(renderText(body.text));
    if (body.status === 'approval-required') {
      byId('tool-approval').append(button('Approve and run', () => run(true), { class: 'approve' }));
    }
  } catch (err) {
    result.dataset.status = 'failed';
    result.textContent = err instanceof Error ? err.message : String(err);
  } finally {
    runButton.disabled = false;
  }
}

/** Lists the tools, grouped by the agent holding them. */
export async function loadTools(): Promise<void> {
  const select = byId<HTMLSelectElement>('tool-select');
  if (tools.length > 0) return;
  try {
    ({ tools } = await getJson<{ tools: ConsoleTool[] }>('/console/api/tools'));
  } catch (err) {
    return showError(byId('tool-fields'), err);
  }
  const groups = new Map<string, HTMLElement>();
  select.replaceChildren(el('option', 'Choose a tool…', { value: '' }));
  for (const tool of tools) {
    let group = groups.get(tool.agent);
    if (!group) {
      group = el('optgroup', undefined, { label: tool.agent });
      groups.set(tool.agent, group);
      select.append(group);
    }
    group.append(el('option', tool.name, { value: tool.name }));
  }
}

/** Chooses a tool (the address's `tool`), once the list is read. */
export async function openTool(name: string): Promise<void> {
  await loadTools();
  const select = byId<HTMLSelectElement>('tool-select');
  if (select.value === name || !tools.some((t) => t.name === name)) return;
  select.value = name;
  choose(name);
}

/** Wires the picker (each choice is an address) and the form. */
export function startTools(): void {
  byId('tool-select').addEventListener('change', (event) => {
    const name = (event.target as HTMLSelectElement).value;
    choose(name);
    go('tools', { tool: name });
  });
  byId('tool-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void run(false);
  });
}
