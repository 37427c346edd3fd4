/**
 * Common English function and filler words: they match nearly every text,
 * so searches, keyword extraction, summaries and the local embedding all
 * leave them out. The node's one list.
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about all an and any are as at be but by can could did do does for from had has have how i if in into is ' +
    'it its just me my no not of ok okay on or our please should so some than thank thanks that the their them then ' +
    'there these they this to too was we were what when where which who whom why will with would yes you your'
  ).split(' '),
);
