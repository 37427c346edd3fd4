import { RunEvents, type RunEvent } from '../../src/agent/events';
import type { TurnInput, TurnResult, TurnRunner } from '../../src/agent/turn';

/**
 * A {@link TurnRunner} whose answer streams in `chunks` words (`w1 w2 …`),
 * one word per `release()`d step, so a test decides how far a stream has
 * got before it cuts it. A message with `ask` in it asks a question
 * instead (input-required). Every turn is counted; the AbortSignal ends a
 * waiting turn.
 */
export class PacedRunner implements TurnRunner {
  /** Turns started, by message text. */
  readonly turns: string[] = [];
  private credit = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly chunks: number) {}

  /** The whole answer a turn streams. */
  get answer(): string {
    return Array.from({ length: this.chunks }, (_, i) => `w${i + 1} `).join('');
  }

  /** Lets `steps` more words out (all of them with Infinity). */
  release(steps = Infinity): void {
    this.credit += steps;
    while (this.credit > 0 && this.waiting.length > 0) {
      this.credit -= 1;
      this.waiting.shift()!();
    }
  }

  async *run(input: TurnInput): AsyncGenerator<RunEvent, TurnResult> {
    this.turns.push(input.text);
    yield RunEvents.agentStart('operator');
    if (input.text.includes('ask')) return { status: 'input-required', text: 'Which one?', author: 'operator' };
    for (let i = 1; i <= this.chunks; i += 1) {
      await this.step(input.signal);
      yield RunEvents.textDelta('operator', `w${i} `);
    }
    return { status: 'completed', text: this.answer, author: 'operator' };
  }

  private step(signal: AbortSignal | undefined): Promise<void> {
    if (this.credit > 0) {
      this.credit -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        const index = this.waiting.indexOf(go);
        if (index >= 0) this.waiting.splice(index, 1);
        const err = new Error('the turn was aborted');
        err.name = 'AbortError';
        reject(err);
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.waiting.push(go);
    });
  }
}
