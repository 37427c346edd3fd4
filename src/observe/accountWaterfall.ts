import type { AccountStep, HopAccount, RemoteStep } from '../protocol/accounting';
import type { TaskTimeline } from '../store/timelines';
import type { RemoteSteps, WaterfallSpan } from './waterfall';

/**
 * The remote steps of a turn's waterfall from its task's account (issue
 * 33): each remote call of the turn, in the order the turn made it, gets
 * the steps the remote node reported for it (its hop nested under the
 * call, and the hops nested in that one, each named by its node). The
 * timeline and the account observe the same calls, so the n-th call to a
 * peer in one is the n-th in the other. Times are from the start of the
 * call (the remote's hop), as {@link RemoteSteps} takes them.
 * @example
 * const waterfall = buildWaterfall(turn, { remoteSteps: accountRemoteSteps(account) });
 */
export function accountRemoteSteps(account: HopAccount): RemoteSteps {
  const byPeer = new Map<string, RemoteStep[]>();
  const collect = (steps: readonly AccountStep[]) => {
    for (const step of steps) {
      if (step.kind === 'agent') collect(step.steps);
      else if (step.kind === 'remote') byPeer.set(step.name, [...(byPeer.get(step.name) ?? []), step]);
    }
  };
  collect(account.steps);
  return ({ step, peer, turn }) => {
    const nth = callsBefore(turn, step, peer);
    const hop = byPeer.get(peer)?.[nth]?.hop;
    return hop ? hopSpans(hop, 0) : undefined;
  };
}

/** How many calls to `peer` the turn made before its step `index`. */
function callsBefore(turn: TaskTimeline, index: number, peer: string): number {
  let calls = 0;
  for (let i = 0; i < index; i++) {
    const step = turn.steps[i];
    if (step?.kind === 'remote' && step.name === peer) calls += 1;
  }
  return calls;
}

/** A hop's steps as spans, `offsetMs` after the start of the span they nest under, each named by the hop's node. */
function hopSpans(hop: HopAccount, offsetMs: number): WaterfallSpan[] {
  const node = hop.name || hop.node;
  const spanOf = (step: AccountStep): WaterfallSpan => {
    const span: WaterfallSpan = {
      kind: step.kind,
      name: step.name,
      node,
      atMs: offsetMs + step.startMs,
      ms: step.wallMs,
      children: [],
    };
    if (step.kind === 'agent') {
      span.agent = step.name;
      span.inputTokens = step.tokens.input;
      span.outputTokens = step.tokens.output;
      span.children = step.steps.map(spanOf);
    } else if (step.kind === 'tool') {
      if (!step.ok) span.error = 'failed';
    } else {
      if (step.status === 'failed' || step.status === 'auth-required') span.error = step.status;
      if (step.hop) span.children = hopSpans(step.hop, offsetMs + step.startMs);
    }
    return span;
  };
  return hop.steps.map(spanOf);
}
