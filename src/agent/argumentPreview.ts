/** Keys whose values are credentials by name: shown as `•••` whatever they hold. */
const SECRET_KEY = /^(value|secret|password|passphrase|token|api_?key|private_?key|mnemonic|seed|authorization)$/i;
/** Longest string value kept whole; longer ones are cut with `…`. */
const MAX_VALUE_CHARS = 60;
/** Longest preview as a whole. */
const MAX_PREVIEW_CHARS = 200;

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function mask(value: unknown, key: string | undefined, redact: (text: string) => string, depth: number): unknown {
  if (key !== undefined && SECRET_KEY.test(key)) return '•••';
  if (typeof value === 'string') return shorten(redact(value), MAX_VALUE_CHARS);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, 10).map((v) => mask(v, undefined, redact, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k, redact, depth + 1)]));
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
  return shorten(JSON.stringify(mask(parsed, undefined, redact, 0)) ?? '', MAX_PREVIEW_CHARS);
}
