import { previewArguments } from '../agent/argumentPreview';
import { newContextId } from '../a2a/tasks/contextIds';
import { errorMessage } from '../errors';
import { redactStrings } from '../log/redactJson';
import type { Logger } from '../log/logger';
import { OWNER } from '../principal';
import type { TaskTimeline, TimelineQuery, TimelineStep, TimelineStore } from '../store/timelines';
import { pageRouter } from '../a2a/bindings/pageRouter';
import type { Pages } from '../a2a/bindings/routes';
import type {
  ObservedAttributes,
  ObservedExchange,
  ObservedKind,
  Observation,
  Observer,
} from '../observation/observer';
import { ExchangeKeeper, type ExchangeKeeping } from './exchanges';

export type { TaskTimeline, TimelineStep } from '../store/timelines';

/** What changed: a turn started or ended, or a step inside it did. */
export interface TimelineChange {
  what: 'turn' | 'step' | 'end';
  taskId?: string;
  /** The agent acting (a step's), when known. */
  agent?: string;
}

/** The timelines sink: the observer that records them, what it recorded, and the owner's JSON routes. */
export interface Timelines {
  readonly observer: Observer;
  /**
   * The owner's read of turns matching `query`, newest first: those running
   * here and the stored ones of every replica.
   */
  turns(query: TimelineQuery): Promise<TaskTimeline[]>;
  /** The owner's read of one turn by its id, with its model exchanges: running here, else stored. */
  turn(id: string): Promise<TaskTimeline | undefined>;
  /** Calls `listener` after each change (the console's live stream); returns the unsubscribe. */
  subscribe(listener: (change: TimelineChange) => void): () => void;
  /** `GET /console/api/timelines` and `GET /console/api/timelines/:taskId`. */
  readonly routes: Pages;
}

/** Longest argument, result or question text kept per step. */
const MAX_TEXT = 240;
/** Most steps kept per turn (a runaway turn keeps its first ones). */
const MAX_STEPS = 200;
/** Turns `GET /console/api/timelines` lists. */
const LISTED = 50;

/**
 * Records each turn's steps: timing, agent, tokens and hops, arguments
 * (masked as the chat shows them) and results redacted and shortened. A
 * running turn is held here; once it ends it is saved to the timeline store
 * (so it survives a restart and every replica reads it), which keeps the
 * newest (`observability.timeline.tasks`).
 * @example
 * const timelines = createTimelines({ store: () => stores.timelines, redact, clock: () => new Date(), logger });
 */
export function createTimelines(options: {
  /** Where finished turns go: read when a turn ends (the stores open after the observer is built). */
  store: () => TimelineStore;
  /** Keep each model step's exchange (what it was sent and answered) for the console's inspector. */
  exchanges?: boolean;
  redact: (text: string) => string;
  clock: () => Date;
  logger: Logger;
}): Timelines {
  /** Turns running here, by id. */
  const live = new Map<string, TaskTimeline>();
  const listeners = new Set<(change: TimelineChange) => void>();
  // Nobody watching (no console open): nothing is built.
  const notify = (timeline: TaskTimeline, what: TimelineChange['what'], agent?: string) => {
    if (listeners.size === 0) return;
    const change: TimelineChange = { what, taskId: timeline.taskId, ...(agent ? { agent } : {}) };
    for (const listener of listeners) {
      try {
        listener(change);
      } catch {
        // A watcher that fails (a closed stream) loses its update; the turn it watches goes on.
      }
    }
  };
  const shorten = (value: unknown) => {
    if (value === undefined) return undefined;
    const text = options.redact(String(value));
    return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
  };
  // An ended turn is the store's at once (a read there writes what it has queued): held here no longer, so under
  // load it dies young.
  const save = (timeline: TaskTimeline) => {
    live.delete(timeline.id);
    options
      .store()
      .save([timeline])
      .catch((err: unknown) =>
        options.logger.warn('a turn timeline could not be stored', {
          taskId: timeline.taskId,
          error: errorMessage(err),
        }),
      );
    notify(timeline, 'end', timeline.agent);
  };

  const keeping: ExchangeKeeping | undefined =
    options.exchanges === false ? undefined : { redact: options.redact, toolsSeen: new WeakMap() };
  const sink: TimelineSink = { notify, shorten, save, redact: options.redact, keeping };
  /** A listing leaves a running turn's exchanges out, as the store's does. */
  const listed = (t: TaskTimeline): TaskTimeline => {
    if (t.exchanges === undefined) return t;
    const { exchanges: _left, ...rest } = t;
    return rest;
  };

  const observer: Observer = {
    active: true,
    turn: (start) => {
      const started = performance.now();
      const timeline: TaskTimeline = {
        // Time-ordered (UUIDv7): a turn's row is appended to the id index, not put on a random page of it.
        id: newContextId(),
        taskId: start.taskId,
        sessionId: start.sessionId,
        caller: start.caller,
        asked: shorten(start.text),
        startedAt: options.clock().toISOString(),
        steps: [],
      };
      live.set(timeline.id, timeline);
      notify(timeline, 'turn');
      return new TurnObservation(sink, { timeline, started });
    },
    storeWrite: () => {},
    storeNotification: () => {},
  };

  const turns = async (query: TimelineQuery): Promise<TaskTimeline[]> => {
    const here = [...live.values()].filter(
      (t) =>
        (!query.taskIds || (t.taskId !== undefined && query.taskIds.includes(t.taskId))) &&
        (query.sessionId === undefined || t.sessionId === query.sessionId) &&
        (query.caller === undefined || t.caller === query.caller),
    );
    const stored = await options.store().list(OWNER, query);
    const held = new Set(here.map((t) => t.id));
    const newest = [...here.map(listed), ...stored.filter((t) => !held.has(t.id))]
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt) || (a.id < b.id ? 1 : -1))
      .slice(0, query.limit);
    // A running turn was masked with the secrets known as it went: one it has stored since is masked now.
    return redactStrings(newest, options.redact);
  };
  const turn = async (id: string): Promise<TaskTimeline | undefined> => {
    const running = live.get(id);
    const found = running
      ? { ...running, steps: [...running.steps], exchanges: [...(running.exchanges ?? [])] }
      : await options.store().turn(OWNER, id);
    // As a listing: what was kept before a secret became known is masked with it now.
    return found && redactStrings(found, options.redact);
  };

  const routes = pageRouter({ name: 'console', access: 'owner' });
  routes.get('/console/api/timelines', async (_req, res) => {
    try {
      res.json({ timelines: await turns({ limit: LISTED }) });
    } catch (err) {
      res.status(503).json({ error: { code: 503, message: `the timelines could not be read: ${errorMessage(err)}` } });
    }
  });
  routes.get('/console/api/timelines/:taskId', async (req, res) => {
    const taskId = req.params.taskId as string;
    try {
      // Oldest first: a task's turns in the order they ran.
      const found = (await turns({ taskIds: [taskId], limit: MAX_TURNS_PER_TASK })).reverse();
      if (found.length === 0) {
        res.status(404).json({ error: { code: 404, message: `no timeline for task ${taskId}` } });
        return;
      }
      res.json({ taskId, turns: found });
    } catch (err) {
      res.status(503).json({ error: { code: 503, message: `the timelines could not be read: ${errorMessage(err)}` } });
    }
  });
  const subscribe = (listener: (change: TimelineChange) => void) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  };
  return { observer, turns, turn, subscribe, routes: routes.pages() };
}

/** Turns of one task read at most (a task is answered again per message the user sends it). */
const MAX_TURNS_PER_TASK = 100;

/** A turn being recorded: its timeline, when it started, and what keeps its model steps' exchanges. */
interface TurnRecord {
  readonly timeline: TaskTimeline;
  /** `performance.now()` when the turn started. */
  readonly started: number;
  /** Made at the turn's first exchange (none when exchanges are not kept). */
  keeper?: ExchangeKeeper;
}

/** What every observation of one timelines sink shares: telling watchers, and shortening what it keeps. */
interface TimelineSink {
  notify(timeline: TaskTimeline, what: TimelineChange['what'], agent?: string): void;
  shorten(value: unknown): string | undefined;
  redact(text: string): string;
  /** How exchanges are kept; undefined: they are not (`observability.timeline.exchanges: false`). */
  keeping?: ExchangeKeeping;
  /** Stores a turn that ended (and tells watchers once it is stored). */
  save(timeline: TaskTimeline): void;
}

/**
 * A turn's timeline as it is recorded. Observations are classes, not
 * literals of closures: an open stream holds one per step while it runs.
 */
class TurnObservation implements Observation {
  private ended = false;

  constructor(
    private readonly sink: TimelineSink,
    private readonly turn: TurnRecord,
  ) {}

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return StepObservation.start(this.sink, this.turn, undefined, kind, name, attributes);
  }

  set(more: ObservedAttributes): void {
    if (typeof more.status === 'string') this.turn.timeline.status = more.status;
    if (typeof more.agent === 'string') this.turn.timeline.agent = more.agent;
  }

  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    const { timeline } = this.turn;
    timeline.ms = Math.round(performance.now() - this.turn.started);
    if (error) timeline.error = this.sink.shorten(error);
    timeline.status ??= error ? 'aborted' : 'completed';
    this.sink.save(timeline);
  }

  traceparent(): undefined {
    return undefined;
  }
}

/** One step of a turn's timeline (none once the turn has {@link MAX_STEPS}: its children still nest). */
class StepObservation implements Observation {
  private ended = false;

  private constructor(
    private readonly sink: TimelineSink,
    private readonly turn: TurnRecord,
    /** When this step started. */
    private readonly at: number,
    private readonly step: TimelineStep | undefined,
    /** Its index in the turn's steps (or, for a step not kept, its nearest kept parent's). */
    private readonly index: number | undefined,
    /** The agent acting: this step's, else its parent's. */
    private readonly agent: string | undefined,
  ) {}

  static start(
    sink: TimelineSink,
    turn: TurnRecord,
    parent: StepObservation | undefined,
    kind: ObservedKind,
    name: string,
    attributes: ObservedAttributes = {},
  ): StepObservation {
    const { timeline } = turn;
    const at = performance.now();
    const parentAgent = parent?.agent;
    const step: TimelineStep | undefined =
      kind === 'turn' || timeline.steps.length >= MAX_STEPS
        ? undefined
        : {
            kind,
            name,
            agent: typeof attributes.agent === 'string' ? attributes.agent : parentAgent,
            atMs: Math.round(at - turn.started),
            args: typeof attributes.args === 'string' ? previewArguments(attributes.args, sink.redact) : undefined,
            ...(parent?.index !== undefined ? { parent: parent.index } : {}),
          };
    if (step) {
      timeline.steps.push(step);
      sink.notify(timeline, 'step', step.agent);
    }
    const index = step ? timeline.steps.length - 1 : parent?.index;
    return new StepObservation(sink, turn, at, step, index, step?.agent ?? parentAgent);
  }

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return StepObservation.start(this.sink, this.turn, this, kind, name, attributes);
  }

  exchange(seen: ObservedExchange): void {
    const { step, turn } = this;
    const { keeping } = this.sink;
    if (!keeping || !step || step.kind !== 'model' || this.index === undefined) return;
    turn.keeper ??= new ExchangeKeeper(keeping);
    (turn.timeline.exchanges ??= []).push(turn.keeper.keep(this.index, seen));
  }

  set(more: ObservedAttributes): void {
    const { step } = this;
    if (!step) return;
    if (more.result !== undefined) step.result = this.sink.shorten(more.result);
    if (typeof more.inputTokens === 'number') step.inputTokens = more.inputTokens;
    if (typeof more.outputTokens === 'number') step.outputTokens = more.outputTokens;
    if (typeof more.hops === 'number') step.hops = more.hops;
  }

  end(error?: string): void {
    const { step } = this;
    if (this.ended || !step) return;
    this.ended = true;
    step.ms = Math.round(performance.now() - this.at);
    if (error) step.error = this.sink.shorten(error);
    this.sink.notify(this.turn.timeline, 'step', step.agent);
  }

  traceparent(): undefined {
    return undefined;
  }
}
