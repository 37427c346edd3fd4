import type { Request, Router } from 'express';
import express from 'express';
import { requireOwner, type AccessRefusal } from './access';
import type { ObservedAttributes, ObservedKind, Observation, Observer } from '../observation/observer';

/** One step of a task: a transfer, a model, tool or remote call, an agent's turn at acting. */
export interface TimelineStep {
  kind: Exclude<ObservedKind, 'turn'>;
  name: string;
  /** The agent acting. */
  agent?: string;
  /** Milliseconds from the start of the turn. */
  atMs: number;
  /** How long it took (undefined while it runs). */
  ms?: number;
  /** Arguments, redacted and shortened. */
  args?: string;
  /** Result, redacted and shortened. */
  result?: string;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  hops?: number;
}

/** One turn of a task, as the console shows it. */
export interface TaskTimeline {
  taskId?: string;
  sessionId: string;
  caller: string;
  startedAt: string;
  ms?: number;
  status?: string;
  /** The agent that answered. */
  agent?: string;
  error?: string;
  steps: TimelineStep[];
}

/** What changed in the ring: a turn started or ended, or a step inside it did. */
export interface TimelineChange {
  what: 'turn' | 'step' | 'end';
  taskId?: string;
  /** The agent acting (a step's), when known. */
  agent?: string;
}

/** The timelines sink: the observer that records them and the owner's JSON routes. */
export interface Timelines {
  readonly observer: Observer;
  /** Newest first. */
  recent(): TaskTimeline[];
  /** Calls `listener` after each change (the console's live stream); returns the unsubscribe. */
  subscribe(listener: (change: TimelineChange) => void): () => void;
  /** `GET /console/api/timelines` and `GET /console/api/timelines/:taskId`. */
  readonly routes: Router;
}

/** Longest argument or result text kept per step. */
const MAX_TEXT = 240;
/** Most steps kept per turn (a runaway turn keeps its first ones). */
const MAX_STEPS = 200;

/**
 * Keeps the last `size` turns' steps in memory (a ring, per node): each
 * step's timing, agent, tokens and hops, and its arguments and result
 * redacted and shortened. Never persisted.
 * @example
 * const timelines = createTimelines({ size: 200, redact: (t) => secrets.redactText(t), clock: () => new Date(), access });
 */
export function createTimelines(options: {
  size: number;
  redact: (text: string) => string;
  clock: () => Date;
  access: (req: Request) => AccessRefusal;
}): Timelines {
  const ring: TaskTimeline[] = [];
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

  const sink: TimelineSink = { notify, shorten };

  const observer: Observer = {
    active: true,
    turn: (start) => {
      const started = performance.now();
      const timeline: TaskTimeline = {
        taskId: start.taskId,
        sessionId: start.sessionId,
        caller: start.caller,
        startedAt: options.clock().toISOString(),
        steps: [],
      };
      ring.push(timeline);
      if (ring.length > options.size) ring.splice(0, ring.length - options.size);
      notify(timeline, 'turn');
      return new TurnObservation(sink, timeline, started);
    },
    storeWrite: () => {},
    storeNotification: () => {},
  };

  const recent = () => [...ring].reverse();
  const routes = express.Router();
  const owner = requireOwner(options.access);
  routes.get('/console/api/timelines', owner, (_req, res) => {
    res.json({ timelines: recent() });
  });
  routes.get('/console/api/timelines/:taskId', owner, (req, res) => {
    const turns = recent().filter((t) => t.taskId === req.params.taskId);
    if (turns.length === 0) {
      res.status(404).json({ error: { code: 404, message: `no timeline for task ${req.params.taskId}` } });
      return;
    }
    res.json({ taskId: req.params.taskId, turns });
  });
  const subscribe = (listener: (change: TimelineChange) => void) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  };
  return { observer, recent, subscribe, routes };
}

/** What every observation of one timelines sink shares: telling watchers, and shortening what it keeps. */
interface TimelineSink {
  notify(timeline: TaskTimeline, what: TimelineChange['what'], agent?: string): void;
  shorten(value: unknown): string | undefined;
}

/**
 * A turn's timeline as it is recorded. Observations are classes, not
 * literals of closures: an open stream holds one per step while it runs.
 */
class TurnObservation implements Observation {
  private ended = false;

  constructor(
    private readonly sink: TimelineSink,
    private readonly timeline: TaskTimeline,
    private readonly started: number,
  ) {}

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return StepObservation.start(this.sink, this.timeline, this.started, undefined, kind, name, attributes);
  }

  set(more: ObservedAttributes): void {
    if (typeof more.status === 'string') this.timeline.status = more.status;
    if (typeof more.agent === 'string') this.timeline.agent = more.agent;
  }

  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    const { timeline } = this;
    timeline.ms = Math.round(performance.now() - this.started);
    if (error) timeline.error = this.sink.shorten(error);
    timeline.status ??= error ? 'aborted' : 'completed';
    this.sink.notify(timeline, 'end', timeline.agent);
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
    private readonly timeline: TaskTimeline,
    /** When the turn started. */
    private readonly started: number,
    /** When this step started. */
    private readonly at: number,
    private readonly step: TimelineStep | undefined,
    /** The agent acting: this step's, else its parent's. */
    private readonly agent: string | undefined,
  ) {}

  static start(
    sink: TimelineSink,
    timeline: TaskTimeline,
    started: number,
    parentAgent: string | undefined,
    kind: ObservedKind,
    name: string,
    attributes: ObservedAttributes = {},
  ): StepObservation {
    const at = performance.now();
    const step: TimelineStep | undefined =
      kind === 'turn' || timeline.steps.length >= MAX_STEPS
        ? undefined
        : {
            kind,
            name,
            agent: typeof attributes.agent === 'string' ? attributes.agent : parentAgent,
            atMs: Math.round(at - started),
            args: sink.shorten(attributes.args),
          };
    if (step) {
      timeline.steps.push(step);
      sink.notify(timeline, 'step', step.agent);
    }
    return new StepObservation(sink, timeline, started, at, step, step?.agent ?? parentAgent);
  }

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return StepObservation.start(this.sink, this.timeline, this.started, this.agent, kind, name, attributes);
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
    this.sink.notify(this.timeline, 'step', step.agent);
  }

  traceparent(): undefined {
    return undefined;
  }
}
