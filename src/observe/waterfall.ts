import type { TaskTimeline, TimelineStep } from '../store/timelines';

/**
 * One bar of a turn's waterfall: a step, when it started and how long it
 * took, and the steps that ran inside it (an agent's model, tool and remote
 * calls and transfers; a remote call's own steps on the remote node).
 */
export interface WaterfallSpan {
  kind: 'turn' | TimelineStep['kind'];
  name: string;
  agent?: string;
  /**
   * The node that ran it, when it is not this one: a remote lango node's
   * steps nested under the call that reached it carry the remote's name.
   */
  node?: string;
  /** Milliseconds from the start of the turn. */
  atMs: number;
  /** How long it took (none while it runs, or when the turn ended first). */
  ms?: number;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  hops?: number;
  /** Arguments (masked) and result, shortened, as the timeline keeps them. */
  args?: string;
  result?: string;
  /** Its index in the turn's `steps`; none for the turn itself and for steps another node ran. */
  step?: number;
  /** A model step whose exchange (what it was sent and answered) is kept: the inspector opens it. */
  inspectable?: boolean;
  children: WaterfallSpan[];
}

/**
 * The steps a remote node ran for one remote call of the turn, as spans
 * relative to the call's start: the seam where a lango peer's own steps
 * nest under the call that reached it. The console's turn route gives the
 * ones its task's account holds (`accountWaterfall.ts`: each lango peer's
 * hop, returned with its task, nested under the call that reached it).
 */
export type RemoteSteps = (call: { step: number; peer: string; turn: TaskTimeline }) => WaterfallSpan[] | undefined;

/**
 * A turn as a waterfall: the turn, each agent's step in it, and under each
 * agent its model, tool and remote calls and transfers, each with its start
 * and duration, built from the stored timeline alone (no tracing backend).
 * A step records the step it ran inside (`parent`); a row written before
 * that was kept nests under the agent step before it. A remote call's own
 * steps, when `remoteSteps` has them, nest under it, shifted to the turn's
 * clock and named by the node that ran them.
 * @example
 * const waterfall = buildWaterfall(turn);
 * waterfall.children[0].children.map((s) => s.kind); // ['model', 'transfer']
 */
export function buildWaterfall(turn: TaskTimeline, options: { remoteSteps?: RemoteSteps } = {}): WaterfallSpan {
  const root: WaterfallSpan = {
    kind: 'turn',
    name: turn.asked ?? 'turn',
    ...(turn.agent !== undefined ? { agent: turn.agent } : {}),
    atMs: 0,
    ...(turn.ms !== undefined ? { ms: turn.ms } : {}),
    ...(turn.error !== undefined ? { error: turn.error } : {}),
    children: [],
  };
  const inspected = new Set((turn.exchanges ?? []).map((e) => e.step));
  const spans: WaterfallSpan[] = [];
  let lastAgent: WaterfallSpan | undefined;
  turn.steps.forEach((step, index) => {
    const span = spanOf(step, index, inspected.has(index));
    spans.push(span);
    const parent =
      step.parent !== undefined && step.parent < index ? spans[step.parent] : step.kind === 'agent' ? root : lastAgent;
    (parent ?? root).children.push(span);
    if (step.kind === 'agent') lastAgent = span;
    if (step.kind === 'remote') {
      const nested = options.remoteSteps?.({ step: index, peer: step.name, turn });
      if (nested) span.children.push(...nested.map((child) => shifted(child, step.atMs, step.name)));
    }
  });
  return root;
}

function spanOf(step: TimelineStep, index: number, inspectable: boolean): WaterfallSpan {
  const { kind, name, agent, atMs, ms, error, inputTokens, outputTokens, hops, args, result } = step;
  return {
    kind,
    name,
    ...(agent !== undefined ? { agent } : {}),
    atMs,
    ...(ms !== undefined ? { ms } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(hops !== undefined ? { hops } : {}),
    ...(args !== undefined ? { args } : {}),
    ...(result !== undefined ? { result } : {}),
    step: index,
    ...(inspectable ? { inspectable: true } : {}),
    children: [],
  };
}

/** A remote node's span on this turn's clock, named by that node, with no step index of this turn. */
function shifted(span: WaterfallSpan, byMs: number, node: string): WaterfallSpan {
  const { step: _theirs, inspectable: _there, ...rest } = span;
  return {
    ...rest,
    node: span.node ?? node,
    atMs: span.atMs + byMs,
    children: span.children.map((child) => shifted(child, byMs, node)),
  };
}
