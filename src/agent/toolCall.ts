import type { z } from 'zod';
import { ApprovalRequired, describeToolFields, type AnyTool, type ToolContext } from './tool';
import { errorMessage, AbortError, raceAbort } from '../errors';
import { mayUseToolOf, type Principal } from '../principal';

/** How one tool call ended, as the loop needs to know it. */
export type ToolCallOutcome = { type: 'result'; ok: boolean; content: string } | { type: 'approval'; question: string };

/** Default cap on the characters of one tool result sent back to the model. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 16_000;

/**
 * Runs one tool call: arguments parsed once with the tool's zod schema, the
 * result stringified (JSON for objects) and capped. Bad arguments and thrown
 * errors become a short `tool X failed: …` result so the model can recover;
 * only the turn's cancellation propagates (as AbortError).
 */
export async function executeToolCall(
  tool: AnyTool,
  rawArguments: string,
  ctx: ToolContext,
  maxChars = DEFAULT_MAX_TOOL_RESULT_CHARS,
): Promise<ToolCallOutcome> {
  const failed = (why: string): ToolCallOutcome => ({
    type: 'result',
    ok: false,
    content: cap(`tool ${tool.name} failed: ${why}`, maxChars),
  });
  let json: unknown;
  try {
    json = rawArguments.trim() ? JSON.parse(rawArguments) : {};
  } catch {
    return failed('arguments are not valid JSON');
  }
  const parsed = (tool.parameters as z.ZodObject).safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`);
    // Name what the tool takes, so a caller who guessed a key (`data` for `text`) can correct it.
    const unknown = unknownKeys(tool, json).map((key) => `"${key}" is not an argument`);
    return failed(
      `invalid arguments: ${[...issues, ...unknown].join('; ')}; expected fields: ${describeToolFields(tool)}`,
    );
  }
  try {
    const result = await raceAbort(tool.execute(parsed.data, ctx), ctx.signal);
    return { type: 'result', ok: true, content: cap(stringify(result), maxChars) };
  } catch (err) {
    if (err instanceof ApprovalRequired) return { type: 'approval', question: err.question };
    // Only the turn's own cancellation aborts the turn; a tool's internal abort is its failure.
    if (ctx.signal.aborted) throw new AbortError();
    ctx.logger.warn('tool failed', { tool: tool.name, error: errorMessage(err) });
    return failed(errorMessage(err));
  }
}

/** Top-level keys of `json` the tool's schema does not declare (zod drops them silently). */
function unknownKeys(tool: AnyTool, json: unknown): string[] {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return [];
  const shape = (tool.parameters as z.ZodObject).shape as Record<string, unknown>;
  return Object.keys(json).filter((key) => !Object.prototype.hasOwnProperty.call(shape, key));
}

/**
 * The note a caller gets instead of a tool's result when the tool's family
 * is outside its grant (issue 11 A): the call never runs. Undefined when
 * the principal may use the tool.
 */
export function grantRefusal(principal: Principal, toolName: string, family: string | undefined): string | undefined {
  if (mayUseToolOf(principal, family)) return undefined;
  const what = family ? `the "${family}" tool family` : 'tools outside the families';
  return (
    `tool ${toolName} refused: the caller "${principal.id}" is not granted ${what}; it was not run. ` +
    'Tell the user this node does not allow it for them (the owner grants it in a2a.auth.callers).'
  );
}

/** A tool's return value as text: strings as they are, everything else as JSON. */
export function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'done';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Cuts `text` to `max` characters, saying how much was cut. */
export function cap(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n…[truncated ${text.length - max} characters]`;
}
