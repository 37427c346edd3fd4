import { STOPWORDS } from '../../stopwords';

/**
 * Turns free text into an FTS5 MATCH expression: every word becomes a quoted
 * term (so `-`, `:` or `AND` typed by a user or a model are words, not
 * syntax) and terms are OR-ed, leaving ranking to bm25. Returns `undefined`
 * when the text has no word at all.
 * Common English function words are dropped. `prefixes` also matches the
 * stem-ish prefix of words of 7 letters or more (for recall over precision).
 * @example
 * ftsQuery('WAL: readers & writers?'); // '"wal" OR "readers" OR "writers"'
 */
export function ftsQuery(text: string, options: { prefixes?: boolean } = {}): string | undefined {
  const all = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])];
  // Words like "is" or "the" match nearly everything; keep them only when nothing else is left.
  const content = all.filter((w) => !STOPWORDS.has(w));
  const words = (content.length ? content : all).slice(0, 32);
  if (words.length === 0) return undefined;
  // With prefixes, a long word also matches its other forms: "allergies" finds "allergic" through "allerg"*,
  // which the porter stemmer alone misses (allergi / allerg).
  const terms = words.flatMap((w) =>
    options.prefixes && w.length >= 7 ? [`"${w}"`, `"${w.slice(0, w.length - 3)}"*`] : [`"${w}"`],
  );
  return terms.join(' OR ');
}

/** bm25 is "lower is better" and negative; scores shown to a model read better as positive, higher first. */
export function bm25Score(rank: number): number {
  // Four significant digits: bm25 of a term found in half of a tiny table is near 1e-6, not 0.
  return Number((-rank).toPrecision(4));
}
