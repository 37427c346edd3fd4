import type { Agent } from './agent';
import { RunEvents, type RunEvent } from './events';
import type { ToolCallOutcome } from './toolCall';
import type { TurnInput, TurnResult } from './turn';
import type { ModelToolCall } from '../llm/model';
import { TRACEPARENT_KEY } from '../log/traceContext';
import { combineObservations, NOOP_OBSERVATION, type Observation, type Observer } from '../observation/observer';

/**
 * One turn as its observer sees it: the turn's observation and the step of
 * the agent acting now. The runner tells it when control passes to another
 * agent and how the turn ended; everything else hangs off {@link step}.
 */
export class ObservedTurn {
  private acting: Observation = NOOP_OBSERVATION;
  private failure: string | undefined = 'the turn was aborted';

  private constructor(private readonly turn: Observation) {}

  /** Starts observing `input`'s turn with `observer` (when it listens) and the turn's own account (when it keeps one). */
  static start(observer: Observer, input: TurnInput): ObservedTurn {
    const inbound = input.metadata?.[TRACEPARENT_KEY];
    const node = observer.active
      ? observer.turn({
          caller: input.principal.id,
          sessionId: input.sessionId,
          taskId: input.taskId,
          text: input.text,
          traceparent: typeof inbound === 'string' ? inbound : undefined,
        })
      : undefined;
    const own = input.account?.observation;
    return new ObservedTurn(node && own ? combineObservations([node, own]) : (node ?? own ?? NOOP_OBSERVATION));
  }

  /** A turn nobody observes. */
  static readonly none = new ObservedTurn(NOOP_OBSERVATION);

  /** The agent step running now: model, tool and remote calls and transfers nest under it. */
  get step(): Observation {
    return this.acting;
  }

  /** Control passes to `agent`: the previous step ends, its step begins. Returns the event saying so. */
  enter(agent: Agent): RunEvent {
    this.acting.end();
    this.acting = this.turn.child('agent', agent.name, { agent: agent.name });
    return RunEvents.agentStart(agent.name);
  }

  /** How the turn ended (a turn left by a throw keeps the failure "aborted"). */
  settle(result: TurnResult): void {
    this.turn.set({ status: result.status, agent: result.author });
    this.failure = result.status === 'failed' ? result.text : undefined;
  }

  /** Ends the step and the turn. */
  end(): void {
    this.acting.end(this.failure);
    this.turn.end(this.failure);
  }
}

/** Runs one tool call under `step`: its arguments, result and failure observed. */
export async function observeToolCall(
  step: Observation,
  agentName: string,
  call: ModelToolCall,
  run: () => Promise<ToolCallOutcome>,
): Promise<ToolCallOutcome> {
  const observation = step.child('tool', call.name, { agent: agentName, tool: call.name, args: call.arguments });
  let outcome: ToolCallOutcome;
  try {
    outcome = await run();
  } catch (err) {
    observation.end('aborted');
    throw err;
  }
  observation.set({ result: outcome.type === 'approval' ? 'approval required' : outcome.content });
  observation.end(outcome.type === 'result' && !outcome.ok ? outcome.content : undefined);
  return outcome;
}
