import type { Model, ModelEvent, ModelRequest } from '../../src/llm/model';

/** One scripted tool call; `arguments` may be an object (sent as JSON) or raw text (to script bad JSON). */
export interface ScriptedToolCall {
  name: string;
  arguments?: unknown;
  id?: string;
}

/**
 * One model turn to play:
 * - `{ text }` answers in one delta; `{ chunks }` streams several deltas;
 * - `{ toolCalls, text? }` asks for tool calls (after optional text);
 * - `{ error }` fails the call;
 * - `{ hang: true, chunks? }` streams `chunks` then waits until the request is aborted;
 * - a function computes the turn from the request.
 */
export type ScriptedTurn =
  | { text: string; usage?: { inputTokens: number; outputTokens: number } }
  | { chunks: string[]; hang?: false }
  | { toolCalls: ScriptedToolCall[]; text?: string; usage?: { inputTokens: number; outputTokens: number } }
  | { error: string | Error }
  | { hang: true; chunks?: string[] }
  | ((request: ModelRequest) => ScriptedTurn);

/** A model that plays a queue of turns, records every request, and fails loudly when the queue runs dry. */
export class ScriptedModel implements Model {
  readonly name = 'scripted';
  /** Every request, in order, with a copy of its messages as they were at call time. */
  readonly requests: ModelRequest[] = [];
  private readonly queue: ScriptedTurn[];
  private callCount = 0;
  /** Who waits for the n-th request, by n. */
  private readonly waiting = new Map<number, Array<(request: ModelRequest) => void>>();

  constructor(turns: ScriptedTurn[] = []) {
    this.queue = [...turns];
  }

  /** Adds turns to the end of the queue. */
  push(...turns: ScriptedTurn[]): this {
    this.queue.push(...turns);
    return this;
  }

  /** Turns not yet played. */
  get remaining(): number {
    return this.queue.length;
  }

  /** Resolves with the `count`-th request (1 = the first) once it has arrived: a call made off the test's path. */
  requested(count = 1): Promise<ModelRequest> {
    const arrived = this.requests[count - 1];
    if (arrived) return Promise.resolve(arrived);
    return new Promise((resolve) => this.waiting.set(count, [...(this.waiting.get(count) ?? []), resolve]));
  }

  /** The agents the model was called for, in order. */
  get agents(): string[] {
    return this.requests.map((r) => r.agentName);
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.callCount += 1;
    const recorded = { ...request, messages: [...request.messages], tools: [...request.tools] };
    this.requests.push(recorded);
    for (const resolve of this.waiting.get(this.requests.length) ?? []) resolve(recorded);
    this.waiting.delete(this.requests.length);
    const next = this.queue.shift();
    if (next === undefined) {
      throw new Error(
        `ScriptedModel: no scripted turn left for call #${this.callCount} (agent ${request.agentName}); last message: ${JSON.stringify(request.messages.at(-1))}`,
      );
    }
    const turn = resolve(next, request);
    if ('error' in turn) throw typeof turn.error === 'string' ? new Error(turn.error) : turn.error;
    if ('hang' in turn && turn.hang) {
      for (const delta of turn.chunks ?? []) yield { type: 'text_delta', delta };
      await new Promise<void>((_, reject) => {
        const fail = () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
        if (request.signal.aborted) fail();
        request.signal.addEventListener('abort', fail, { once: true });
      });
      return;
    }
    if ('chunks' in turn) {
      for (const delta of turn.chunks) yield { type: 'text_delta', delta };
      return;
    }
    if ('toolCalls' in turn) {
      if (turn.text) yield { type: 'text_delta', delta: turn.text };
      for (const [i, call] of turn.toolCalls.entries()) {
        const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
        yield {
          type: 'tool_call',
          call: { id: call.id ?? `call_${this.callCount}_${i}`, name: call.name, arguments: args },
        };
      }
      if (turn.usage) yield { type: 'usage', ...turn.usage };
      return;
    }
    yield { type: 'text_delta', delta: turn.text };
    if (turn.usage) yield { type: 'usage', ...turn.usage };
  }
}

type PlainTurn = Exclude<ScriptedTurn, (request: ModelRequest) => ScriptedTurn>;

function resolve(turn: ScriptedTurn, request: ModelRequest): PlainTurn {
  return typeof turn === 'function' ? resolve(turn(request), request) : turn;
}

/** A turn that answers `text`. */
export const say = (text: string): ScriptedTurn => ({ text });

/** A turn that calls one tool with `args`. */
export const callTool = (name: string, args: unknown = {}): ScriptedTurn => ({
  toolCalls: [{ name, arguments: args }],
});

/** A turn that calls `transfer_to_agent` for `agentName`. */
export const transferTo = (agentName: string): ScriptedTurn => callTool('transfer_to_agent', { agent_name: agentName });
