import type { Locator } from 'playwright-core';
import { z } from 'zod';
import { ToolExecutionError } from '../../errors';

/** Default characters of page text returned to the model. */
export const DEFAULT_MAX_CHARS = 2_000;
/** Most characters of page text a model may ask for at once. */
export const MAX_CHARS = 20_000;

/** The optional `maxChars` argument of the tools that return page text, described for the model as `what`. */
export const maxCharsArgument = (what: string) =>
  z.number().int().min(100).max(MAX_CHARS).optional().describe(`${what} (default ${DEFAULT_MAX_CHARS})`);

/** Text cut to size, saying whether it was cut. */
export interface Excerpt {
  text: string;
  truncated: boolean;
}

/** Collapses the blank runs `innerText` leaves and cuts to `maxChars`. */
export function excerpt(raw: string, maxChars: number): Excerpt {
  const text = raw
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return text.length > maxChars ? { text: text.slice(0, maxChars), truncated: true } : { text, truncated: false };
}

/** The rendered text of the first element `locator` matches, as an excerpt. */
export async function readText(locator: Locator, maxChars: number, timeoutMs: number): Promise<Excerpt> {
  return excerpt(await locator.first().innerText({ timeout: timeoutMs }), maxChars);
}

/** The first line of an error: Playwright appends a long call log the model does not need. */
export function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0];
}

/** Rethrows `error` as a short {@link ToolExecutionError} prefixed with what was being done. */
export function toolError(what: string, error: unknown): ToolExecutionError {
  if (error instanceof ToolExecutionError) return error;
  return new ToolExecutionError(`${what}: ${firstLine(error)}`, {
    cause: error,
  });
}
