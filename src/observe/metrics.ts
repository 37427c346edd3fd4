import type { Request, Router } from 'express';
import type { RequestIntercept } from '../a2a/inbound';
import express from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PEER_STATES, type PeerStatus } from '../federation/health';
import type { ObservedAttributes, ObservedKind, Observation, Observer } from '../observation/observer';
import { requireOwner, type AccessRefusal } from './access';

/** What {@link createNodeMetrics} reads at scrape time. */
export interface NodeMetricsOptions {
  /** A2A tasks held now, by state (`TASK_STATE_WORKING`: 2, …). */
  tasksByState: () => Promise<Record<string, number>>;
  /** The remote peers and their circuit state. */
  peers: () => PeerStatus[];
  /** Who may scrape (the owner or the metrics token). */
  access: (req: Request) => AccessRefusal;
}

/** The node's Prometheus metrics: the observer sink, the request counter and the `/metrics` route. */
export interface NodeMetrics {
  readonly observer: Observer;
  /** Counts each request by A2A method and HTTP status, once it is answered. */
  readonly countRequests: RequestIntercept;
  /** `GET /metrics` in the text exposition format. */
  readonly routes: Router;
  /** The registry (one per node: two nodes in one process keep apart). */
  readonly registry: Registry;
  /** Stops the event-loop monitor. */
  close(): void;
}

/** Seconds: from a cached answer to a long delegated turn. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const WRITE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

/**
 * Builds the node's metrics on a registry of its own (never prom-client's
 * global one): requests by A2A method and status, tasks by state, latency of
 * turns and of model, tool and remote calls, tokens, transfers, peer health
 * and breaker state, store write latency, and the process's defaults
 * (event-loop lag among them).
 * @example
 * const metrics = createNodeMetrics({ tasksByState, peers: () => federation.status(), access: ownerAccess(config, callers, token) });
 * createA2AServer({ …, intercept: [metrics.countRequests], pages: [metrics.routes] });
 */
export function createNodeMetrics(options: NodeMetricsOptions): NodeMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: 'lango_' });

  const requests = new Counter({
    name: 'lango_a2a_requests_total',
    help: 'HTTP requests answered, by A2A method and HTTP status',
    labelNames: ['method', 'status'] as const,
    registers,
  });
  new Gauge({
    name: 'lango_a2a_tasks',
    help: 'A2A tasks held by the node, by state',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      this.reset();
      // A database that cannot answer leaves the gauge empty for this scrape; the other metrics still go out.
      const counts = await options.tasksByState().catch(() => ({}));
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  const turns = new Histogram({
    name: 'lango_turn_duration_seconds',
    help: 'Turns of the agent tree, by how they ended',
    labelNames: ['status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const modelCalls = new Histogram({
    name: 'lango_model_call_duration_seconds',
    help: 'Model calls, by model and outcome',
    labelNames: ['model', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const tokens = new Counter({
    name: 'lango_model_tokens_total',
    help: 'Tokens the model reported, by model and direction (input, output)',
    labelNames: ['model', 'direction'] as const,
    registers,
  });
  const toolCalls = new Histogram({
    name: 'lango_tool_call_duration_seconds',
    help: 'Tool calls, by tool and outcome',
    labelNames: ['tool', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const remoteCalls = new Histogram({
    name: 'lango_remote_call_duration_seconds',
    help: 'Calls to remote A2A agents, by peer and outcome',
    labelNames: ['peer', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const transfers = new Counter({
    name: 'lango_transfers_total',
    help: 'Transfers of control between agents',
    labelNames: ['from', 'to'] as const,
    registers,
  });
  const storeWrites = new Histogram({
    name: 'lango_store_write_duration_seconds',
    help: 'Group commits of the node database',
    buckets: WRITE_BUCKETS,
    registers,
  });
  const storeStatements = new Counter({
    name: 'lango_store_write_statements_total',
    help: 'Statements sent in group commits of the node database (PostgreSQL; BEGIN and COMMIT not counted)',
    registers,
  });
  const storeNotifications = new Counter({
    name: 'lango_store_notifications_total',
    help: 'Notifications received on the replica LISTEN connection (PostgreSQL), by channel',
    labelNames: ['channel'] as const,
    registers,
  });
  new Gauge({
    name: 'lango_peer_state',
    help: 'Each remote peer circuit: 1 for its current state (healthy, open, half-open, skipped), else 0',
    labelNames: ['peer', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const peer of options.peers())
        for (const state of PEER_STATES) this.set({ peer: peer.name, state }, peer.state === state ? 1 : 0);
    },
  });
  new Gauge({
    name: 'lango_peer_failures',
    help: 'Consecutive counted failures of each remote peer',
    labelNames: ['peer'] as const,
    registers,
    collect() {
      this.reset();
      for (const peer of options.peers()) this.set({ peer: peer.name }, peer.failures);
    },
  });

  const record: RecordObservation = (kind, name, seen, seconds, error) => {
    const outcome = error ? 'error' : 'ok';
    switch (kind) {
      case 'turn':
        turns.observe({ status: String(seen.status ?? (error ? 'aborted' : 'completed')) }, seconds);
        break;
      case 'model': {
        const model = String(seen.model ?? name);
        modelCalls.observe({ model, outcome }, seconds);
        if (typeof seen.inputTokens === 'number' && seen.inputTokens > 0)
          tokens.inc({ model, direction: 'input' }, seen.inputTokens);
        if (typeof seen.outputTokens === 'number' && seen.outputTokens > 0)
          tokens.inc({ model, direction: 'output' }, seen.outputTokens);
        break;
      }
      case 'tool':
        toolCalls.observe({ tool: name, outcome }, seconds);
        break;
      case 'remote':
        remoteCalls.observe({ peer: name, outcome }, seconds);
        break;
      case 'transfer':
        transfers.inc({ from: String(seen.from ?? ''), to: String(seen.to ?? name) });
        break;
      case 'agent':
        break;
    }
  };

  const observe = (kind: ObservedKind, name: string, attributes: ObservedAttributes = {}): Observation =>
    new MetricObservation(record, kind, name, attributes);

  const routes = express.Router();
  routes.get('/metrics', requireOwner(options.access), async (_req, res, next) => {
    try {
      const text = await registry.metrics();
      res.setHeader('Content-Type', registry.contentType);
      res.send(text);
    } catch (err) {
      next(err);
    }
  });

  return {
    registry,
    observer: {
      active: true,
      turn: () => observe('turn', 'turn'),
      storeWrite: (ms, statements) => {
        storeWrites.observe(ms / 1000);
        if (statements) storeStatements.inc(statements);
      },
      storeNotification: (channel) => storeNotifications.inc({ channel }),
    },
    countRequests: (call, next) => {
      call.onAnswered((status) => requests.inc({ method: call.name, status: String(status) }));
      return next();
    },
    routes,
    close: () => registry.clear(),
  };
}

/** Records one finished observation (`seconds` long) into its metric. */
type RecordObservation = (
  kind: ObservedKind,
  name: string,
  seen: ObservedAttributes,
  seconds: number,
  error?: string,
) => void;

/**
 * One observation as the metrics see it: timed from its start, recorded into
 * its metric when it ends. A class, not a literal of closures: an open stream
 * holds one per step for as long as it runs.
 */
class MetricObservation implements Observation {
  private readonly started = performance.now();
  private seen: ObservedAttributes;
  /** Whether `seen` is this observation's own copy (the caller's attributes are copied on the first `set`). */
  private owned = false;
  private ended = false;

  constructor(
    private readonly record: RecordObservation,
    private readonly kind: ObservedKind,
    private readonly name: string,
    attributes: ObservedAttributes,
  ) {
    this.seen = attributes;
  }

  child(kind: ObservedKind, name: string, attributes: ObservedAttributes = {}): Observation {
    return new MetricObservation(this.record, kind, name, attributes);
  }

  set(more: ObservedAttributes): void {
    if (!this.owned) {
      this.seen = { ...this.seen };
      this.owned = true;
    }
    Object.assign(this.seen, more);
  }

  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.record(this.kind, this.name, this.seen, (performance.now() - this.started) / 1000, error);
  }

  traceparent(): undefined {
    return undefined;
  }
}
