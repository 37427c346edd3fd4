import type { EmbeddingProvider } from './provider';
import { normalize } from './vector';
import { STOPWORDS } from '../../stopwords';

/** Default dimensionality of {@link createLocalEmbeddings}. */
export const LOCAL_EMBEDDING_DIMENSIONS = 512;

/** Strips common English suffixes so "deploying", "deployed" and "deploys" share a feature. */
function stem(word: string): string {
  for (const suffix of ['ations', 'ation', 'ments', 'ment', 'ings', 'ing', 'ies', 'ed', 'es', 's']) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

/**
 * FNV-1a, 32 bits, then murmur3's finaliser: FNV alone leaves the low bits
 * (the bucket) depending only on the low bits of each character, which
 * clusters features; the finaliser spreads every input bit over the word.
 */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Embeds one text: feature hashing ("the hashing trick") of word stems
 * (weight 1), word-stem bigrams (0.5) and character trigrams of each stem
 * (1 each, so a misspelt or inflected word still shares most features; at
 * lower trigram weights a typo loses to chance collisions).
 * A second hash bit picks the sign so collisions cancel instead of adding up.
 */
export function embedLocally(text: string, dimensions = LOCAL_EMBEDDING_DIMENSIONS): Float32Array {
  const v = new Float32Array(dimensions);
  const add = (feature: string, weight: number) => {
    const h = hash(feature);
    v[h % dimensions] += h & 0x80000000 ? -weight : weight;
  };
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w));
  const stems = words.map(stem);
  stems.forEach((s, i) => {
    add(`w:${s}`, 1);
    if (i > 0) add(`b:${stems[i - 1]} ${s}`, 0.5);
    const padded = `^${s}$`;
    for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 1);
  });
  return normalize(v);
}

/**
 * The embedded default provider: no network, no model weights, deterministic.
 * It is a lexical model, not a semantic one: it finds texts that share words,
 * word stems and spelling fragments with the query (typos and inflections
 * included), and it does not know that "car" and "automobile" mean the same.
 * For retrieval by meaning configure `embedding.provider: openai`.
 * @example
 * const local = createLocalEmbeddings(); // 512 dimensions
 * const [v] = await local.embed(['WAL keeps readers off the writer']);
 */
export function createLocalEmbeddings(options: { dimensions?: number } = {}): EmbeddingProvider {
  const dimensions = options.dimensions ?? LOCAL_EMBEDDING_DIMENSIONS;
  return {
    // v2: the node's one stopword list; vectors of the first version are embedded again.
    id: `local:hash-${dimensions}-v2`,
    dimensions: () => dimensions,
    embed: async (texts) => texts.map((t) => embedLocally(t, dimensions)),
  };
}
