import { z } from 'zod';
import type { TurnInput, TurnResult } from '../agent/turn';
import { newContextId } from '../a2a/tasks/contextIds';
import { OWNER, type Principal } from '../principal';
import { emptySessionState, type SessionStore, type StoredMessage } from '../store/sessions';
import type { TaskTimeline } from '../store/timelines';
import type { Timelines } from './timeline';

/** The conversations replays run in: scratch, the owner's, never the original's. */
export const REPLAY_SESSION_PREFIX = 'replay:';
/** How long a replayed turn may run before it is aborted. */
export const REPLAY_TIMEOUT_MS = 5 * 60_000;
/** Earlier messages of the original conversation read at most (the runner replays its own last ones of these). */
const HISTORY_READ = 200;

/** What the owner changes in a replay: the message, one agent's system prompt, the model. Each optional. */
export const ReplayChanges = z
  .object({
    message: z.string().trim().min(1).max(32_000).optional(),
    instruction: z
      .object({ agent: z.string().min(1).max(200), text: z.string().min(1).max(100_000) })
      .strict()
      .optional(),
    model: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[\w.:/@+-]+$/, 'a model name: letters, digits and . : / @ + - _')
      .optional(),
  })
  .strict();
export type ReplayChanges = z.infer<typeof ReplayChanges>;

/** One side of a replay: a turn and how it ended. */
export interface ReplaySide {
  turnId?: string;
  sessionId: string;
  /** The answer (or question, or failure), redacted. */
  answer?: string;
  status?: string;
  agent?: string;
  ms?: number;
  inputTokens: number;
  outputTokens: number;
  /** The model steps' model names, in order, each once. */
  models: string[];
}

/** A replay's outcome: the original and the scratch turn, side by side. */
export interface ReplayOutcome {
  original: ReplaySide;
  replay: ReplaySide;
  changed: { message: boolean; instruction?: string; model?: string };
}

/** What a replay starts from, as the console's form shows it. */
export interface ReplayDraft {
  /** The turn's message (redacted): sent again unless the owner changes it. */
  message: string;
  /** The agent the turn started at. */
  startAgent?: string;
}

/** What {@link createReplays} reads and runs through. */
export interface ReplaySources {
  timelines: Timelines;
  sessions: () => SessionStore;
  /** The principal a stored caller id stands for (whose conversation the original was). */
  principalOf: (callerId: string) => Principal;
  /** Runs one turn to its end (the runner's `runToEnd`). */
  runTurn: (input: TurnInput) => Promise<TurnResult>;
  redact: (text: string) => string;
}

/** Why a replay could not run, with the HTTP status that says so. */
export class ReplayRefusal extends Error {
  constructor(
    readonly status: 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = 'ReplayRefusal';
  }
}

/**
 * Replays of stored turns (the console's, the owner's): the original turn's
 * conversation up to it is copied into a scratch conversation of the owner
 * (`replay:<id>`), and the turn runs there again as the owner, with the
 * changes asked (the message, one agent's system prompt, another model of
 * the node's model client) and no turn-end hook (memory). The original
 * conversation, session state and task are never touched; tools the replay
 * calls do run.
 * @example
 * const replays = createReplays({ timelines, sessions: () => stores.sessions, principalOf, runTurn, redact });
 * const outcome = await replays.replay(turnId, { model: 'gpt-4o-mini' });
 */
export function createReplays(sources: ReplaySources) {
  /** The original turn's conversation around it: what came before, its message and its answer. */
  const around = async (turn: TaskTimeline) => {
    const principal = sources.principalOf(turn.caller);
    const messages = await sources
      .sessions()
      .messages(principal, turn.sessionId, { visibleOnly: true, limit: HISTORY_READ });
    const before = messages.filter((m) => m.createdAt < turn.startedAt);
    const after = messages.filter((m) => m.createdAt >= turn.startedAt);
    return {
      before,
      message: after.find((m) => m.role === 'user'),
      answer: after.find((m) => m.role === 'assistant'),
    };
  };
  const stored = async (turnId: string) => {
    const turn = await sources.timelines.turn(turnId);
    if (!turn) throw new ReplayRefusal(404, `no turn ${turnId} is stored`);
    return turn;
  };

  return {
    /** What the replay form starts from. */
    async draft(turn: TaskTimeline): Promise<ReplayDraft> {
      const { message } = await around(turn);
      const startAgent = turn.steps.find((s) => s.kind === 'agent')?.name;
      return {
        message: message ? sources.redact(message.content) : (turn.asked ?? ''),
        ...(startAgent ? { startAgent } : {}),
      };
    },

    /** Replays the stored turn `turnId` with `changes`; resolves once the scratch turn has ended. */
    async replay(turnId: string, changes: ReplayChanges): Promise<ReplayOutcome> {
      const original = await stored(turnId);
      if (original.ms === undefined) throw new ReplayRefusal(409, `turn ${turnId} is still running`);
      const { before, message, answer } = await around(original);
      const text = changes.message ?? message?.content ?? original.asked;
      if (!text) throw new ReplayRefusal(409, `the message of turn ${turnId} is no longer stored: type one`);
      const sessionId = `${REPLAY_SESSION_PREFIX}${newContextId()}`;
      if (before.length > 0)
        await sources.sessions().commitTurn(OWNER, sessionId, before.map(copied), emptySessionState(), {
          newSession: true,
        });
      const startAgent = original.steps.find((s) => s.kind === 'agent')?.name;
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), REPLAY_TIMEOUT_MS);
      let result: TurnResult;
      try {
        result = await sources.runTurn({
          principal: OWNER,
          sessionId,
          text,
          signal: abort.signal,
          newSession: before.length === 0,
          ...(startAgent ? { startAgent } : {}),
          replay: {
            ...(changes.instruction ? { instructions: { [changes.instruction.agent]: changes.instruction.text } } : {}),
            ...(changes.model ? { model: changes.model } : {}),
          },
        });
      } catch (err) {
        if (!abort.signal.aborted) throw err;
        result = {
          status: 'failed',
          text: `the replay was stopped after ${REPLAY_TIMEOUT_MS / 60_000} min`,
          author: '',
        };
      } finally {
        clearTimeout(timer);
      }
      const [scratch] = await sources.timelines.turns({ sessionId, limit: 1 });
      return {
        original: side(original, answer ? sources.redact(answer.content) : undefined),
        replay: {
          ...(scratch ? side(scratch) : { sessionId, inputTokens: 0, outputTokens: 0, models: [] }),
          answer: sources.redact(result.text),
          status: result.status,
          ...(result.author ? { agent: result.author } : {}),
        },
        changed: {
          message: changes.message !== undefined && changes.message !== message?.content,
          ...(changes.instruction ? { instruction: changes.instruction.agent } : {}),
          ...(changes.model ? { model: changes.model } : {}),
        },
      };
    },
  };
}

/** A stored visible message as a message of the scratch conversation. */
function copied(message: StoredMessage) {
  return {
    role: message.role,
    content: message.content,
    visible: true,
    ...(message.author ? { author: message.author } : {}),
  };
}

/** One side of the comparison: the turn's outcome, tokens and models. */
function side(turn: TaskTimeline, answer?: string): ReplaySide {
  const models = turn.steps.filter((s) => s.kind === 'model');
  return {
    turnId: turn.id,
    sessionId: turn.sessionId,
    ...(answer !== undefined ? { answer } : turn.error ? { answer: turn.error } : {}),
    ...(turn.status !== undefined ? { status: turn.status } : {}),
    ...(turn.agent !== undefined ? { agent: turn.agent } : {}),
    ...(turn.ms !== undefined ? { ms: turn.ms } : {}),
    inputTokens: models.reduce((n, s) => n + (s.inputTokens ?? 0), 0),
    outputTokens: models.reduce((n, s) => n + (s.outputTokens ?? 0), 0),
    models: [...new Set(models.map((s) => s.name))],
  };
}

/** The console's replays. */
export type Replays = ReturnType<typeof createReplays>;

/** Whether a conversation is a replay's scratch one. */
export const isReplaySession = (sessionId: string) => sessionId.startsWith(REPLAY_SESSION_PREFIX);
