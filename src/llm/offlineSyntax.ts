import type { ModelRoute, ModelToolSpec } from './model';

/** A tool call read from the user's text: the tool and its arguments as JSON text. */
export interface ParsedToolCall {
  name: string;
  arguments: string;
}

const NAME_CHAR = /[A-Za-z0-9_-]/;
const PAIRS = /^(?:\s*[A-Za-z_][\w-]*=(?:"(?:[^"\\]|\\.)*"|'[^']*'|\S+))+\s*$/;
const PAIR = /([A-Za-z_][\w-]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S+)/g;

/**
 * Finds the first tool the text names and its arguments: a JSON object right
 * after the name (`exec_shell {"command":"echo hi"}`), else `key=value`
 * pairs on the rest of the line (`fs_read path=notes.txt`, quotes for
 * spaces), else, for a tool with one required string argument, the rest of
 * the line as that argument (`exec_shell echo hi`). Unreadable JSON is
 * passed on as it is, so the runtime tells the user what was wrong.
 */
export function parseToolCall(text: string, tools: ModelToolSpec[]): ParsedToolCall | undefined {
  const found = findToolName(
    text,
    tools.map((t) => t.name),
  );
  if (!found) return undefined;
  const rest = text.slice(found.end);
  const line = rest.split('\n')[0]!.trim();
  if (rest.trimStart().startsWith('{')) return { name: found.name, arguments: jsonObjectAt(rest.trimStart()) };
  if (!line) return { name: found.name, arguments: '{}' };
  if (PAIRS.test(line)) {
    const args: Record<string, unknown> = {};
    for (const [, key, raw] of line.matchAll(PAIR)) args[key!] = pairValue(raw!);
    return { name: found.name, arguments: JSON.stringify(args) };
  }
  const single = soleStringArgument(tools.find((t) => t.name === found.name)!);
  return { name: found.name, arguments: single ? JSON.stringify({ [single]: line }) : '{}' };
}

/** The earliest whole-word mention of one of `names` (the longest at the same position). */
export function findToolName(text: string, names: string[]): { name: string; end: number } | undefined {
  let best: { name: string; start: number; end: number } | undefined;
  for (const name of names) {
    let from = 0;
    for (;;) {
      const start = text.indexOf(name, from);
      if (start < 0) break;
      const end = start + name.length;
      const bounded =
        (start === 0 || !NAME_CHAR.test(text[start - 1]!)) && (end === text.length || !NAME_CHAR.test(text[end]!));
      if (bounded) {
        if (!best || start < best.start || (start === best.start && end > best.end)) best = { name, start, end };
        break;
      }
      from = start + 1;
    }
  }
  return best && { name: best.name, end: best.end };
}

/**
 * How well `text` matches a route: each keyword found as a word or phrase
 * scores 1, the route's name 2, one of its tools named exactly 10.
 */
export function routeScore(text: string, route: ModelRoute): number {
  const words = ` ${normalize(text)} `;
  const has = (phrase: string) => {
    const p = normalize(phrase);
    return p !== '' && (words.includes(` ${p} `) || words.includes(` ${p}s `) || words.includes(` ${p}es `));
  };
  let score = route.keywords.filter(has).length;
  if (has(route.name)) score += 2;
  if (route.toolNames?.length && findToolName(text, route.toolNames)) score += 10;
  return score;
}

/**
 * True when `text` names the agent `name` as a word of the sentence (any
 * case): `ask Weather to …`, `weather: …`; not inside a path, a file name or a
 * `key=value` (`notes/weather.txt`).
 */
export function namesAgent(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s,;!?'"(])${escaped}($|[\\s,;:!?'")]|[.](\\s|$))`, 'i').test(text);
}

/** True for a short greeting ("hello", "hi there", "good morning!"). */
export function isGreeting(text: string): boolean {
  const words = normalize(text).split(' ').filter(Boolean);
  if (!words.length || words.length > 5) return false;
  if (['hello', 'hi', 'hey', 'hiya', 'howdy', 'greetings', 'yo', 'hallo', 'hola'].includes(words[0]!)) return true;
  return words[0] === 'good' && ['morning', 'afternoon', 'evening', 'day'].includes(words[1] ?? '');
}

/** An example invocation of `tool` for help texts: `exec_shell {"command":"…"}`. */
export function exampleCall(tool: ModelToolSpec): string {
  const required = (tool.parameters.required as string[] | undefined) ?? [];
  const args = Object.fromEntries(required.map((key) => [key, '…']));
  return `${tool.name} ${JSON.stringify(args)}`;
}

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The text of the JSON object starting `text` (braces balanced outside strings), or the whole line when unbalanced. */
function jsonObjectAt(text: string): string {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(0, i + 1);
  }
  return text.split('\n')[0]!;
}

function pairValue(raw: string): unknown {
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw.slice(1, -1);
    }
  }
  if (raw.startsWith("'")) return raw.slice(1, -1);
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  return raw;
}

function soleStringArgument(tool: ModelToolSpec): string | undefined {
  const required = (tool.parameters.required as string[] | undefined) ?? [];
  const properties = (tool.parameters.properties ?? {}) as Record<string, { type?: unknown }>;
  if (required.length !== 1) return undefined;
  return properties[required[0]!]?.type === 'string' ? required[0] : undefined;
}
