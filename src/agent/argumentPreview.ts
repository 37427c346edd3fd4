/** Keys whose values are credentials by name: shown as `•••` whatever they hold. */
const SECRET_KEY = /^(value|secret|password|passphrase|token|api_?key|private_?key|mnemonic|seed|authorization)$/i;
/** How much of the arguments a view keeps: each string value, each array, the nesting. */
interface MaskLimits {
  valueChars: number;
  arrayItems: number;
  depth: number;
}
/** A one-line preview: short values, the first ten items, four levels. */
const PREVIEW: MaskLimits = { valueChars: 60, arrayItems: 10, depth: 4 };
/** Longest preview as a whole. */
const MAX_PREVIEW_CHARS = 200;
/** What the model inspector keeps of a call's arguments (the exchange's own cap bounds the whole). */
const INSPECTED: MaskLimits = { valueChars: 4000, arrayItems: 200, depth: 12 };

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function mask(
  value: unknown,
  key: string | undefined,
  redact: (text: string) => string,
  depth: number,
  limits: MaskLimits,
): unknown {
  if (key !== undefined && SECRET_KEY.test(key)) return '•••';
  if (typeof value === 'string') return shorten(redact(value), limits.valueChars);
  if (value === null || typeof value !== 'object') return value;
  if (depth > limits.depth) return '…';
  if (Array.isArray(value))
    return value.slice(0, limits.arrayItems).map((v) => mask(v, undefined, redact, depth + 1, limits));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k, redact, depth + 1, limits)]));
}

/**
 * A tool call's arguments as a person may see them while the turn runs
 * (`chat`, A2A progress): credential-named keys masked, registered secrets
 * redacted, long strings cut and the whole kept to one short line. Arguments
 * that are not JSON are redacted and cut as text.
 * @example
 * previewArguments('{"name":"gh","value":"ghp_123"}', redact) // '{"name":"gh","value":"•••"}'
 */
export function previewArguments(raw: string, redact: (text: string) => string = (text) => text): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw || '{}');
  } catch {
    return shorten(redact(raw).replace(/\s+/g, ' '), MAX_PREVIEW_CHARS);
  }
  return shorten(JSON.stringify(mask(parsed, undefined, redact, 0, PREVIEW)) ?? '', MAX_PREVIEW_CHARS);
}

/**
 * A tool call's arguments as the model inspector keeps them: the same
 * masking as {@link previewArguments} (credential-named keys `•••`,
 * registered secrets redacted) with room to read them, as JSON text;
 * arguments that are not JSON are redacted text.
 * @example
 * inspectedArguments('{"name":"gh","value":"ghp_123"}', redact) // '{"name":"gh","value":"•••"}'
 */
export function inspectedArguments(raw: string, redact: (text: string) => string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw || '{}');
  } catch {
    return redact(raw);
  }
  return JSON.stringify(mask(parsed, undefined, redact, 0, INSPECTED)) ?? '';
}
