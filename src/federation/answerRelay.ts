/**
 * A peer's streamed answer passed on as text deltas while it arrives, so
 * the node's own caller sees a remote agent's answer grow as it would see a
 * local one. Text goes on in whole words (up to the last whitespace), each
 * piece masked by the secret registry: a secret split across two of the
 * peer's chunks is masked as it would be in one piece. The held-back tail,
 * and anything the relay could not express as an addition (a peer that
 * rewrites an artifact it already sent), reach the caller with the settled
 * answer, which the node's answer artifact reconciles with what was relayed.
 */
export class AnswerRelay {
  /** By artifact id, the text received so far (relayed or held back). */
  private readonly received = new Map<string, string>();
  private pending = '';
  private stopped = false;

  constructor(private readonly redact: (text: string) => string) {}

  /** The text to pass on for one artifact chunk of the peer's ('' for none yet). */
  add(artifactId: string, text: string, append: boolean): string {
    if (this.stopped) return '';
    const before = this.received.get(artifactId);
    if (before !== undefined && !append) {
      // A rewrite cannot be told as an addition: the settled answer will say what it became.
      this.stopped = true;
      return '';
    }
    // Artifacts of one answer are joined by a line break (as ArtifactText joins them).
    if (before === undefined && this.received.size > 0) this.pending += '\n';
    this.received.set(artifactId, (before ?? '') + text);
    this.pending += text;
    const cut = lastWordEnd(this.pending);
    if (cut === 0) return '';
    const whole = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    return this.redact(whole);
  }

  /**
   * The text to pass on for an artifact as a task snapshot shows it whole: what
   * it adds to the chunks received (a send made again, or a stream resumed,
   * starts with the task as it stands, answer chunks already folded in).
   */
  addWhole(artifactId: string, text: string): string {
    const before = this.received.get(artifactId);
    if (before === undefined) return text ? this.add(artifactId, text, false) : '';
    if (text === before) return '';
    if (!text.startsWith(before)) return this.add(artifactId, text, false);
    return this.add(artifactId, text.slice(before.length), true);
  }
}

/** The index just past the last whitespace character of `text` (0 when it has none). */
function lastWordEnd(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) if (/\s/.test(text[i]!)) return i + 1;
  return 0;
}
