/**
 * Turns free text into an FTS5 MATCH expression: every word becomes a quoted
 * term (so `-`, `:` or `AND` typed by a user or a model are words, not
 * syntax) and terms are OR-ed, leaving ranking to bm25. Returns `undefined`
 * when the text has no word at all.
 * @example
 * ftsQuery('WAL: readers & writers?'); // '"wal" OR "readers" OR "writers"'
 */
export function ftsQuery(text: string): string | undefined {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])].slice(0, 32);
  if (words.length === 0) return undefined;
  return words.map((w) => `"${w}"`).join(' OR ');
}

/** bm25 is "lower is better" and negative; scores shown to a model read better as positive, higher first. */
export function bm25Score(rank: number): number {
  return Math.round(-rank * 1000) / 1000;
}
