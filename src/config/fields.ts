import { z } from 'zod';
import { DURATION_FORMS, durationMs, formatDuration } from '../duration';

/**
 * A duration key in the one grammar (`500ms`, `30s`, `5m`, `2h`, `1d`), its
 * default and its maximum: a longer one is refused, the key named. Each
 * maximum is documented (docs/configuration.md, "Durations"), and those of
 * keys a timer waits for are well within what a Node timer keeps.
 */
export function Duration(fallback: string, max: string) {
  const maxMs = durationMs(max)!;
  return z
    .string()
    .superRefine((text, ctx) => {
      const ms = durationMs(text);
      if (ms === undefined) ctx.addIssue({ code: 'custom', message: DURATION_FORMS });
      else if (ms > maxMs) ctx.addIssue({ code: 'custom', message: `at most ${max}` });
    })
    .default(fallback)
    .meta({ maxDuration: max });
}

/** The message of a milliseconds key past its maximum: `at most 60000 (1m)`. */
export const atMost = (maxMs: number) => `at most ${maxMs} (${formatDuration(maxMs)})`;

/** An http:// or https:// URL: the only schemes the node's clients speak (a typo like `htp:/` is caught here). */
export const HttpUrl = () => z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' });
