import { z } from 'zod';
import { ToolExecutionError } from '../../errors';

/** Arguments of `fs_edit`: a line range or an exact snippet to replace with `newText`. */
export const FsEditArgs = z.object({
  path: z.string().describe('File path relative to the workspace'),
  newText: z.string().describe('The replacement text'),
  startLine: z.number().int().min(1).optional().describe('First line to replace (1-based)'),
  endLine: z.number().int().min(1).optional().describe('Last line to replace (inclusive); startLine when omitted'),
  oldText: z.string().min(1).optional().describe('Exact snippet to replace; must occur exactly once'),
});
export type FsEditArgs = z.infer<typeof FsEditArgs>;

/** What an edit changed, for the model. */
export interface EditSummary {
  mode: 'lines' | 'snippet';
  replacedLines?: [number, number];
  lines: number;
}

/**
 * Applies one `fs_edit` to a file's text. Exactly one of the two modes must be
 * given; a snippet that occurs zero or several times is refused rather than
 * guessed at, so the model re-reads and retries with more context.
 */
export function applyEdit(text: string, args: FsEditArgs): { text: string; summary: EditSummary } {
  const byLines = args.startLine !== undefined || args.endLine !== undefined;
  const bySnippet = args.oldText !== undefined;
  if (byLines === bySnippet) {
    throw new ToolExecutionError('give either startLine/endLine or oldText, not both and not neither');
  }
  if (bySnippet) {
    const oldText = args.oldText as string;
    const first = text.indexOf(oldText);
    if (first < 0) throw new ToolExecutionError('oldText was not found in the file');
    if (text.indexOf(oldText, first + 1) >= 0) {
      throw new ToolExecutionError('oldText occurs more than once; include more surrounding text to make it unique');
    }
    const out = text.slice(0, first) + args.newText + text.slice(first + oldText.length);
    return { text: out, summary: { mode: 'snippet', lines: countLines(out) } };
  }
  if (args.startLine === undefined) throw new ToolExecutionError('startLine is required with endLine');
  const start = args.startLine;
  const end = args.endLine ?? start;
  if (end < start) throw new ToolExecutionError(`endLine ${end} is before startLine ${start}`);
  const trailingNewline = text.endsWith('\n');
  const lines = text.length === 0 ? [] : (trailingNewline ? text.slice(0, -1) : text).split('\n');
  if (start > lines.length + 1 || end > lines.length) {
    if (!(start === lines.length + 1 && end === start)) {
      throw new ToolExecutionError(`line range ${start}-${end} is outside the file (${lines.length} lines)`);
    }
  }
  const replacement = args.newText === '' ? [] : args.newText.replace(/\n$/, '').split('\n');
  lines.splice(start - 1, Math.min(end, lines.length) - start + 1, ...replacement);
  const out = lines.join('\n') + (trailingNewline || (text.length === 0 && lines.length > 0) ? '\n' : '');
  return { text: out, summary: { mode: 'lines', replacedLines: [start, end], lines: lines.length } };
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}
