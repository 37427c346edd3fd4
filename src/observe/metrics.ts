import type { RequestIntercept } from '../a2a/bindings/inbound';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { PEER_STATES, type PeerStatus } from '../federation/health';
import type { ObservedAttributes, ObservedKind, Observation, Observer } from '../observation/observer';
import { pageRouter } from '../a2a/bindings/pageRouter';
import type { Pages } from '../a2a/bindings/routes';
import { CounterSeries, HistogramSeries } from './series';

/** What {@link createNodeMetrics} reads at scrape time. */
export interface NodeMetricsOptions {
  /** A2A tasks held now, by state (`TASK_STATE_WORKING`: 2, …). */
  tasksByState: () => Promise<Record<string, number>>;
  /** The remote peers and their circuit state. */
  peers: () => PeerStatus[];
}

/** The node's Prometheus metrics: the observer sink, the request counter and the `/metrics` route. */
export interface NodeMetrics {
  readonly observer: Observer;
  /** Counts each request by A2A method and HTTP status, once it is answered. */
  readonly countRequests: RequestIntercept;
  /** `GET /metrics` in the text exposition format. */
  readonly routes: Pages;
  /** The exposition `GET /metrics` answers (one registry and one set of series per node: two nodes in one process keep apart). */
  scrape(): Promise<string>;
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
 * const metrics = createNodeMetrics({ tasksByState, peers: () => federation.status() });
 * createA2AServer({ …, intercept: [metrics.countRequests], pages: [metrics.routes] }); // `/metrics`: the owner or the metrics token (a row of access `metrics`)
 */
export function createNodeMetrics(options: NodeMetricsOptions): NodeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'lango_' });
  registerGauges(registry, options);
  const series = nodeSeries();
  const record = recorderInto(series);

  const observe = (kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation =>
    new MetricObservation(record, kind, name, attributes);

  /** The exposition: prom-client's process metrics and gauges, then the node's own series. */
  const scrape = async () => `${await registry.metrics()}\n${series.all.map((family) => family.text()).join('\n\n')}\n`;

  return {
    scrape,
    observer: {
      active: true,
      turn: () => observe('turn', 'turn'),
      storeWrite: (ms, statements) => {
        series.storeWrites.observe(ms / 1000);
        if (statements) series.storeStatements.inc(statements);
      },
      storeNotification: (channel) => series.storeNotifications.inc(1, channel),
    },
    countRequests: (call, next) => {
      call.onAnswered((status) => series.requests.inc(1, call.name, String(status)));
      return next();
    },
    routes: metricsRoute(scrape, registry.contentType),
    close: () => registry.clear(),
  };
}

/**
 * The gauges prom-client collects at scrape time on `registry`: tasks by
 * state, each peer's circuit state and its consecutive failures.
 */
function registerGauges(registry: Registry, options: NodeMetricsOptions): void {
  const registers = [registry];
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
}

/** The node's own series (written by the node, not by prom-client), by name, and all of them in exposition order. */
type NodeSeries = ReturnType<typeof nodeSeries>;

/** Builds the node's own counters and histograms. */
function nodeSeries() {
  const requests = new CounterSeries({
    name: 'lango_a2a_requests_total',
    help: 'HTTP requests answered, by A2A method and HTTP status',
    labelNames: ['method', 'status'],
  });
  const turns = new HistogramSeries({
    name: 'lango_turn_duration_seconds',
    help: 'Turns of the agent tree, by how they ended',
    labelNames: ['status'],
    buckets: LATENCY_BUCKETS,
  });
  const modelCalls = new HistogramSeries({
    name: 'lango_model_call_duration_seconds',
    help: 'Model calls, by model and outcome',
    labelNames: ['model', 'outcome'],
    buckets: LATENCY_BUCKETS,
  });
  const tokens = new CounterSeries({
    name: 'lango_model_tokens_total',
    help: 'Tokens the model reported, by model and direction (input, output)',
    labelNames: ['model', 'direction'],
  });
  const toolCalls = new HistogramSeries({
    name: 'lango_tool_call_duration_seconds',
    help: 'Tool calls, by tool and outcome',
    labelNames: ['tool', 'outcome'],
    buckets: LATENCY_BUCKETS,
  });
  const remoteCalls = new HistogramSeries({
    name: 'lango_remote_call_duration_seconds',
    help: 'Calls to remote A2A agents, by peer and outcome',
    labelNames: ['peer', 'outcome'],
    buckets: LATENCY_BUCKETS,
  });
  const remoteTokens = new CounterSeries({
    name: 'lango_remote_tokens_total',
    help: 'Model tokens remote A2A agents reported for the calls made to them (their whole tree), by peer and direction',
    labelNames: ['peer', 'direction'],
  });
  const transfers = new CounterSeries({
    name: 'lango_transfers_total',
    help: 'Transfers of control between agents',
    labelNames: ['from', 'to'],
  });
  const storeWrites = new HistogramSeries({
    name: 'lango_store_write_duration_seconds',
    help: 'Group commits of the node database',
    labelNames: [],
    buckets: WRITE_BUCKETS,
  });
  const storeStatements = new CounterSeries({
    name: 'lango_store_write_statements_total',
    help: 'Statements sent in group commits of the node database (PostgreSQL; BEGIN and COMMIT not counted)',
    labelNames: [],
  });
  const storeNotifications = new CounterSeries({
    name: 'lango_store_notifications_total',
    help: 'Notifications received on the replica LISTEN connection (PostgreSQL), by channel',
    labelNames: ['channel'],
  });
  const series = {
    requests,
    turns,
    modelCalls,
    tokens,
    toolCalls,
    remoteCalls,
    remoteTokens,
    transfers,
    storeWrites,
    storeStatements,
    storeNotifications,
  };
  // Printed at scrape in this order (the order they are declared).
  return { ...series, all: Object.values(series) };
}

/** Records each finished observation into the series of its kind. */
function recorderInto(series: NodeSeries): RecordObservation {
  return (observation, seconds, error) => {
    const outcome = error ? 'error' : 'ok';
    const { name } = observation;
    switch (observation.kind) {
      case 'turn':
        series.turns.observe(seconds, observation.status ?? (error ? 'aborted' : 'completed'));
        break;
      case 'model': {
        const model = observation.model ?? name;
        series.modelCalls.observe(seconds, model, outcome);
        if (observation.inputTokens > 0) series.tokens.inc(observation.inputTokens, model, 'input');
        if (observation.outputTokens > 0) series.tokens.inc(observation.outputTokens, model, 'output');
        break;
      }
      case 'tool':
        series.toolCalls.observe(seconds, name, outcome);
        break;
      case 'remote':
        series.remoteCalls.observe(seconds, name, outcome);
        if (observation.inputTokens > 0) series.remoteTokens.inc(observation.inputTokens, name, 'input');
        if (observation.outputTokens > 0) series.remoteTokens.inc(observation.outputTokens, name, 'output');
        break;
      case 'transfer':
        series.transfers.inc(1, observation.from ?? '', observation.to ?? name);
        break;
      case 'agent':
        break;
    }
  };
}

/** `GET /metrics`: the exposition `scrape` answers, as `contentType`. */
function metricsRoute(scrape: () => Promise<string>, contentType: string): Pages {
  const routes = pageRouter({ name: 'metrics', access: 'metrics' });
  routes.get('/metrics', async (_req, res, next) => {
    try {
      const text = await scrape();
      res.setHeader('Content-Type', contentType);
      res.send(text);
    } catch (err) {
      next(err);
    }
  });
  return routes.pages();
}

/** Records one finished observation (`seconds` long) into its metric. */
type RecordObservation = (observation: MetricObservation, seconds: number, error?: string) => void;

/**
 * One observation as the metrics see it: timed from its start, recorded into
 * its metric when it ends, keeping only the attributes a metric reads. A
 * class, not a literal of closures: an open stream holds one per step for as
 * long as it runs.
 */
class MetricObservation implements Observation {
  private readonly started = performance.now();
  private ended = false;
  status: string | undefined;
  model: string | undefined;
  from: string | undefined;
  to: string | undefined;
  inputTokens = 0;
  outputTokens = 0;

  constructor(
    private readonly record: RecordObservation,
    readonly kind: ObservedKind,
    readonly name: string,
    attributes: ObservedAttributes | undefined,
  ) {
    if (attributes) this.set(attributes);
  }

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return new MetricObservation(this.record, kind, name, attributes);
  }

  set(more: ObservedAttributes): void {
    if (more.status !== undefined) this.status = String(more.status);
    if (more.model !== undefined) this.model = String(more.model);
    if (more.from !== undefined) this.from = String(more.from);
    if (more.to !== undefined) this.to = String(more.to);
    if (typeof more.inputTokens === 'number') this.inputTokens = more.inputTokens;
    if (typeof more.outputTokens === 'number') this.outputTokens = more.outputTokens;
  }

  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.record(this, (performance.now() - this.started) / 1000, error);
  }

  traceparent(): undefined {
    return undefined;
  }
}
