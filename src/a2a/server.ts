import type { RequestListener } from 'node:http';
import { errorMessage } from '../errors';
import { walkAgents, type LlmAgent } from '../agent/agent';
import type { TurnRunner } from '../agent/turn';
import type { LangoConfig } from '../config/schema';
import type { Logger } from '../log/logger';
import type { StoreHealth } from '../store';
import type { TaskRowStores } from '../store/taskRows';
import { authConfigured, type Identity } from '../identity/identity';
import { identityStep } from './bindings/credentials';
import type { Principal } from '../principal';
import { publicBaseUrl } from './card/card';
import { CardService } from './card/cardService';
import { discoveryPages, healthPages } from './bindings/discovery';
import type { PeerStatus } from '../federation/health';
import { LangoExecutor } from './tasks/executor';
import { createGrpcBinding, GRPC_ROUTES, type GrpcBinding } from './bindings/grpcBinding';
import type { ServerTlsOptions } from '../identity/serverTls';
import { hostGuard } from './bindings/hostGuard';
import type { RequestIntercept, SharedSteps } from './bindings/inbound';
import { inboundHttp } from './bindings/inboundHttp';
import { CheckedPushStore, RetryingPushSender } from './tasks/pushNotifications';
import { pushDeliveryPages } from './bindings/pushDeliveries';
import type { Pages, RouteSpec } from './bindings/routes';
import { httpRoutes } from './httpRoutes';
import { answerStorageOutages } from './tasks/storageOutage';
import { createCardSigner } from './card/signing';
import { parseDuration } from '../duration';
import { LiveTasks } from './tasks/liveTasks';
import { createA2AStores } from './tasks/taskStore';
import { taskEventRecorder, type ClusterTasks } from './tasks/clusterTasks';
import type { TaskEventLog } from '../store/taskEvents';
import { TaskHandler } from './tasks/taskHandler';
import { tenantRefusal } from './tasks/tenants';
import { gatedRequests } from './tasks/requestGate';
import { limitRefusal, REQUEST_LIMITS } from './tasks/requestLimits';

/** Dependencies of {@link createA2AServer}. */
export interface A2AServerOptions {
  config: LangoConfig;
  /** The current tree root (as `principal`'s grant allows, for discovery); federation rebuilds it when peers join or leave. */
  root: (principal?: Principal) => LlmAgent;
  runner: TurnRunner;
  /** Whether the database in use answers (`Storage.health`): `/readyz`, and the answer to requests it failed. */
  health: () => Promise<StoreHealth>;
  /** Where tasks and push configs are kept (`NodeStorage.taskRows`). */
  taskRows: TaskRowStores;
  /** The tasks' events (`NodeStorage.taskEvents`): every event of a watched task is kept for streams resumed from it. */
  taskEvents: TaskEventLog;
  /**
   * With replicas on PostgreSQL: the events of watched tasks are shared, a task running on another replica is
   * followed there, and cancels asked through one replica reach the one running the task.
   */
  clusterTasks?: ClusterTasks;
  logger: Logger;
  clock: () => Date;
  /** Health of remote peers for `GET /agents` (federation). */
  peerStatus?: () => PeerStatus[];
  /** The card held for a remote peer, for `GET /agents/:name/card` (federation). */
  remoteCard?: (name: string) => unknown;
  /** Refuses an inbound message by its metadata before any work (federation's hop check); see LangoExecutorOptions. */
  admit?: (metadata: Record<string, unknown>) => string | undefined;
  /** The node's software version, shown in the card. */
  version?: string;
  /** Push delivery tuning (tests shorten the backoff). */
  push?: { baseDelayMs?: number; timeoutMs?: number };
  /** Run before every route of every binding, after the host guard (request metrics and spans); none when nothing observes. */
  intercept?: RequestIntercept[];
  /** The node's own pages (metrics, console, `/node/*`): their rows join the route table, which checks their access. */
  pages?: Pages[];
  /** Masks known secret values in every push payload (issue 11 G; the node's `SecretRegistry`; the task rows mask their own). */
  redact?: (text: string) => string;
  /** Who each request is, and whether it may call a route: the node's one identity component (`createApp`). */
  identity: Identity;
}

/** The A2A surface of the node. */
export interface A2AServer {
  /**
   * Mount at the root of an HTTP server: `http.createServer(a2a.app)`. One inbound chain per binding from the
   * same steps (`inboundHttp.ts`).
   */
  readonly app: RequestListener;
  /** Tells the card where the node listens (after `listen` on port 0); ignored when `a2a.baseUrl` is set. */
  setPublicUrl(url: string): void;
  /**
   * Starts the gRPC binding (`grpcBinding.ts`) on `host:port` (0: a free port), over TLS with `tls`, and lists it
   * in the card, at the public URL's host; resolves with the port. Closed by `close`.
   */
  listenGrpc(host: string, port: number, tls?: ServerTlsOptions): Promise<number>;
  /** The public card exactly as served at /.well-known/agent-card.json (ProtoJSON, signed when configured). */
  card(): Promise<Record<string, unknown>>;
  /**
   * The route table's rows (method, path pattern, binding, name, access): HTTP's in the order they are tried, then
   * the gRPC binding's methods.
   */
  readonly routes: readonly RouteSpec[];
  /** Turns running now. */
  running(): number;
  /** Fails running turns ("node shutting down"), stops retries and timers. Does not close the stores. */
  close(): Promise<void>;
}

/** Reason written into tasks a dead process left working. */
export const RESTART_REASON = 'node restarted';

/**
 * Builds the node's A2A server: the card (v1.0 and v0.3), JSON-RPC and
 * HTTP+JSON transports through `@a2a-js/sdk` with the v0.3 compatibility
 * layer, durable tasks and push configs in `taskRows`, push delivery, caller
 * authentication and per-caller task scoping, discovery and health.
 * Where it listens is the caller's choice: `createApp` checks the exposure
 * rule (`assertSafeExposure`) before it opens anything.
 * @example
 * const a2a = createA2AServer({ config, root: () => tree.current(), runner, callers, health: () => storage.health(), taskRows: storage.taskRows, logger, clock: () => new Date() });
 * const server = http.createServer(a2a.app).listen(port, host, () => a2a.setPublicUrl(`http://${host}:${port}`));
 */
export function createA2AServer(options: A2AServerOptions): A2AServer {
  const { config, root, runner, clock } = options;
  const logger = options.logger;

  const { clusterTasks } = options;
  // Every event of a watched task goes to the event log (shared with replicas); tasks running elsewhere are followed there.
  const record = clusterTasks?.record ?? taskEventRecorder(options.taskEvents, logger);
  const liveTasks = new LiveTasks({
    rows: options.taskRows.tasks,
    onFolded: (folded) => void record(folded),
    elsewhere: clusterTasks,
    keepAllEvents: clusterTasks !== undefined,
    clock,
  });
  const stores = createA2AStores({ rows: options.taskRows, live: liveTasks, clock });
  // On SQLite the sweep is done when this returns (no query awaits); a shared database's sweep fails only
  // tasks of processes that ended, which the rows' implementation knows.
  stores.failInterrupted(RESTART_REASON).catch((err: unknown) => {
    logger.warn('could not mark interrupted tasks failed', { error: errorMessage(err) });
  });
  const retentionMs = parseDuration(config.a2a.taskRetention, 'a2a.taskRetention');
  const purge = () => {
    stores.purgeFinished(new Date(clock().getTime() - retentionMs)).catch((err: unknown) => {
      logger.warn('task purge failed', { error: errorMessage(err) });
    });
  };
  purge();
  const purgeTimer = setInterval(purge, Math.min(Math.max(retentionMs / 10, 1_000), 3_600_000));
  purgeTimer.unref();

  let publicUrl = publicBaseUrl(config);
  const version = options.version ?? '0.1.0';
  const signer = config.a2a.signingKey ? createCardSigner(config.a2a.signingKey) : undefined;
  let grpcAddress: string | undefined;
  const cards = new CardService({
    config,
    root,
    baseUrl: () => publicUrl,
    grpcAddress: () => grpcAddress,
    version,
    signer,
  });

  const executor = new LangoExecutor({
    runner,
    logger,
    clock,
    admit: options.admit,
    // Each task's account names the node as its card does.
    account: config.observability.accounting
      ? () => ({ node: publicUrl, name: config.a2a.agentName ?? root().name })
      : undefined,
  });
  const { allowPrivateNetworks, maxAttempts, timeoutMs } = config.a2a.pushNotifications;
  const pushStore = new CheckedPushStore({ inner: stores.pushConfigs, allowPrivateNetworks });
  const pushSender = new RetryingPushSender({
    store: pushStore,
    logger: logger.child({ component: 'a2a.push' }),
    allowPrivateNetworks,
    maxAttempts,
    timeoutMs,
    redact: options.redact,
    ...options.push,
  });
  const stopHearingCancels = clusterTasks?.onCancel((scope, taskId) => void liveTasks.cancelHere(scope, taskId));
  const taskHandler = new TaskHandler({
    executor,
    live: liveTasks,
    tasks: stores.tasks,
    push: { store: pushStore, sender: pushSender, saves: () => stores.pushConfigs.saves },
    cards,
    extendedCardEnabled: authConfigured(config),
    events: options.taskEvents,
    sends: options.taskRows.tasks,
    idempotencyWindowMs: parseDuration(config.a2a.idempotencyWindow, 'a2a.idempotencyWindow'),
    longPollTimeoutMs: parseDuration(config.a2a.longPollTimeout, 'a2a.longPollTimeout'),
    logger,
    clock,
    // A skill of the card is an agent of the tree; a caller may name those its grant reaches.
    skills: (principal) => walkAgents(root(principal)).map((agent) => agent.name),
  });
  const requestHandler = answerStorageOutages(taskHandler, options.health);
  // Every binding's decoded request passes one gate: the same limits, then the tenant it names, before the handler.
  const limits = { ...REQUEST_LIMITS, maxBytes: config.a2a.maxBodyBytes };
  const unserved = tenantRefusal(config.a2a.tenants);
  const served = gatedRequests(requestHandler, (params, context) => limitRefusal(params, limits) ?? unserved(context));
  let closing = false;
  let grpc: GrpcBinding | undefined;

  // The node's pages (health first), then what A2A adds: discovery and push-delivery reports.
  const pages: Pages[] = [
    healthPages({ root, health: options.health, closing: () => closing }),
    ...(config.a2a.enabled
      ? [
          discoveryPages({ root, peerStatus: options.peerStatus, remoteCard: options.remoteCard }),
          pushDeliveryPages({ rows: options.taskRows.pushConfigs, logger }),
        ]
      : []),
    ...(options.pages ?? []),
  ];
  // The steps every binding mounts: HTTP below; a gRPC binding mounts the same object.
  const steps: SharedSteps = {
    hostGuard: hostGuard(config)?.step,
    intercepts: options.intercept ?? [],
    identify: identityStep(options.identity),
  };
  // With `a2a.enabled: false` the node publishes no card and serves no protocol: its pages only.
  const table = httpRoutes({
    a2a: config.a2a.enabled ? { requestHandler: served, cards, legacyCompat: config.a2a.legacyCompat } : undefined,
    pages,
    maxBodyBytes: config.a2a.maxBodyBytes,
    logger,
  });
  const app = inboundHttp({ steps, table, maxBodyBytes: config.a2a.maxBodyBytes, logger });

  return {
    app,
    setPublicUrl(url) {
      if (!config.a2a.baseUrl) publicUrl = url.replace(/\/+$/, '');
    },
    async listenGrpc(host, port, tls) {
      grpc ??= createGrpcBinding({
        requestHandler: served,
        steps,
        maxMessageBytes: config.a2a.maxBodyBytes,
        logger: logger.child({ component: 'a2a.grpc' }),
      });
      const bound = await grpc.listen(host, port, tls);
      grpcAddress = `${new URL(publicUrl).hostname}:${bound}`;
      return bound;
    },
    card: async () => JSON.parse((await cards.current()).json) as Record<string, unknown>,
    routes: [...table.routes.map(({ handler: _handler, ...spec }) => spec), ...GRPC_ROUTES.values()],
    running: () => liveTasks.size,
    async close() {
      if (closing) return;
      closing = true;
      await grpc?.close();
      clearInterval(purgeTimer);
      stopHearingCancels?.();
      liveTasks.failAll('node shutting down');
      // The failures just folded are written before the caller closes the database.
      await liveTasks.settleAll(2_000);
      await pushSender.close();
      try {
        await stores.failInterrupted('node shutting down');
      } catch (err) {
        // The database is already gone: the next start marks these tasks failed instead.
        logger.warn('could not mark running tasks failed at shutdown', {
          error: errorMessage(err),
        });
      }
    },
  };
}
