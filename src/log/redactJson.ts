/**
 * Secrets stay in the vault (issue 11 G): what the A2A edge stores or sends
 * (task rows, push payloads) passes the node's redactor first, so a value a
 * caller stored as a secret never sits in the task table or reaches a
 * webhook, even when the caller's own message held it.
 */

/** Masks known secret values in a string (the node's `SecretRegistry.redactText`). */
export type Redact = (text: string) => string;

/**
 * `json` (JSON text) with every known secret masked in its string values.
 * Text without a secret is returned as is after one scan; otherwise the
 * values are masked one by one, so the result is still valid JSON.
 */
export function redactJsonText(json: string, redact: Redact): string {
  if (redact(json) === json) return json;
  return JSON.stringify(redactStrings(JSON.parse(json) as unknown, redact));
}

/** A copy of plain JSON data with every string value (never a key) passed through `redact`. */
export function redactStrings(value: unknown, redact: Redact): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, redact)]));
  }
  return value;
}
