import type { Principal, SubjectToken } from '../principal';
import type { TurnAccount } from '../observation/accounting';
import type { RunEvent, TextDeltaEvent } from './events';

/** One user message to be answered by the agent tree. */
export interface TurnInput {
  /**
   * Whom the turn runs for: every store read and write of the turn (its
   * conversation, memories, secrets, jobs, knowledge) is scoped to it.
   */
  principal: Principal;
  /**
   * The token the principal presented (an OIDC token), carried beside it for
   * remote agents that call on its behalf (token exchange); never stored.
   */
  subjectToken?: SubjectToken;
  /** The conversation, within the principal's: an A2A contextId, `cli:<id>`, `cron:<job>`, … */
  sessionId: string;
  text: string;
  /** Cancels the turn: model call, tool and remote call alike. */
  signal?: AbortSignal;
  /**
   * Starts the turn at this agent of the tree instead of the root (a workflow
   * step names its specialist). Ignored while the session awaits an approval
   * or a remote agent's question; an unknown name starts at the root.
   */
  startAgent?: string;
  /**
   * True when the caller knows the session has no earlier turn (an A2A
   * context it just created): the runner then reads no state or history.
   */
  newSession?: boolean;
  /** The A2A task this turn works on, for observers (task timelines); the runner itself does not use it. */
  taskId?: string;
  /**
   * A replay of a stored turn (the console's): each named agent's system
   * prompt replaced for this turn by the text given (instead of its
   * instruction and context), every model call made with the named model of
   * the node's model client, and the turn-end hooks (memory) not told.
   */
  replay?: TurnReplay;
  /** Request metadata (A2A message metadata: trace context, hop path). Never shown to the model. */
  metadata?: Record<string, unknown>;
  /** Keeps the account of this turn (agents, tools, remotes, tokens), beside the node's observer. */
  account?: TurnAccount;
  /**
   * Hears each `text_delta` as the model streams it, instead of `run`
   * yielding it: a streamed chunk then crosses no generator layer of the
   * runner (each costs a promise and a microtask turn per chunk). Called
   * in order with the events `run` yields: a delta is handed over before
   * whatever `run` yields after it.
   */
  onTextDelta?: (event: TextDeltaEvent) => void;
}

/** What a replayed turn changes (see {@link TurnInput.replay}). */
export interface TurnReplay {
  /** System prompts by agent name. */
  instructions?: Readonly<Record<string, string>>;
  /** A model name the node's model client accepts (`Model.withModel`). */
  model?: string;
}

/** How a turn ended. A cancelled turn does not end: `run` throws an error named `AbortError`. */
export interface TurnResult {
  status: 'completed' | 'input-required' | 'auth-required' | 'failed';
  /** The answer, the question put to the user, or the readable failure reason. */
  text: string;
  /** The agent that answered (or asked). */
  author: string;
}

/**
 * Runs turns against the current agent tree. The A2A executor, the CLI and
 * the automator all go through this one contract.
 */
export interface TurnRunner {
  /** Streams what happens during the turn and returns how it ended. */
  run(input: TurnInput): AsyncGenerator<RunEvent, TurnResult>;
}

/** Drains a turn, handing each event to `onEvent`; the non-streaming way to run one. */
export async function runToEnd(
  runner: TurnRunner,
  input: TurnInput,
  onEvent: (event: RunEvent) => void = () => {},
): Promise<TurnResult> {
  const turn = runner.run(input.onTextDelta ? input : { ...input, onTextDelta: onEvent });
  for (;;) {
    const step = await turn.next();
    if (step.done) return step.value;
    onEvent(step.value);
  }
}
