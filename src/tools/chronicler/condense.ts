import type { Model } from '../../llm/model';
import { STOPWORDS } from '../../stopwords';

/** Rough token count (4 characters a token): budgets here are soft, a tokenizer is not worth its weight. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Splits text into sentences, keeping each under `max` characters. */
export function sentences(text: string, max = 300): string[] {
  return (text.replace(/\s+/g, ' ').match(/[^.!?\n]+[.!?]*/g) ?? [])
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s))
    .map((s) => (s.length > max ? `${s.slice(0, max - 1)}…` : s));
}

/**
 * Extractive summary: scores each sentence by how frequent its content words
 * are across all the text (what the conversation keeps coming back to),
 * divided by the square root of its length so long sentences do not win by
 * size, and keeps the best `count` in their original order. Each item may
 * carry a prefix (the speaker) that is kept on its sentences.
 */
export function extractiveSummary(items: { prefix?: string; text: string }[], count: number): string[] {
  const pieces = items.flatMap((item, order) =>
    sentences(item.text).map((s) => ({ order, prefix: item.prefix, sentence: s, words: contentWords(s) })),
  );
  const frequency = new Map<string, number>();
  for (const p of pieces) for (const w of new Set(p.words)) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const scored = pieces.map((p, index) => ({
    ...p,
    index,
    score: p.words.reduce((sum, w) => sum + (frequency.get(w) ?? 0), 0) / Math.sqrt(Math.max(p.words.length, 1)),
  }));
  const best = scored
    .filter((p) => p.words.length >= 2)
    .sort((a, b) => b.score - a.score)
    .slice(0, count)
    .sort((a, b) => a.index - b.index);
  const chosen = best.length ? best : scored.slice(0, count);
  return chosen.map((p) => (p.prefix ? `${p.prefix}: ${p.sentence}` : p.sentence));
}

function contentWords(sentence: string): string[] {
  return (sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2 && !STOPWORDS.has(w));
}

/**
 * Asks `model` to condense `text` following `instruction` and returns the
 * bullet lines of its answer, or `undefined` when the answer is unusable:
 * empty, failed, no line of sensible length, not shorter than the input
 * (a model that echoes its prompt has not condensed anything), or mostly
 * words the input does not contain.
 */
export async function condenseWithModel(options: {
  model: Model;
  instruction: string;
  text: string;
  signal: AbortSignal;
  maxLines: number;
}): Promise<string[] | undefined> {
  let answer = '';
  try {
    for await (const event of options.model.stream({
      agentName: 'chronicler',
      instruction: options.instruction,
      messages: [{ role: 'user', content: options.text }],
      tools: [],
      signal: options.signal,
    })) {
      if (event.type === 'text_delta') answer += event.delta;
      if (event.type === 'tool_call') return undefined;
    }
  } catch {
    return undefined;
  }
  const lines = answer
    .split('\n')
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').trim())
    .filter((l) => l.length >= 8 && l.length <= 500)
    .slice(0, options.maxLines);
  if (lines.length === 0) return undefined;
  const total = lines.reduce((n, l) => n + l.length, 0);
  if (options.text.length > 400 && total >= options.text.length * 0.9) return undefined;
  // A canned reply ("I can't help with that") shares few words with the text it was meant to condense.
  const source = new Set(contentWords(options.text));
  const said = lines.flatMap(contentWords);
  if (said.length === 0 || said.filter((w) => source.has(w)).length / said.length < 0.3) return undefined;
  return lines;
}
