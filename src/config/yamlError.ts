import { YAMLError } from 'yaml';

/**
 * A YAML syntax error as one line naming where to look: `line 4, column 10:
 * …`. The parser reports an unclosed quote or bracket where it gave up (often
 * the end of the file); the line that opened it is the one to fix, so that is
 * the line named.
 */
export function describeYamlError(text: string, err: unknown): string {
  const message = ((err as Error).message ?? String(err)).split(' at line ')[0]!.split('\n')[0]!;
  if (!(err instanceof YAMLError)) return message;
  const opener = /closing (["'])quote/.exec(message)?.[1] ?? /end with a ([\]}])/.exec(message)?.[1];
  const at = (opener ? unclosedOpener(text, err.pos[0], opener) : undefined) ?? position(text, err.pos[0]);
  const opened = opener && at.line !== position(text, err.pos[0]).line ? ' (opened here and never closed)' : '';
  return `line ${at.line}, column ${at.column}: ${message}${opened}`;
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** Where the last quote or bracket that is still open at `end` was opened, outside comments and other quotes. */
function unclosedOpener(text: string, end: number, closer: string): { line: number; column: number } | undefined {
  const open: number[] = [];
  let quote: string | undefined;
  let quoteStart = -1;
  for (let i = 0; i < Math.min(end, text.length); i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      const newline = text.indexOf('\n', i);
      i = newline < 0 ? text.length : newline;
    } else if ((c === '"' || c === "'") && startsScalar(text, i)) {
      quote = c;
      quoteStart = i;
    } else if (c === '[' || c === '{') open.push(i);
    else if ((c === ']' || c === '}') && open.length) open.pop();
  }
  if (closer === '"' || closer === "'") return quote === closer ? position(text, quoteStart) : undefined;
  return open.length ? position(text, open[open.length - 1]!) : undefined;
}

/** A quote opens a quoted scalar only where a value starts (`key: "…`, `- '…`, `["…`), not inside plain text (`don't`). */
function startsScalar(text: string, at: number): boolean {
  const before = text.slice(text.lastIndexOf('\n', at - 1) + 1, at).trimEnd();
  return before === '' || /[:\-[{,?]$/.test(before);
}
