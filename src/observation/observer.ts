/**
 * The one seam through which the node reports what it does: a turn, each
 * agent's step, model calls (with tokens), tool calls, transfers, remote
 * calls (with hops) and store writes. The runner and the stores call it; the
 * sinks that listen (Prometheus metrics, OpenTelemetry spans, task
 * timelines) are chosen in `app.ts`. With nothing listening every call lands
 * on {@link NOOP_OBSERVATION}: no allocation, no clock read.
 *
 * This file sits at the bottom of the layers (beside `log/`) so that every
 * layer may report through it; the sinks live above the A2A layer.
 */

import type { HopAccount } from '../protocol/accounting';

/** What an observation covers; a child's kind nests under its parent's. */
export type ObservedKind = 'turn' | 'agent' | 'model' | 'tool' | 'transfer' | 'remote';

/**
 * What is known about an observation. The keys sinks read: `agent`, `model`,
 * `tool`, `peer`, `hops`, `inputTokens`, `outputTokens`, `status`, `args`
 * and `result` (raw: each sink redacts and shortens what it keeps).
 */
export type ObservedAttributes = Record<string, string | number | boolean | undefined>;

/** One message a model step was sent, as the node's model contract holds it (raw: a sink redacts what it keeps). */
export interface ObservedMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  /** The agent that wrote an assistant message. */
  author?: string;
  /** A tool message: the tool's name and the call it answers. */
  name?: string;
  toolCallId?: string;
  /** The tool calls an assistant message asked for (arguments as raw JSON text). */
  toolCalls?: readonly ObservedToolCall[];
  /** A note the runtime added for the model (not what the user typed). */
  runtimeNote?: boolean;
}

/** A tool call a model asked for: `arguments` is the raw JSON text. */
export interface ObservedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * What one model step was sent (its system prompt, the messages, the tools
 * offered) and what it answered (text and tool calls). Handed over by
 * reference, raw: only a sink that keeps it (the console's model inspector)
 * redacts, masks and caps it, so a node where nothing keeps it pays nothing.
 */
export interface ObservedExchange {
  instruction: string;
  messages: readonly ObservedMessage[];
  tools: readonly { name: string; description: string; parameters: Record<string, unknown> }[];
  /** The model's answer so far (all of it, once the call ended). */
  answer: { text: string; toolCalls: readonly ObservedToolCall[] };
}

/** One unit of work being observed: ended once; children are the steps inside it. */
export interface Observation {
  /** Starts a step inside this one (an agent's step in a turn, a tool call in a step). */
  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation;
  /** Adds what became known while it ran (token counts, the outcome). */
  set(attributes: ObservedAttributes): void;
  /** Ends it; `error` says why it failed. A second end is ignored. */
  end(error?: string): void;
  /**
   * A model step's exchange (told once, before it ends). Optional: a sink
   * that keeps no exchanges leaves it out, and a caller skips building one
   * when the observation has no such method.
   */
  exchange?(exchange: ObservedExchange): void;
  /**
   * The W3C `traceparent` naming this observation, to send with a call to a
   * peer so the peer's work nests under it; undefined when no tracer listens.
   */
  traceparent(): string | undefined;
  /**
   * A remote call's observation hears the peer's own account of the hop it
   * ran (`protocol/accounting.ts`), to nest under the call; only a sink
   * that keeps accounts has it.
   */
  nest?(hop: HopAccount): void;
}

/** Who a turn runs for and what it answers: where an observer starts. */
export interface TurnStart {
  /** The principal's id (`owner`, `bearer:<hash>`, …). */
  caller: string;
  sessionId: string;
  /** The A2A task the turn works on, when it runs for one. */
  taskId?: string;
  /** What the turn answers (raw: a sink that keeps it redacts and shortens it). */
  text?: string;
  /** The inbound W3C `traceparent`, when the request carried one. */
  traceparent?: string;
}

/** The node's observer: where turns and store writes are reported. */
export interface Observer {
  /** True when at least one sink listens (callers may skip building attributes otherwise). */
  readonly active: boolean;
  /** Starts observing one turn. */
  turn(start: TurnStart): Observation;
  /** One group commit took `ms` milliseconds; `statements`: how many it sent (PostgreSQL), BEGIN and COMMIT not counted. */
  storeWrite(ms: number, statements?: number): void;
  /**
   * A notification arrived on the replica's `LISTEN` connection (PostgreSQL):
   * every replica receives every one sent on a channel, whether or not it
   * follows the task it names, so this is the price of a wake-up per replica.
   */
  storeNotification(channel: string): void;
}

/** The observation of nothing: every method does nothing, `child` returns itself. */
export const NOOP_OBSERVATION: Observation = Object.freeze({
  child: () => NOOP_OBSERVATION,
  set: () => {},
  end: () => {},
  traceparent: () => undefined,
});

/** The observer of a node where nothing listens. */
export const NOOP_OBSERVER: Observer = Object.freeze({
  active: false,
  turn: () => NOOP_OBSERVATION,
  storeWrite: () => {},
  storeNotification: () => {},
});

/**
 * One observer over several sinks: each call goes to every sink; a sink's
 * traceparent (there is at most one tracer) is the combined one. No sinks
 * gives {@link NOOP_OBSERVER}; one sink is returned as it is.
 * @example
 * const observer = combineObservers([metrics.observer, tracing?.observer].filter(Boolean));
 */
export function combineObservers(observers: readonly Observer[]): Observer {
  const listening = observers.filter((o) => o.active);
  if (listening.length === 0) return NOOP_OBSERVER;
  if (listening.length === 1) return listening[0];
  return {
    active: true,
    turn: (start) => combineObservations(listening.map((o) => o.turn(start))),
    storeWrite: (ms, statements) => {
      for (const o of listening) o.storeWrite(ms, statements);
    },
    storeNotification: (channel) => {
      for (const o of listening) o.storeNotification(channel);
    },
  };
}

/**
 * One observation told to several (the node's sinks' and a turn's own
 * account): each call goes to every part.
 */
export function combineObservations(parts: readonly Observation[]): Observation {
  return new CombinedObservation(parts);
}

/**
 * One observation per sink, told together. A class, not a literal of
 * closures: an open stream holds a few of these for as long as it runs.
 */
class CombinedObservation implements Observation {
  constructor(private readonly parts: readonly Observation[]) {}

  exchange(exchange: ObservedExchange): void {
    for (const p of this.parts) p.exchange?.(exchange);
  }

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return new CombinedObservation(this.parts.map((p) => p.child(kind, name, attributes)));
  }

  set(attributes: ObservedAttributes): void {
    for (const p of this.parts) p.set(attributes);
  }

  end(error?: string): void {
    for (const p of this.parts) p.end(error);
  }

  traceparent(): string | undefined {
    for (const p of this.parts) {
      const value = p.traceparent();
      if (value) return value;
    }
    return undefined;
  }

  nest(hop: HopAccount): void {
    for (const p of this.parts) p.nest?.(hop);
  }
}
