import type { ContextRequest } from '../../agent/turnState';
import type { LangoConfig } from '../../config/schema';
import type { Model } from '../../llm/model';
import type { Logger } from '../../log/logger';
import { createDeadline } from '../../net/deadline';
import type { Principal } from '../../principal';
import type { MemoryStore, Observation, Reflection } from '../../store/memory';
import { condenseWithModel, estimateTokens, extractiveSummary } from './condense';

/** One persisted message of a session, as the runner hands it over after a turn. */
export interface SessionMessage {
  role: string;
  content: string;
  /** The agent that wrote it (assistant messages). */
  author?: string;
}

/** Options of {@link Chronicler}. */
export interface ChroniclerOptions {
  store: MemoryStore;
  /** The model that condenses; the node's, given when the family starts (until then: extractive summaries). */
  model?: Model;
  logger: Logger;
  settings: LangoConfig['observationalMemory'];
  /** Upper bound of one observer or reflector model call. */
  requestTimeoutMs?: number;
}

const OBSERVER_INSTRUCTION = `You are the observer of a conversation between a user and an assistant.
Condense the transcript below into at most 8 short observations, one per line, each starting with "- ".
Keep facts, decisions, preferences, names, numbers and open tasks; drop greetings and filler.
Write only the observations, nothing else.`;

const REFLECTOR_INSTRUCTION = `You are the reflector of a conversation's memory.
Condense the observations below into at most 4 short lines, each starting with "- ", keeping what will matter later:
stable facts, the user's preferences, decisions and unfinished work. Write only those lines.`;

/**
 * Observational memory: after turns whose new messages pass
 * `observeAfterTokens`, an observer condenses them into observations; once a
 * session holds `reflectAfterObservations` unreflected observations, a
 * reflector condenses them into a reflection. Both run through the node's
 * model and fall back to an extractive summary when its answer is unusable.
 * The work is queued per session and runs after the turn has answered.
 * Every memory belongs to the principal whose conversation it came from.
 */
export class Chronicler {
  readonly store: MemoryStore;
  private model: Model | undefined;
  private readonly logger: Logger;
  private readonly settings: LangoConfig['observationalMemory'];
  private readonly requestTimeoutMs: number;
  private readonly queues = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private closed = false;

  constructor(options: ChroniclerOptions) {
    this.store = options.store;
    this.model = options.model;
    this.logger = options.logger;
    this.settings = options.settings;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 120_000;
  }

  /**
   * The runner's hook after each committed turn: returns at once; observing
   * (and maybe reflecting) happens afterwards, one job at a time per session.
   */
  onTurnEnd(turn: { principal: Principal; sessionId: string; messages: SessionMessage[] }): void {
    const { principal, sessionId } = turn;
    const messages = turn.messages.slice();
    this.enqueue(principal, sessionId, () => this.observeIfDue(principal, sessionId, messages));
  }

  /** Records one observation of the principal's session now (observe_event). */
  async recordEvent(principal: Principal, sessionId: string, content: string): Promise<Observation> {
    const [observation] = await this.store.addObservations(principal, sessionId, [content], 'event');
    void this.enqueue(principal, sessionId, () => this.reflectIfDue(principal, sessionId));
    return observation;
  }

  /**
   * Condenses the session's unreflected observations into a reflection now,
   * after any queued work of the session; `undefined` when there is none.
   */
  reflectNow(principal: Principal, sessionId: string): Promise<Reflection | undefined> {
    let result: Reflection | undefined;
    return this.enqueue(principal, sessionId, async () => {
      result = await this.reflect(principal, sessionId);
    }).then(() => result);
  }

  /**
   * The principal's own memories relevant to `text` (reflections and
   * observations of any of its sessions, best first), as a prompt section
   * within `recallBudgetTokens`; `undefined` when nothing is relevant. Only
   * the principal's own, even for the owner: what one caller told the node
   * never reaches another's prompt.
   */
  async contextProvider(request: ContextRequest): Promise<string | undefined> {
    const memories = await this.store.recall(request.principal, request.text, { limit: 20, ownOnly: true });
    const header = 'Relevant memories from earlier conversations (observational memory):';
    let budget = this.settings.recallBudgetTokens - estimateTokens(header);
    const lines: string[] = [];
    for (const m of memories) {
      let line = `- [${m.type}${m.sessionId === request.sessionId ? ', this conversation' : ''}] ${m.content.replace(/\s+/g, ' ')}`;
      if (estimateTokens(line) + 1 > budget) {
        // Too long for what is left: a shortened memory beats none, down to a dozen tokens.
        if (budget < 12) break;
        line = `${line.slice(0, (budget - 1) * 4 - 1)}…`;
      }
      budget -= estimateTokens(line) + 1;
      lines.push(line);
    }
    return lines.length ? `${header}\n${lines.join('\n')}` : undefined;
  }

  /** Resolves once every queued job has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  /** Condenses through `model` from now on (the node's model, once it exists). */
  useModel(model: Model): void {
    this.model = model;
  }

  /** Cancels model calls in flight and refuses new work. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.idle();
  }

  /** Runs `job` after the session's earlier jobs; sessions are keyed by principal and id. */
  private enqueue(principal: Principal, sessionId: string, job: () => Promise<void>): Promise<void> {
    if (this.closed) return Promise.resolve();
    const key = `${principal.id}\u0000${sessionId}`;
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous
      // Yield first, so the answer's remaining work (sending it) is not held up by the model call that follows.
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => (this.closed ? undefined : job()))
      .catch((error: unknown) => this.logger.warn('observational memory job failed', { sessionId, error }))
      .finally(() => {
        if (this.queues.get(key) === next) this.queues.delete(key);
      });
    this.queues.set(key, next);
    return next;
  }

  private async observeIfDue(principal: Principal, sessionId: string, messages: SessionMessage[]): Promise<void> {
    const worthObserving = (m: SessionMessage) => m.content.trim() && (m.role === 'user' || m.role === 'assistant');
    const tokensOf = (list: SessionMessage[]) =>
      list.reduce((n, m) => (worthObserving(m) ? n + estimateTokens(m.content) : n), 0);
    // Fewer tokens in the whole session than the threshold: nothing can be due, and no progress row is read.
    if (tokensOf(messages) < this.settings.observeAfterTokens) return;
    let observed = await this.store.observedMessages(principal, sessionId);
    // A shorter history than recorded means the session was reset: observe it afresh.
    if (observed > messages.length) observed = 0;
    const fresh = messages.slice(observed).filter(worthObserving);
    if (tokensOf(fresh) < this.settings.observeAfterTokens) return;
    const speaker = (m: SessionMessage) =>
      m.role === 'assistant' ? `assistant${m.author ? ` (${m.author})` : ''}` : m.role;
    const transcript = fresh.map((m) => `${speaker(m)}: ${m.content.trim()}`).join('\n');
    const lines =
      (await this.condense(OBSERVER_INSTRUCTION, transcript, 8)) ??
      extractiveSummary(
        fresh.map((m) => ({ prefix: speaker(m), text: m.content })),
        Math.min(8, Math.max(2, Math.ceil(fresh.length / 2))),
      );
    if (this.closed) return;
    await this.store.addObservations(principal, sessionId, lines, 'observer');
    await this.store.setObservedMessages(principal, sessionId, messages.length);
    this.logger.debug('observed session', { sessionId, messages: fresh.length, observations: lines.length });
    await this.reflectIfDue(principal, sessionId);
  }

  private async reflectIfDue(principal: Principal, sessionId: string): Promise<void> {
    if ((await this.store.countUnreflected(principal, sessionId)) >= this.settings.reflectAfterObservations)
      await this.reflect(principal, sessionId);
  }

  private async reflect(principal: Principal, sessionId: string): Promise<Reflection | undefined> {
    const observations = await this.store.observations(principal, { sessionId, limit: 200, unreflectedOnly: true });
    if (observations.length === 0) return undefined;
    const text = observations.map((o) => `- ${o.content}`).join('\n');
    const lines =
      (await this.condense(REFLECTOR_INSTRUCTION, text, 4)) ??
      extractiveSummary(
        observations.map((o) => ({ text: o.content })),
        Math.min(4, Math.max(1, Math.ceil(observations.length / 3))),
      );
    if (this.closed) return undefined;
    const reflection = await this.store.addReflection(
      principal,
      sessionId,
      lines.join('\n'),
      observations.map((o) => o.id),
    );
    this.logger.debug('reflected session', { sessionId, observations: observations.length });
    return reflection;
  }

  private async condense(instruction: string, text: string, maxLines: number): Promise<string[] | undefined> {
    if (!this.model) return undefined;
    // Held by its own timer (`net/deadline.ts`): a model that never answers is given up on, on Node 20 too.
    const deadline = createDeadline(this.requestTimeoutMs, this.abort.signal);
    try {
      return await condenseWithModel({ model: this.model, instruction, text, signal: deadline.signal, maxLines });
    } finally {
      deadline.clear();
    }
  }
}
