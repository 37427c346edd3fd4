/** Parses a stored JSON column; `undefined` for text that is not JSON (a row written by a broken version). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The SQL placeholders for a list of `count` values: `?,?,?`. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(',');
}
