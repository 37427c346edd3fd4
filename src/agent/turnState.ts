import type { ModelMessage } from '../llm/model';
import type { Logger } from '../log/logger';
import { parseTraceparent, TRACEPARENT_KEY } from '../log/traceContext';
import type { NewSessionMessage, SessionState, SessionStore, StoredMessage } from '../store/sessions';
import type { TurnInput, TurnResult } from './turn';
import type { TreeIndex } from './transfer';

/** Appends text to an agent's system prompt for one turn (memory, knowledge); undefined adds nothing. */
export type ContextProvider = (request: {
  sessionId: string;
  text: string;
  agentName: string;
}) => Promise<string | undefined>;

/**
 * Called after a turn is persisted, without delaying the answer (memory
 * observers). `messages` is the session's whole visible conversation when
 * the hook runs (user messages and answers, oldest first, this turn
 * included, and a later turn of the session if one was already committed);
 * `turnMessages` every message this turn stored (tool calls, results and
 * notes included).
 */
export type TurnEndHook = (turn: {
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
          logger.warn('context provider failed', { index, error: err instanceof Error ? err.message : String(err) });
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

/**
 * Everything one turn carries between steps of the loop. Created when the
 * turn starts; the session is written only by {@link TurnState.commit}, once.
 */
export class TurnState {
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
  log: Logger;
  private readonly working: WorkingMessage[] = [];

  constructor(
    readonly input: TurnInput,
    readonly tree: TreeIndex,
    /**
     * What every agent sees first: the session's earlier conversation, only
     * user messages and the answers the user saw (with their authors). Earlier
     * turns' tool calls, transfers and notes are kept in the store for audit
     * but not replayed: they cost tokens, mention tools other agents do not
     * have, and an answer already carries what the user was told.
     */
    readonly history: ModelMessage[],
    /** The session's state, updated in memory and written with the turn. */
    readonly state: SessionState,
    baseLogger: Logger,
  ) {
    this.signal = input.signal ?? new AbortController().signal;
    const traceId = parseTraceparent(input.metadata?.[TRACEPARENT_KEY])?.traceId;
    this.log = baseLogger.child({ sessionId: input.sessionId, ...(traceId ? { traceId } : {}) });
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

  /** Persists the turn (messages and state) in one transaction and calls the turn-end hook without waiting. */
  commit(sessions: SessionStore, result: TurnResult, logger: Logger, onTurnEnd?: TurnEndHook): TurnResult {
    // A tool result is authored by the agent whose call it answers.
    const callAuthors = new Map<string, string>();
    for (const { message } of this.working) {
      if (message.role === 'assistant' && message.author)
        for (const call of message.toolCalls ?? []) callAuthors.set(call.id, message.author);
    }
    const stored = sessions.commitTurn(
      this.input.sessionId,
      this.working.map((w) => toStored(w, callAuthors)),
      this.state,
      { newSession: this.input.newSession },
    );
    if (onTurnEnd) {
      // Fire-and-forget: a slow or failing observer must never delay or fail the answer.
      const { sessionId } = this.input;
      // Read after the group commit that writes this turn (also a setImmediate, queued first), so the
      // hook forces no extra write; a turn of the same session committed in between is included too.
      // A new session's whole conversation is this turn: nothing to read back.
      const visible = () =>
        this.input.newSession ? stored.filter((m) => m.visible) : sessions.messages(sessionId, { visibleOnly: true });
      void new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => onTurnEnd({ sessionId, messages: visible(), turnMessages: stored }))
        .catch((err: unknown) =>
          logger.warn('turn-end hook failed', {
            sessionId: this.input.sessionId,
            error: err instanceof Error ? err.message : String(err),
          }),
        );
    }
    return result;
  }
}

/** The session's visible conversation as model messages. */
export function historyMessages(sessions: SessionStore, sessionId: string, limit: number): ModelMessage[] {
  return sessions.messages(sessionId, { visibleOnly: true, limit }).flatMap((m): ModelMessage[] => {
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
