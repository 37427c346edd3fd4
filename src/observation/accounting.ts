import { performance } from 'node:perf_hooks';
import {
  totalOf,
  type AccountStep,
  type AgentStep,
  type HopAccount,
  type RemoteStep,
  type ToolStep,
} from '../protocol/accounting';
import type { ObservedAttributes, ObservedKind, Observation } from './observer';
import { NOOP_OBSERVATION } from './observer';

/**
 * The account of one turn (issue 33), kept as the turn is observed: the
 * runner reports the turn's agents, model calls, tools and remote calls
 * through the one observer seam, and this observation of the turn — the
 * turn's own, beside the node's sinks — folds them into the hop's tree
 * (`protocol/accounting.ts`), nesting each remote's own tree under the call
 * that reached it. Whoever started the turn reads the tree once it ended.
 */

/** Who and where a turn runs, as its account names it. */
export interface TurnAccountStart {
  /** The node's public A2A URL. */
  node: string;
  /** The node's agent card name. */
  name: string;
  /** The principal's id, and who acted for it (outermost first). */
  principal: { id: string; actors?: readonly string[] };
  taskId?: string;
}

/**
 * @example
 * const account = new TurnAccount({ node: 'http://127.0.0.1:4000', name: 'hub', principal, taskId });
 * await runToEnd(runner, { ...input, account });
 * task.metadata[ACCOUNT_METADATA_KEY] = account.finish();
 */
export class TurnAccount {
  private readonly started = performance.now();
  private readonly hop: HopAccount;
  /** The turn's observation: what the runner reports the turn's steps to. */
  readonly observation: Observation;

  constructor(start: TurnAccountStart) {
    this.hop = {
      node: start.node,
      name: start.name,
      principal: start.principal.id,
      ...(start.principal.actors?.length ? { actors: [...start.principal.actors] } : {}),
      ...(start.taskId ? { taskId: start.taskId } : {}),
      startedAt: new Date().toISOString(),
      wallMs: 0,
      tokens: { input: 0, output: 0 },
      total: { input: 0, output: 0 },
      steps: [],
    };
    this.observation = new StepsObservation(this.started, this.hop.steps, undefined, () => {
      this.hop.wallMs = elapsed(this.started);
    });
  }

  /** The hop's tree as it stands (the turn ended: as it ran), its tokens and totals summed. */
  finish(): HopAccount {
    if (this.hop.wallMs === 0) this.hop.wallMs = elapsed(this.started);
    const tokens = { input: 0, output: 0 };
    const sum = (steps: readonly AccountStep[]) => {
      for (const step of steps) {
        if (step.kind !== 'agent') continue;
        tokens.input += step.tokens.input;
        tokens.output += step.tokens.output;
        sum(step.steps);
      }
    };
    sum(this.hop.steps);
    this.hop.tokens = tokens;
    this.hop.total = totalOf(this.hop);
    return this.hop;
  }
}

function elapsed(since: number): number {
  return Math.round(performance.now() - since);
}

/**
 * An observation whose children become steps: the turn (agents, and tools
 * or remotes run outside any agent) and each agent's step. The agent it
 * belongs to (when it is one) adds up its model calls.
 */
class StepsObservation implements Observation {
  constructor(
    private readonly hopStart: number,
    private readonly steps: AccountStep[],
    private readonly agent: AgentStep | undefined,
    private onEnd?: () => void,
  ) {}

  child(kind: ObservedKind, name: string): Observation {
    const started = performance.now();
    const timing = { name, startMs: Math.round(started - this.hopStart), wallMs: 0 };
    switch (kind) {
      case 'agent': {
        const step: AgentStep = {
          kind: 'agent',
          ...timing,
          tokens: { input: 0, output: 0 },
          modelCalls: 0,
          modelMs: 0,
          steps: [],
        };
        this.steps.push(step);
        return new StepsObservation(this.hopStart, step.steps, step, () => (step.wallMs = elapsed(started)));
      }
      case 'tool': {
        const step: ToolStep = { kind: 'tool', ...timing, ok: true };
        this.steps.push(step);
        return new EndingObservation((error) => {
          step.wallMs = elapsed(started);
          step.ok = error === undefined;
        });
      }
      case 'remote': {
        const step: RemoteStep = { kind: 'remote', ...timing, status: 'started' };
        this.steps.push(step);
        return new EndingObservation(
          (error) => {
            step.wallMs = elapsed(started);
            if (error !== undefined && step.status === 'started') step.status = 'failed';
          },
          (attributes) => {
            if (typeof attributes.status === 'string') step.status = attributes.status;
          },
          (hop) => (step.hop = hop),
        );
      }
      case 'model': {
        const agent = this.agent;
        if (!agent) return NOOP_OBSERVATION;
        return new EndingObservation(
          () => {
            agent.modelCalls += 1;
            agent.modelMs += elapsed(started);
          },
          (attributes) => {
            // The model call reports its usage once, at its end: what it says is its whole count.
            if (typeof attributes.inputTokens === 'number') agent.tokens.input += attributes.inputTokens;
            if (typeof attributes.outputTokens === 'number') agent.tokens.output += attributes.outputTokens;
          },
        );
      }
      case 'transfer':
      case 'turn':
        return NOOP_OBSERVATION;
    }
  }

  set(): void {}

  end(): void {
    const onEnd = this.onEnd;
    this.onEnd = undefined;
    onEnd?.();
  }

  traceparent(): undefined {
    return undefined;
  }
}

/** A leaf step: told its attributes, a peer's hop (a remote call) and its end, once. */
class EndingObservation implements Observation {
  private ended = false;
  constructor(
    private readonly onEnd: (error?: string) => void,
    private readonly onSet?: (attributes: ObservedAttributes) => void,
    private readonly onNest?: (hop: HopAccount) => void,
  ) {}

  child(): Observation {
    return NOOP_OBSERVATION;
  }

  set(attributes: ObservedAttributes): void {
    this.onSet?.(attributes);
  }

  nest(hop: HopAccount): void {
    this.onNest?.(hop);
  }

  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(error);
  }

  traceparent(): undefined {
    return undefined;
  }
}
