import fs from 'node:fs';
import path from 'node:path';
import type { RequestIntercept } from '../a2a/bindings/inbound';
import type { LlmAgent } from '../agent/agent';
import { authConfigured } from '../identity/identity';
import type { LangoConfig } from '../config/schema';
import type { Callers } from '../identity/callers';
import { CONSOLE_SESSION_MS, type Identity } from '../identity/identity';
import type { Pages } from '../a2a/bindings/routes';
import type { PeerStatus } from '../federation/health';
import type { Logger } from '../log/logger';
import type { TaskRows } from '../store/taskRows';
import type { Stores } from '../store';
import type { ToolRunInput, ToolRunResult } from '../agent/toolRun';
import type { TurnInput, TurnResult } from '../agent/turn';
import { consoleRoutes } from './console';
import { agentGraph } from './graph';
import { createNodeMetrics } from './metrics';
import { combineObservers, type Observer } from '../observation/observer';
import { createTimelines } from './timeline';
import { createNodeTracing } from './tracing';

/** What the node's observability reads from the rest of the node (built before it: `createApp` builds the sinks last). */
export interface ObservabilitySources {
  config: LangoConfig;
  logger: Logger;
  /** The node's A2A task rows (either database): counted by state at scrape time, listed by the console. */
  taskRows: TaskRows;
  /** Who each credential is (the console lists the callers). */
  callers: Callers;
  /** The node's identity component: the console's sign-ins. */
  identity: Identity;
  /** The remote peers' health now. */
  peers: () => PeerStatus[];
  /** The current agent tree (the console draws it). */
  root: () => LlmAgent;
  /** The card held for a remote peer, undefined for an unknown name. */
  remoteCard: (name: string) => unknown;
  /** Probes a remote peer now (the console's "probe now"); resolves once its card answered or not. */
  probe: (name: string) => Promise<unknown>;
  /** The node's stores (timelines, conversations, memory, knowledge, replicas). */
  stores: Stores;
  /** Runs one tool as a person asks, through the runner's grant check and redaction (the console's tool runner). */
  runTool: (input: ToolRunInput) => Promise<ToolRunResult>;
  /** Runs one turn to its end through the runner (the console's replays). */
  runTurn: (input: TurnInput) => Promise<TurnResult>;
  /** The node's model: its name, and whether its client can ask for another model. */
  model: () => { name: string; switchable: boolean };
  /** The tool family of a tool (the family table's), for the agent graph. */
  familyOf: (toolName: string) => string | undefined;
  clock: () => Date;
  /** Masks secret values in what leaves the node (span status messages, timeline steps). */
  redact: (text: string) => string;
}

/** Everything the node shows of its own work, built once by `createApp`. */
export interface Observability {
  /** The sinks over one observer (attached to the node's observation hub): a no-op when nothing is configured. */
  readonly observer: Observer;
  /** Handlers before every route (request counter); empty when nothing listens. */
  readonly intercept: RequestIntercept[];
  /** `/metrics`, the timelines and the console: rows of the route table, which checks their access. */
  readonly pages: Pages[];
  /** Flushes and stops exporters and monitors. */
  close(): Promise<void>;
}

/**
 * Builds the sinks `config.observability` asks for and the one observer over
 * them. Nothing configured: the no-op observer, no handlers, no pages.
 * @example
 * const observability = createObservability({ config, logger, taskRows, callers, peers: () => [], root: () => tree.current(), remoteCard: () => undefined, redact: (t) => t, clock: () => new Date() });
 * observation.attach([observability.observer], () => observability.close());
 */
export function createObservability(sources: ObservabilitySources): Observability {
  const { config } = sources;
  const settings = config.observability;
  const observers: Observer[] = [];
  const intercept: RequestIntercept[] = [];
  const pages: Pages[] = [];
  const closers: Array<() => unknown> = [];

  const { otlp } = settings;
  if (otlp.tracesEndpoint) {
    // First: the request's span is open before anything else runs for it.
    const tracing = createNodeTracing({
      tracesEndpoint: otlp.tracesEndpoint,
      protocol: otlp.protocol,
      headers: otlp.headers,
      serviceName: otlp.serviceName,
      redact: sources.redact,
    });
    observers.push(tracing.observer);
    intercept.push(tracing.traceRequests);
    closers.push(() => tracing.close());
    sources.logger.info('exporting traces over OTLP', { endpoint: otlp.tracesEndpoint, protocol: otlp.protocol });
  }
  const timelines = settings.timeline.enabled
    ? createTimelines({
        store: () => sources.stores.timelines,
        exchanges: settings.timeline.exchanges,
        redact: sources.redact,
        clock: sources.clock,
        logger: sources.logger.child({ component: 'timelines' }),
      })
    : undefined;
  if (timelines) {
    observers.push(timelines.observer);
    pages.push(timelines.routes);
  }
  if (settings.console) {
    pages.push(
      consoleRoutes({
        nodeName: () => config.a2a.agentName ?? sources.root().name,
        graph: () => agentGraph(sources.root(), sources.peers(), sources.familyOf),
        root: sources.root,
        remoteCard: sources.remoteCard,
        peers: sources.peers,
        probe: sources.probe,
        timelines,
        taskRows: () => sources.taskRows,
        stores: () => sources.stores,
        callers: () => sources.callers,
        runTool: sources.runTool,
        runTurn: sources.runTurn,
        model: sources.model,
        sessions: sources.identity.sessions,
        authConfigured: authConfigured(config),
        redact: sources.redact,
        sessionTtlMs: CONSOLE_SESSION_MS,
        assetsDir: consoleAssetsDir(),
      }),
    );
  }
  if (settings.metrics) {
    const metrics = createNodeMetrics({
      tasksByState: () => sources.taskRows.countByState(),
      peers: sources.peers,
    });
    observers.push(metrics.observer);
    intercept.push(metrics.countRequests);
    pages.push(metrics.routes);
    closers.push(() => metrics.close());
  }

  return {
    observer: combineObservers(observers),
    intercept,
    pages,
    async close() {
      for (const close of closers.reverse()) await close();
    },
  };
}

/** The compiled console (`dist/console`): beside this module when built, under dist/ when run from source (tests). */
function consoleAssetsDir(): string {
  const beside = path.resolve(__dirname, '..', 'console');
  return fs.existsSync(path.join(beside, 'console.js'))
    ? beside
    : path.resolve(__dirname, '..', '..', 'dist', 'console');
}
