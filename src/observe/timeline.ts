import type { Request, Router } from 'express';
import express from 'express';
import { requireOwner, type AccessRefusal } from './access';
import type { ObservedAttributes, ObservedKind, Observation, Observer } from './observer';

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

  const stepOf = (timeline: TaskTimeline, started: number, parentAgent?: string) =>
    function observe(kind: ObservedKind, name: string, attributes: ObservedAttributes = {}): Observation {
      const at = performance.now();
      const step: TimelineStep | undefined =
        kind === 'turn' || timeline.steps.length >= MAX_STEPS
          ? undefined
          : {
              kind,
              name,
              agent: typeof attributes.agent === 'string' ? attributes.agent : parentAgent,
              atMs: Math.round(at - started),
              args: shorten(attributes.args),
            };
      if (step) {
        timeline.steps.push(step);
        notify(timeline, 'step', step.agent);
      }
      const agent = step?.agent ?? parentAgent;
      let ended = false;
      return {
        child: (childKind, childName, childAttributes) =>
          stepOf(timeline, started, agent)(childKind, childName, childAttributes),
        set: (more) => {
          if (!step) return;
          if (more.result !== undefined) step.result = shorten(more.result);
          if (typeof more.inputTokens === 'number') step.inputTokens = more.inputTokens;
          if (typeof more.outputTokens === 'number') step.outputTokens = more.outputTokens;
          if (typeof more.hops === 'number') step.hops = more.hops;
        },
        end: (error) => {
          if (ended || !step) return;
          ended = true;
          step.ms = Math.round(performance.now() - at);
          if (error) step.error = shorten(error);
          notify(timeline, 'step', step.agent);
        },
        traceparent: () => undefined,
      };
    };

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
      const child = stepOf(timeline, started);
      let ended = false;
      return {
        child,
        set: (more) => {
          if (typeof more.status === 'string') timeline.status = more.status;
          if (typeof more.agent === 'string') timeline.agent = more.agent;
        },
        end: (error) => {
          if (ended) return;
          ended = true;
          timeline.ms = Math.round(performance.now() - started);
          if (error) timeline.error = shorten(error);
          timeline.status ??= error ? 'aborted' : 'completed';
          notify(timeline, 'end', timeline.agent);
        },
        traceparent: () => undefined,
      };
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
