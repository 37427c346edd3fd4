import type { ModelMessage, ModelToolCall } from '../llm/model';
import type { Logger } from '../log/logger';
import { parseTraceparent, TRACEPARENT_KEY } from '../log/traceContext';
import { errorMessage } from '../errors';
import type { Principal } from '../principal';
import type { NewSessionMessage, SessionState, SessionStore, StoredMessage } from '../store/sessions';
import type { ToolContext } from './tool';
import type { TurnInput } from './turn';
import type { TreeIndex } from './transfer';

/** What a context provider is asked for: the agent about to be called this turn, and for whom. */
export interface ContextRequest {
  /** Whose turn it is: a provider adds only this principal's own data (memories, inquiries). */
  principal: Principal;
  sessionId: string;
  /** The user's message for this turn. */
  text: string;
  agentName: string;
}

/** Appends text to an agent's system prompt for one turn (memory, knowledge); undefined adds nothing. */
export type ContextProvider = (request: ContextRequest) => Promise<string | undefined>;

/**
 * Called after a turn is committed, without delaying the answer (memory
 * observers). `messages` is the session's whole visible conversation when
 * the hook runs (user messages and answers, oldest first, this turn
 * included, and a later turn of the session if one was already committed);
 * `turnMessages` every message this turn stored (tool calls, results and
 * notes included).
 */
export type TurnEndHook = (turn: {
  principal: Principal;
  sessionId: string;
  messages: StoredMessage[];
  turnMessages: StoredMessage[];
}) => void | Promise<void>;

/**
 * One context provider from several (memory, knowledge): their texts joined
 * by blank lines, in order; a provider that throws is skipped, so one broken
 * source never costs the others.
 * @example
 * createRunner({ ..., contextProvider: combineContextProviders([memory.contextProvider, knowledge.contextProvider], logger) });
 */
export function combineContextProviders(providers: ContextProvider[], logger: Logger): ContextProvider {
  return async (request) => {
    const texts = await Promise.all(
      providers.map((provide, index) =>
        provide(request).catch((err: unknown) => {
          logger.warn('context provider failed', { index, error: errorMessage(err) });
          return undefined;
        }),
      ),
    );
    const parts = texts.map((t) => t?.trim()).filter((t): t is string => !!t);
    return parts.length ? parts.join('\n\n') : undefined;
  };
}

/** Author of the notes the runtime itself adds to the conversation. */
export const RUNTIME_AUTHOR = 'runtime';

/** One message of this turn's working set, and whether the user sees it. */
interface WorkingMessage {
  message: ModelMessage;
  visible: boolean;
}

/** What a {@link TurnState} starts from. */
export interface TurnStateOptions {
  input: TurnInput;
  tree: TreeIndex;
  /**
   * What every agent sees first: the session's earlier conversation, only
   * user messages and the answers the user saw (with their authors). Earlier
   * turns' tool calls, transfers and notes are kept in the store for audit
   * but not replayed: they cost tokens, mention tools other agents do not
   * have, and an answer already carries what the user was told.
   */
  history: ModelMessage[];
  /** The session's state, updated in memory and written with the turn. */
  state: SessionState;
  logger: Logger;
}

/**
 * Everything one turn carries between steps of the loop. Created when the
 * turn starts; the session is written only by {@link TurnState.commit}, once.
 */
export class TurnState {
  readonly input: TurnInput;
  readonly tree: TreeIndex;
  readonly history: ModelMessage[];
  readonly state: SessionState;
  readonly signal: AbortSignal;
  /** Transfers accepted so far in this turn. */
  rounds = 0;
  /** Model calls per agent in this turn. */
  readonly modelCalls = new Map<string, number>();
  /** Transfers refused per agent in this turn. */
  readonly refusals = new Map<string, number>();
  /** Per-agent text from the context provider, fetched once per turn. */
  readonly contexts = new Map<string, string | undefined>();
  /** This turn's log lines carry its session and, when the request has one, its W3C trace id. */
  readonly log: Logger;
  private readonly working: WorkingMessage[] = [];

  constructor(options: TurnStateOptions) {
    const { input } = options;
    this.input = input;
    this.tree = options.tree;
    this.history = options.history;
    this.state = options.state;
    this.signal = input.signal ?? new AbortController().signal;
    const traceId = parseTraceparent(input.metadata?.[TRACEPARENT_KEY])?.traceId;
    this.log = options.logger.child({ sessionId: input.sessionId, ...(traceId ? { traceId } : {}) });
    this.working.push({ message: { role: 'user', content: input.text }, visible: true });
  }

  /** Adds a working message (or, with `visible`, the answer the user sees). */
  push(message: ModelMessage, visible = false): void {
    this.working.push({ message, visible });
  }

  /** What the model is sent: the history, then this turn's messages in order (every agent sees the same turn). */
  messages(): ModelMessage[] {
    return [...this.history, ...this.working.map((w) => w.message)];
  }

  /**
   * Hands the turn (messages and state) to the store in one atomic write and
   * resolves once it is committed. The turn-end hook then runs, without
   * being awaited: a slow or failing observer never delays or fails the
   * answer.
   */
  async commit(sessions: SessionStore, onTurnEnd?: TurnEndHook): Promise<void> {
    // A tool result is authored by the agent whose call it answers.
    const callAuthors = new Map<string, string>();
    for (const { message } of this.working) {
      if (message.role === 'assistant' && message.author)
        for (const call of message.toolCalls ?? []) callAuthors.set(call.id, message.author);
    }
    const { principal, sessionId } = this.input;
    const stored = await sessions.commitTurn(
      principal,
      sessionId,
      this.working.map((w) => toStored(w, callAuthors)),
      this.state,
      { newSession: this.input.newSession },
    );
    if (!onTurnEnd) return;
    // A new session's whole conversation is this turn: nothing to read back.
    const visible = async () =>
      this.input.newSession
        ? stored.filter((m) => m.visible)
        : sessions.messages(principal, sessionId, { visibleOnly: true });
    void visible()
      .then((messages) => onTurnEnd({ principal, sessionId, messages, turnMessages: stored }))
      .catch((err: unknown) => this.log.warn('turn-end hook failed', { error: errorMessage(err) }));
  }
}

/** What a tool call of `agent` in this turn receives besides its arguments. */
export function toolContext(
  turn: TurnState,
  agent: { name: string },
  call: ModelToolCall,
  approved: boolean,
): ToolContext {
  return {
    signal: turn.signal,
    logger: turn.log.child({ component: 'tool', tool: call.name, agent: agent.name }),
    principal: turn.input.principal,
    sessionId: turn.input.sessionId,
    agentName: agent.name,
    approved,
  };
}

/** The session's visible conversation as model messages. */
export async function historyMessages(
  sessions: SessionStore,
  principal: Principal,
  sessionId: string,
  limit: number,
): Promise<ModelMessage[]> {
  return (await sessions.messages(principal, sessionId, { visibleOnly: true, limit })).flatMap((m): ModelMessage[] => {
    if (m.role === 'user') return [{ role: 'user', content: m.content }];
    if (m.role === 'assistant')
      return [{ role: 'assistant', content: m.content, ...(m.author ? { author: m.author } : {}) }];
    return [];
  });
}

function toStored({ message, visible }: WorkingMessage, callAuthors: Map<string, string>): NewSessionMessage {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content: message.content,
        visible,
        ...(message.runtimeNote ? { author: RUNTIME_AUTHOR } : {}),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        visible,
        ...(message.toolCalls?.length ? { toolCalls: message.toolCalls } : {}),
        ...(message.author ? { author: message.author } : {}),
      };
    case 'tool':
      return {
        role: 'tool',
        content: message.content,
        toolCallId: message.toolCallId,
        toolName: message.name,
        visible,
        ...(callAuthors.has(message.toolCallId) ? { author: callAuthors.get(message.toolCallId) } : {}),
      };
  }
}
