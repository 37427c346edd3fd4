import type { Agent, LlmAgent, RemoteAgent } from './agent';
import { assertNever, RunEvents, type RunEvent } from './events';
import type { TurnInput, TurnResult, TurnRunner } from './turn';
import { errorMessage, raceAbort, throwIfAborted } from '../errors';
import { callModel } from './modelCall';
import { callRemote } from './remoteCall';
import { executeToolCall, grantRefusal, DEFAULT_MAX_TOOL_RESULT_CHARS } from './toolCall';
import { transferTarget, treeIndexes, TRANSFER_TOOL } from './transfer';
import { resumePendingApproval } from './resume';
import { previewArguments } from './argumentPreview';
import { historyMessages, toolContext, TurnState, type ContextProvider, type TurnEndHook } from './turnState';
import type { Model, ModelMessage, ModelToolCall } from '../llm/model';
import type { Logger } from '../log/logger';
import { NOOP_OBSERVER, type Observer } from '../observation/observer';
import { ObservedTurn, observeToolCall } from './observedTurn';
import { createToolRunner, type ToolRunner } from './toolRun';
import type { Principal } from '../principal';
import { emptySessionState, type PendingApproval, type SessionStore } from '../store/sessions';

/** What {@link createRunner} needs. */
export interface RunnerOptions {
  /**
   * The live agent tree; each turn runs on the tree current when it starts
   * (peers join and leave), as the turn's principal may use it (its grant).
   */
  tree: { current(principal?: Principal): LlmAgent };
  /**
   * The tool family of a tool (the toolset's): a call to a tool of a family
   * the turn's principal is not granted is refused before it runs.
   */
  familyOf?: (toolName: string) => string | undefined;
  /** The model of every agent that has none of its own (the node's configured model). */
  model?: Model;
  sessions: SessionStore;
  logger: Logger;
  /** Transfers accepted per turn; further ones are refused and the agent must answer. */
  maxDelegationRounds: number;
  /** Model calls per agent per turn. */
  maxTurnsPerAgent: number;
  /** Text appended to an agent's system prompt for this turn (memory). */
  contextProvider?: ContextProvider;
  /** Called after each turn is committed, never awaited. */
  onTurnEnd?: TurnEndHook;
  /** Earlier visible messages replayed to the model (default 40). */
  historyLimit?: number;
  /** Cap on one tool result sent to the model (default 16,000 characters). */
  maxToolResultChars?: number;
  /** Masks registered secrets in what events show of a tool call's arguments. */
  redact?: (text: string) => string;
  /** Told of each turn, agent step, model, tool and remote call and transfer (metrics, traces, timelines). */
  observer?: Observer;
}

/** What one step of the loop decided. */
type Step =
  | { type: 'final'; text: string }
  | { type: 'delegate'; to: Agent }
  | { type: 'again' }
  | { type: 'rejected'; note: string }
  | { type: 'remote_failed'; note: string; advice: string }
  | { type: 'input_required'; question: string; pending?: PendingApproval; needs?: 'auth' }
  | { type: 'failed'; reason: string };

/** Note given to the orchestrator when a sub-agent's reply starts with `[REJECT]`. */
const REJECT_MARK = '[REJECT]';

/**
 * Creates the turn runner: one user message in, events streamed, one
 * {@link TurnResult} out, the session persisted. It also runs a single tool
 * as a person asks (`runTool`, the console's tool runner) with the same
 * grant check, parsing, redaction and observation as a model's call.
 * @example
 * const runner = createRunner({ tree, sessions, logger, maxDelegationRounds: 5, maxTurnsPerAgent: 10 });
 * const result = await runToEnd(runner, { principal: OWNER, sessionId: 'cli:1', text: 'hello' });
 */
export function createRunner(options: RunnerOptions): TurnRunner & ToolRunner {
  const logger = options.logger.child({ component: 'runner' });
  const maxToolChars = options.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS;
  const { sessions } = options;
  const redact = options.redact ?? ((text: string) => text);
  const observer = options.observer ?? NOOP_OBSERVER;
  // Each turn runs on the tree current when it starts; its index (names, parents, routes) is built once per tree.
  const indexOf = treeIndexes();

  /**
   * The loop: who acts next, what they decided, until someone answers, asks,
   * or it fails. How it ended is reported to the observer however it ends
   * (here, not in a generator around this one: every event would cross one
   * more layer).
   */
  async function* run(input: TurnInput): AsyncGenerator<RunEvent, TurnResult> {
    // Nothing listening and no account kept: turns run with no observer in the way.
    const observed = observer.active || input.account ? ObservedTurn.start(observer, input) : ObservedTurn.none;
    try {
      const { principal, sessionId } = input;
      const tree = indexOf(options.tree.current(principal));
      const fresh = input.newSession === true;
      const [state, history] = fresh
        ? [emptySessionState(), []]
        : await Promise.all([
            sessions.state(principal, sessionId),
            historyMessages(sessions, principal, sessionId, options.historyLimit ?? 40),
          ]);
      const turn = new TurnState({ input, tree, history, state, logger });
      /** Hands the turn to the store; the returned promise settles once it is committed. */
      // A replay tells no turn-end hook (memory): it is a scratch turn, not the principal's conversation.
      const end = (result: TurnResult) =>
        turn.commit(sessions, input.replay ? undefined : options.onTurnEnd).then(() => {
          observed.settle(result);
          return result;
        });
      throwIfAborted(turn.signal);

      let agent: Agent = startingAgent(turn);
      yield observed.enter(agent);
      if (state.pendingApproval && agent.kind === 'llm') {
        yield* resumePendingApproval(turn, agent, state.pendingApproval, { maxToolChars, redact });
      }
      // Whatever the session was waiting for, this message answers it.
      delete state.pendingApproval;
      delete state.activeAgent;

      for (;;) {
        throwIfAborted(turn.signal);
        const step: Step =
          agent.kind === 'llm' ? yield* llmStep(turn, agent, observed) : yield* remoteStep(turn, agent, observed);
        switch (step.type) {
          case 'final': {
            // Handed to the store before the event goes out, so a consumer that stops reading at `final` loses
            // nothing; the turn's result is returned only once the write has committed.
            turn.push({ role: 'assistant', content: step.text, author: agent.name }, true);
            const committed = end({ status: 'completed', text: step.text, author: agent.name });
            yield RunEvents.final(agent.name, step.text);
            return await committed;
          }
          case 'delegate':
            observed.step.child('transfer', step.to.name, { from: agent.name, to: step.to.name }).end();
            yield RunEvents.transfer(agent.name, step.to.name);
            agent = step.to;
            yield observed.enter(agent);
            continue;
          case 'again':
            continue;
          case 'rejected':
            yield RunEvents.rejected(agent.name, step.note);
            agent = handBack(turn, agent, step.note);
            yield observed.enter(agent);
            continue;
          case 'remote_failed':
            agent = handBack(turn, agent, step.note, step.advice);
            yield observed.enter(agent);
            continue;
          case 'input_required': {
            turn.push({ role: 'assistant', content: step.question, author: agent.name }, true);
            // The next message of this session goes straight back to whoever asked.
            state.activeAgent = agent.name;
            if (step.pending) state.pendingApproval = step.pending;
            const status = step.needs === 'auth' ? 'auth-required' : 'input-required';
            const committed = end({ status, text: step.question, author: agent.name });
            yield RunEvents.inputRequired(agent.name, step.question);
            return await committed;
          }
          case 'failed':
            turn.log.warn('turn failed', { agent: agent.name, reason: step.reason });
            return await end({ status: 'failed', text: step.reason, author: agent.name });
          default:
            return assertNever(step);
        }
      }
    } finally {
      observed.end();
    }
  }

  /** One model call of an LLM agent and the tool calls it asked for. */
  async function* llmStep(turn: TurnState, agent: LlmAgent, observed: ObservedTurn): AsyncGenerator<RunEvent, Step> {
    const calls = turn.modelCalls.get(agent.name) ?? 0;
    if (calls >= options.maxTurnsPerAgent) {
      return {
        type: 'failed',
        reason: `${agent.name} made ${calls} model calls in this turn without answering; stopped.`,
      };
    }
    turn.modelCalls.set(agent.name, calls + 1);
    const chosen = modelOf(agent, turn.input.replay?.model);
    if (!chosen.ok) return { type: 'failed', reason: chosen.reason };
    const model = chosen.model;

    const replaced = turn.input.replay?.instructions?.[agent.name];
    const context = replaced === undefined ? await agentContext(turn, agent) : undefined;
    const reply = yield* callModel(
      model,
      {
        agentName: agent.name,
        instruction: replaced ?? (context ? `${agent.instruction}\n\n${context}` : agent.instruction),
        messages: turn.messages(),
        tools: turn.tree.toolSpecs(agent.name),
        signal: turn.signal,
      },
      turn.log,
      observed.step,
      turn.input.onTextDelta,
    );
    if (!reply.ok) return { type: 'failed', reason: reply.reason };

    if (!reply.toolCalls.length) {
      if (reply.text.trimStart().startsWith(REJECT_MARK) && turn.tree.parentOf(agent.name)) {
        turn.push({ role: 'assistant', content: reply.text, author: agent.name });
        return { type: 'rejected', note: `${agent.name} rejected the task: ${reply.text.trim()}` };
      }
      // An empty reply would leave the user with nothing; say so instead.
      return { type: 'final', text: reply.text.trim() ? reply.text : `(${agent.name} returned an empty answer)` };
    }

    turn.push({ role: 'assistant', content: reply.text, toolCalls: reply.toolCalls, author: agent.name });
    for (const [index, call] of reply.toolCalls.entries()) {
      const later = reply.toolCalls.slice(index + 1);
      if (call.name === TRANSFER_TOOL) {
        const step = yield* transfer(turn, agent, call, reply.text);
        if (step.type !== 'again') {
          skip(turn, later, step.type === 'delegate' ? `control was transferred to ${step.to.name}` : 'the turn ended');
          return step;
        }
        continue;
      }
      const tool = agent.tools.find((t) => t.name === call.name);
      const refusal = options.familyOf && grantRefusal(turn.input.principal, call.name, options.familyOf(call.name));
      yield RunEvents.toolStart(agent.name, call.name, call.id, previewArguments(call.arguments, redact));
      const outcome = await observeToolCall(observed.step, agent.name, call, async () =>
        refusal
          ? { type: 'result', ok: false, content: refusal }
          : tool
            ? executeToolCall(tool, call.arguments, toolContext(turn, agent, call, false), maxToolChars)
            : {
                type: 'result',
                ok: false,
                content: `tool ${call.name} failed: no such tool; available: ${agent.tools.map((t) => t.name).join(', ') || 'none'}`,
              },
      );
      if (refusal) turn.log.warn('tool call refused by grant', { tool: call.name, caller: turn.input.principal.id });
      if (outcome.type === 'approval') {
        turn.push({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          content: 'waiting for the user to approve this call',
        });
        yield RunEvents.toolEnd(agent.name, call.name, call.id, false, 'approval required');
        skip(turn, later, `waiting for the user to approve ${call.name}`);
        return {
          type: 'input_required',
          question: outcome.question,
          pending: { agentName: agent.name, call, question: outcome.question },
        };
      }
      turn.push({ role: 'tool', toolCallId: call.id, name: call.name, content: outcome.content });
      yield RunEvents.toolEnd(agent.name, call.name, call.id, outcome.ok, redact(outcome.content).slice(0, 200));
    }
    return { type: 'again' };
  }

  /**
   * A `transfer_to_agent` call: accepted (a round is used), refused at the
   * limit, or answered with the valid names. An agent that tries again after
   * a refusal has the turn end with its text (or a plain explanation)
   * instead of looping.
   */
  async function* transfer(
    turn: TurnState,
    agent: LlmAgent,
    call: ModelToolCall,
    text: string,
  ): AsyncGenerator<RunEvent, Step> {
    const routes = turn.tree.routes(agent.name).map((r) => r.name);
    const target = transferTarget(call.arguments);
    const answer = (content: string) => turn.push({ role: 'tool', toolCallId: call.id, name: call.name, content });
    if (!target || !routes.includes(target)) {
      const what = target ? `no agent named "${target}"` : 'agent_name is missing';
      answer(`tool ${TRANSFER_TOOL} failed: ${what}. Valid agent names: ${routes.join(', ')}.`);
      return { type: 'again' };
    }
    if (turn.rounds >= options.maxDelegationRounds) {
      const reason = `this turn has used all ${options.maxDelegationRounds} delegation rounds`;
      answer(
        `Transfer to ${target} refused: ${reason}. Do not transfer again; answer the user now with what you have.`,
      );
      yield RunEvents.transferRefused(agent.name, target, reason);
      const refusals = (turn.refusals.get(agent.name) ?? 0) + 1;
      turn.refusals.set(agent.name, refusals);
      if (refusals > 1) {
        return {
          type: 'final',
          text:
            text.trim() ||
            `I could not finish this request within the limit of ${options.maxDelegationRounds} delegation rounds. Please try again, perhaps in smaller steps.`,
        };
      }
      return { type: 'again' };
    }
    turn.rounds += 1;
    answer(`Transferred to ${target}.`);
    return { type: 'delegate', to: turn.tree.get(target) as Agent };
  }

  /** One delegated request to a remote A2A agent; its outcome decides the turn. */
  async function* remoteStep(
    turn: TurnState,
    remote: RemoteAgent,
    observed: ObservedTurn,
  ): AsyncGenerator<RunEvent, Step> {
    const state = (turn.state.remoteState[remote.name] ??= {});
    const outcome = yield* callRemote(
      remote,
      {
        text: turn.input.text,
        context: conversationContext(turn.history),
        principal: turn.input.principal,
        subjectToken: turn.input.subjectToken,
        sessionId: turn.input.sessionId,
        signal: turn.signal,
        state,
        metadata: turn.input.metadata ?? {},
      },
      turn.log,
      observed.step,
    );
    switch (outcome.status) {
      case 'completed':
        return { type: 'final', text: outcome.text };
      case 'input-required':
        return { type: 'input_required', question: outcome.text };
      case 'auth-required':
        // §7.6.2: the caller is asked, through this node's own task, for what the remote agent needs.
        return { type: 'input_required', question: outcome.text, needs: 'auth' };
      case 'failed':
        return {
          type: 'remote_failed',
          note: `The remote agent ${remote.name} failed: ${outcome.reason}.`,
          advice: 'Route the request to another agent or answer it yourself.',
        };
      default:
        return assertNever(outcome);
    }
  }

  /** The model an agent's call goes to: its own or the node's, or the one a replay names of the same client. */
  function modelOf(agent: LlmAgent, replayModel?: string): { ok: true; model: Model } | { ok: false; reason: string } {
    const model = agent.model ?? options.model;
    if (!model) return { ok: false, reason: `agent ${agent.name} has no model configured` };
    if (replayModel === undefined) return { ok: true, model };
    if (!model.withModel) return { ok: false, reason: `the model ${model.name} cannot switch to ${replayModel}` };
    return { ok: true, model: model.withModel(replayModel) };
  }

  /** Fetches (once per agent per turn) the context provider's text; a failing provider adds nothing. */
  async function agentContext(turn: TurnState, agent: LlmAgent): Promise<string | undefined> {
    if (!options.contextProvider) return undefined;
    if (!turn.contexts.has(agent.name)) {
      let text: string | undefined;
      try {
        text = await raceAbort(
          options.contextProvider({
            principal: turn.input.principal,
            sessionId: turn.input.sessionId,
            text: turn.input.text,
            agentName: agent.name,
          }),
          turn.signal,
        );
      } catch (err) {
        throwIfAborted(turn.signal);
        turn.log.warn('context provider failed', { agent: agent.name, error: errorMessage(err) });
      }
      turn.contexts.set(agent.name, text?.trim() || undefined);
    }
    return turn.contexts.get(agent.name);
  }

  const tools = createToolRunner({
    tree: options.tree,
    familyOf: options.familyOf,
    logger: options.logger,
    observer,
    redact,
    maxToolChars,
  });
  return { run, runTool: (input) => tools.runTool(input) };
}

/**
 * Where the turn starts: an agent awaiting approval, a remote agent that
 * asked the user a question, the agent the input names, else the root.
 */
function startingAgent(turn: TurnState): Agent {
  const { pendingApproval, activeAgent } = turn.state;
  const named = turn.input.startAgent ? turn.tree.get(turn.input.startAgent) : undefined;
  if (!pendingApproval && !activeAgent && named) return named;
  const wanted = pendingApproval?.agentName ?? activeAgent;
  const agent = wanted ? turn.tree.get(wanted) : undefined;
  if (!agent) return turn.tree.root;
  if (pendingApproval && agent.kind !== 'llm') return turn.tree.root;
  if (!pendingApproval && agent.kind !== 'remote') return turn.tree.root;
  return agent;
}

/** Hands control back to the agent's parent (the orchestrator) with a note so it routes again or answers. */
function handBack(turn: TurnState, agent: Agent, note: string, advice?: string): LlmAgent {
  turn.push({
    role: 'user',
    content: `[note from the runtime] ${note}${advice ? ` ${advice}` : ''}`,
    runtimeNote: true,
    ...(advice ? { advice } : {}),
  });
  return turn.tree.parentOf(agent.name) ?? turn.tree.root;
}

/** Gives every call the model will not get a result for a short reason, so the transcript stays well-formed. */
function skip(turn: TurnState, calls: ModelToolCall[], why: string): void {
  for (const call of calls)
    turn.push({ role: 'tool', toolCallId: call.id, name: call.name, content: `not run: ${why}` });
}

/** Earlier messages a remote agent gets as context: the last few, each and all capped, so a long session stays cheap. */
const REMOTE_CONTEXT = { messages: 12, charsEach: 600, charsTotal: 4000 };

/** The session's visible history as `speaker: text` lines for a remote agent, newest kept when capping. */
function conversationContext(history: readonly ModelMessage[]): string[] {
  const lines: string[] = [];
  let total = 0;
  for (const message of [...history].reverse()) {
    if (lines.length >= REMOTE_CONTEXT.messages) break;
    if (message.role === 'tool' || (message.role === 'user' && message.runtimeNote)) continue;
    const speaker = message.role === 'user' ? 'user' : (message.author ?? 'assistant');
    const text =
      message.content.length > REMOTE_CONTEXT.charsEach
        ? `${message.content.slice(0, REMOTE_CONTEXT.charsEach)}…`
        : message.content;
    if (total + text.length > REMOTE_CONTEXT.charsTotal) break;
    total += text.length;
    lines.unshift(`${speaker}: ${text}`);
  }
  return lines;
}
