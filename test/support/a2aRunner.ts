import { RunEvents, type RunEvent } from '../../src/agent/events';
import type { TurnInput, TurnResult, TurnRunner } from '../../src/agent/turn';

/**
 * A scripted {@link TurnRunner} for the A2A server tests: the message text
 * picks a script (keywords below), events are yielded with real delays, the
 * AbortSignal is honoured (throws an AbortError mid-step, like the real
 * runner), and a session that was asked a question resumes on the next
 * message. Every call is recorded.
 *
 * - `slow`      : delegates, runs a tool in 10 steps of `stepMs`, then answers
 * - `[hold]`    : as the default (or `slow`), but before answering waits until released (`release(text)`)
 *                 or its abort: a task a test can find, cancel or stop while it runs, however busy the machine
 * - `approve`   : asks for approval (input-required); the next message in the session completes
 * - `fail`      : ends the turn failed with a readable reason
 * - `throw`     : the runner throws (a runtime fault)
 * - `remote`    : delegates to the remote agent `peer` (remote_call events)
 * - anything else: delegates to the operator, runs `exec_shell`, answers `echo: <text>`
 */
export class ScriptedA2ARunner implements TurnRunner {
  readonly calls: TurnInput[] = [];
  readonly aborted: string[] = [];
  /** Sessions waiting for the user's answer. */
  private readonly waiting = new Set<string>();
  /** Turns holding before their answer (`[hold]`): how each resumes, and its text. */
  private readonly holding = new Map<() => void, string>();
  /** What {@link release} was given: a turn whose text holds one of these does not hold (or stops). */
  private readonly released: string[] = [];

  constructor(private readonly stepMs = 20) {}

  async *run(input: TurnInput): AsyncGenerator<RunEvent, TurnResult> {
    this.calls.push(input);
    const root = 'lango-orchestrator';
    const wait = (ms = this.stepMs) => this.sleep(ms, input);
    yield RunEvents.agentStart(root);
    if (this.waiting.delete(input.sessionId)) {
      yield RunEvents.agentStart('operator');
      await wait();
      return { status: 'completed', text: `approved: ${input.text}`, author: 'operator' };
    }
    const text = input.text;
    if (text.includes('throw')) {
      await wait();
      throw new Error('model endpoint unreachable');
    }
    if (text.includes('fail')) {
      await wait();
      return { status: 'failed', text: 'the operator could not reach the workspace', author: 'operator' };
    }
    if (text.includes('approve')) {
      yield RunEvents.transfer(root, 'vault');
      await wait();
      this.waiting.add(input.sessionId);
      yield RunEvents.inputRequired('vault', 'Approve the payment of 5 USDC? (yes/no)');
      return { status: 'input-required', text: 'Approve the payment of 5 USDC? (yes/no)', author: 'vault' };
    }
    if (text.includes('remote')) {
      yield RunEvents.transfer(root, 'peer');
      yield RunEvents.remoteCall('peer', 'working', 'calling http://peer.example/');
      await wait();
      yield RunEvents.remoteCall('peer', 'completed');
      return { status: 'completed', text: 'peer says hi', author: 'peer' };
    }
    yield RunEvents.transfer(root, 'operator');
    await wait();
    yield RunEvents.toolStart('operator', 'exec_shell', 'call-1');
    const steps = text.includes('slow') ? 10 : 1;
    for (let i = 0; i < steps; i++) {
      await wait();
      yield RunEvents.textDelta('operator', '.');
    }
    if (text.includes('[hold]')) await this.hold(input);
    yield RunEvents.toolEnd('operator', 'exec_shell', 'call-1', true, 'exit 0');
    yield RunEvents.final('operator', `echo: ${text}`);
    return { status: 'completed', text: `echo: ${text}`, author: 'operator' };
  }

  /**
   * Lets the `[hold]` turns whose text contains `text` go on to their answer: those holding now and any that
   * reach their hold later (a release may come before the turn gets there).
   */
  release(text: string): void {
    this.released.push(text);
    for (const [resume, held] of [...this.holding]) if (held.includes(text)) resume();
  }

  /** Waits until {@link release}, or throws an AbortError when the turn is aborted first. */
  private hold(input: TurnInput): Promise<void> {
    return new Promise((resolve, reject) => {
      const signal = input.signal;
      const resume = () => {
        this.holding.delete(resume);
        signal?.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        this.holding.delete(resume);
        this.aborted.push(input.sessionId);
        const err = new Error('the turn was cancelled');
        err.name = 'AbortError';
        reject(err);
      };
      if (signal?.aborted) return abort();
      if (this.released.some((text) => input.text.includes(text))) return resolve();
      this.holding.set(resume, input.text);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  private sleep(ms: number, input: TurnInput): Promise<void> {
    return new Promise((resolve, reject) => {
      const signal = input.signal;
      const abort = () => {
        clearTimeout(timer);
        this.aborted.push(input.sessionId);
        const err = new Error('the turn was cancelled');
        err.name = 'AbortError';
        reject(err);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', abort);
        resolve();
      }, ms);
      if (signal?.aborted) abort();
      else signal?.addEventListener('abort', abort, { once: true });
    });
  }
}
