import { STOPWORDS } from '../../stopwords';

/**
 * Turns free text into a `to_tsquery('english', …)` expression, as
 * `../sqlite/fts.ts` does for FTS5: each word a term, terms OR-ed, common
 * function words dropped unless nothing else is left, and with `prefixes`
 * the stem-ish prefix of words of 7 letters or more too. Words are letters
 * and digits only, so nothing a user types is tsquery syntax. `undefined`
 * when the text has no word.
 * @example
 * tsQuery('WAL: readers & writers?'); // 'wal | readers | writers'
 */
export function tsQuery(text: string, options: { prefixes?: boolean } = {}): string | undefined {
  const all = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const content = all.filter((w) => !STOPWORDS.has(w));
  const words = (content.length ? content : all).slice(0, 32);
  if (words.length === 0) return undefined;
  const terms = words.flatMap((w) => (options.prefixes && w.length >= 7 ? [w, `${w.slice(0, w.length - 3)}:*`] : [w]));
  return terms.join(' | ');
}

/** ts_rank is small and positive; four significant digits, as the SQLite scores. */
export function rankScore(rank: number): number {
  return Number(rank.toPrecision(4));
}
