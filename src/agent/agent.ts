import type { Observation } from '../observation/observer';
import type { AnyTool } from './tool';
import type { Model } from '../llm/model';
import type { RunEvent } from './events';
import type { Principal, SubjectToken } from '../principal';
import type { HopAccount } from '../protocol/accounting';

/**
 * An agent driven by a model: the orchestrator, a specialist, or the single
 * flat agent. Delegation happens through the `transfer_to_agent` function the
 * runtime offers when `subAgents` (or a parent) exist.
 */
export interface LlmAgent {
  readonly kind: 'llm';
  readonly name: string;
  /** Capability summary shown to other agents and in the agent card. */
  readonly description: string;
  /** The system prompt. */
  readonly instruction: string;
  readonly tools: AnyTool[];
  readonly subAgents: Agent[];
  /** Routing keywords (from the spec registry) the orchestrator matches requests against. */
  readonly keywords: string[];
  /** Absent when the tree is built only to be inspected. */
  readonly model?: Model;
}

/** What the runtime hands a remote agent for one delegated request. */
export interface RemoteInvocation {
  /** The user's latest message: what the remote agent is asked to do. */
  text: string;
  /**
   * The conversation before this message, oldest first, one `speaker: text`
   * line each (capped): sent with a new remote task so the peer knows what
   * "it" refers to. Empty for the first message of a session.
   */
  context: string[];
  /** Whom the turn runs for (a peer is told nothing of it; it scopes what the call may use). */
  principal: Principal;
  /** The token the turn's caller presented, exchanged for the call when the remote delegates on its behalf. */
  subjectToken?: SubjectToken;
  sessionId: string;
  signal: AbortSignal;
  /** Opaque per-session state the remote agent keeps between calls (remote taskId/contextId). */
  state: Record<string, unknown>;
  /** Trace and loop-prevention metadata carried to the peer. */
  metadata: Record<string, unknown>;
  /**
   * This call's observation: the remote agent reports its hops and endpoint
   * on it and sends its `traceparent` (when a tracer listens) so the peer's
   * spans nest under this call.
   */
  observation?: Observation;
}

/** How a remote call ended, and the remote's own account of what it ran when it sent one. */
export type RemoteOutcome = (
  | { status: 'completed'; text: string }
  | { status: 'input-required'; text: string }
  /** The remote agent needs authorization its caller must give (A2A §7.6): `text` says what. */
  | { status: 'auth-required'; text: string }
  | { status: 'failed'; reason: string }
) & { account?: HopAccount };

/**
 * A sub-agent served by another A2A node. The runtime streams its progress
 * events and takes its outcome as the turn's answer (or a failure note handed
 * back to the orchestrator).
 */
export interface RemoteAgent {
  readonly kind: 'remote';
  readonly name: string;
  readonly description: string;
  readonly keywords: string[];
  /** Where the card was loaded from; shown in discovery and `lango agents`. */
  readonly cardUrl: string;
  invoke(invocation: RemoteInvocation): AsyncGenerator<RunEvent, RemoteOutcome>;
}

/** A node of the agent tree. */
export type Agent = LlmAgent | RemoteAgent;

/**
 * What two agent names are compared by: names that differ only in case
 * clash (`Operator` would confuse a model as much as `operator`). The one
 * rule for the tree builder and the federation loader alike.
 */
export function agentNameKey(name: string): string {
  return name.toLowerCase();
}

/** Every agent in the tree under `root`, root first, depth first. */
export function walkAgents(root: Agent): Agent[] {
  const out: Agent[] = [root];
  if (root.kind === 'llm') for (const sub of root.subAgents) out.push(...walkAgents(sub));
  return out;
}
