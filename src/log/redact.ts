/**
 * Secret redaction for log lines. Keys that name credentials are masked
 * whatever their value; known secret values registered at runtime (API keys,
 * vault secrets) are masked wherever they appear in a string.
 */
const SECRET_KEY =
  /(api[-_]?key|apikey|token|secret|password|passphrase|authorization|private[-_]?key|master[-_]?key|credential)/i;

export const REDACTED = '[REDACTED]';

/** Holds the secret values known to this process so they can be masked in any text. */
export class SecretRegistry {
  /** An array, not a Set: every stored string is checked against them, and a loop over a Set allocates an iterator. */
  private readonly values: string[] = [];
  private learned = 0;

  /**
   * How many values have been registered so far: text masked when it was
   * lower may hold a value learned since (a secret stored by the very turn
   * whose message carried it), and is masked again.
   */
  get version(): number {
    return this.learned;
  }

  /** Registers a value to be masked; values shorter than 4 characters are ignored (too many false hits). */
  add(value: string | undefined | null): void {
    if (!value || value.length < 4 || this.values.includes(value)) return;
    this.values.push(value);
    this.learned += 1;
  }

  delete(value: string): void {
    const index = this.values.indexOf(value);
    if (index !== -1) this.values.splice(index, 1);
  }

  /** Masks every registered value inside `text`. */
  redactText(text: string): string {
    let out = text;
    const values = this.values;
    for (let i = 0; i < values.length; i++) if (out.includes(values[i]!)) out = out.split(values[i]!).join(REDACTED);
    return out;
  }

  /** Deep copy of `value` with secret-named keys and registered values masked. */
  redact(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.redactText(value);
    if (depth > 8 || value === null || typeof value !== 'object') return value;
    if (value instanceof Error) return { name: value.name, message: this.redactText(value.message) };
    if (Array.isArray(value)) return value.map((v) => this.redact(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = SECRET_KEY.test(k) && v !== undefined && v !== null && v !== '' ? REDACTED : this.redact(v, depth + 1);
    }
    return out;
  }
}
