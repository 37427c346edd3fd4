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

/**
 * `value` with every string in it (never a key) passed through `redact`:
 * strings, arrays and plain objects, as deep as they go; anything else
 * (bytes, dates, numbers) as it is. What holds no secret is returned as the
 * very same object, so data without one costs a walk and no copy.
 */
export function redactStrings<T>(value: T, redact: Redact): T {
  if (typeof value === 'string') return redact(value) as T;
  if (typeof value !== 'object' || value === null) return value;
  // Loops without iterators or entry arrays: every task row and turn written walks here.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const masked = redactStrings(item, redact);
      if (masked !== item) (copy ??= value.slice())[index] = masked;
    }
    return (copy ?? value) as T;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    const masked = redactStrings(item, redact);
    if (masked !== item) (copy ??= { ...record })[key] = masked;
  }
  return (copy ?? value) as T;
}
