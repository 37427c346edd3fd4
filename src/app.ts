import type http from 'node:http';
import type https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { LlmAgent } from './agent/agent';
import type { AnyTool } from './agent/tool';
import { createRunner } from './agent/runner';
import { treeIndexes } from './agent/transfer';
import { runToEnd, type TurnRunner } from './agent/turn';
import { combineContextProviders } from './agent/turnState';
import { assertSafeExposure } from './identity/identity';
import { createA2AServer } from './a2a/server';
import type { RouteSpec } from './a2a/bindings/routes';
import { createNodeServer, serverTlsOptions } from './identity/serverTls';
import type { LangoConfig } from './config/schema';
import { errorMessage, LangoError } from './errors';
import { parseDuration } from './duration';
import { createFederation, type Federation } from './federation/federation';
import { checkInboundHops } from './federation/hops';
import type { SecretResolver } from './federation/loader';
import type { PeerStatus } from './federation/health';
import type { Model, ModelRoute } from './llm/model';
import { createOfflineModel } from './llm/offline';
import { createOpenAIModel } from './llm/openai';
import { createEndpointFetch } from './net/endpoint';
import type { Logger } from './log/logger';
import { SecretRegistry } from './log/redact';
import { redactedLogger } from './log/redactedLogger';
import { createWinstonLogger } from './log/winston';
import { createObservationHub } from './observation/hub';
import { createObservability } from './observe/observability';
import { nodeInfoPages, type NodeInfoSources } from './observe/nodeInfo';
import { checkCommandSandbox } from './tools/operator/family';
import { createAgentTreeHolder, type AgentTreeHolder } from './orchestration/liveTree';
import { ownerOfTool, partitionTools } from './orchestration/partition';
import { defineSpecs, specRows, type AgentSpec, type SpecRow } from './orchestration/specs';
import { checkEmbedderInput } from './orchestration/embedderInput';
import { reservedAgentNames } from './orchestration/tree';
import { buildOrchestratorSystemPrompt, buildSystemPrompt, createSubAgentPrompt, loadPromptSections } from './prompt';
import { OWNER } from './principal';
import { createCallers, resolveCallerCredentials, type Callers } from './identity/callers';
import { createIdentity } from './identity/identity';
import { createClusterTasks } from './a2a/tasks/clusterTasks';
import type { StoreHealth, Stores } from './store';
import { openNodeStorage } from './store/open';
import { clusterSettings, storagePassword } from './config/cluster';
import { DEFAULT_PEER_GRANT, toolFamilies } from './tools/families';
import { createSecretReferences } from './vault/references';
import { createToolset, type FamilyStatus } from './toolset/toolset';
import { createPackageLoader, type PackageLoader } from './packages';
import { openVault, requireVault, type VaultAccess } from './vault/vault';
import { checkMasterKeyFile } from './vault/masterKey';
import { makePrivateDir, UnsafePathError } from './privateFiles';

export type { FamilyStatus } from './toolset/toolset';

/** Dependencies a caller may supply instead of the ones built from config (tests pass real ones on temp dirs). */
export interface AppDeps {
  logger?: Logger;
  /** Replaces the model built from `config.agent` (tests: a scripted model). */
  model?: Model;
  clock?: () => Date;
  /** Resolves a relative `dataDir` and `agent-cards/`; defaults to the process's working directory. */
  cwd?: string;
  secrets?: SecretRegistry;
  /**
   * False for a short-lived process on the data folder (a one-shot CLI
   * command): cron jobs and queued background prompts are kept for the node
   * that serves it instead of starting here. Default true.
   */
  runJobs?: boolean;
  /**
   * The embedder's own tools (made with `defineTool`), added to the node's:
   * each lands with the specialist its `agent` names, else the one its name's
   * prefix routes it to.
   */
  tools?: readonly AnyTool[];
  /** More specialists: rows appended to the table of seven (`specRows`), each one spec object. */
  specialists?: readonly SpecRow[];
  /**
   * The local owner token (`serveNode` writes it in the data folder for the
   * node's own CLI): one more bearer credential, the owner's, on every
   * binding and page. It does not by itself turn authentication on.
   */
  ownerToken?: string;
  /**
   * Finds and loads the optional packages (viem, @sparticuz/chromium,
   * hnswlib-node) on first use; Node's own resolution by default. The
   * acceptance test points it at names that do not exist.
   */
  packages?: PackageLoader;
  /**
   * Where the navigator looks for the machine's Chromium (Debian's
   * `/usr/bin/chromium` by default): the acceptance test points it where
   * there is none, as on a machine with only Node.
   */
  systemChromium?: string;
}

/** A tool of the node and the specialist it lands with (undefined: unmatched, or the single agent's). */
export interface OwnedTool {
  tool: AnyTool;
  owner?: string;
}

/** A built node: the agent tree, the runner, the A2A HTTP surface and their lifecycle. */
export interface LangoApp {
  readonly config: LangoConfig;
  readonly logger: Logger;
  readonly dataDir: string;
  /** Every store of the node. */
  readonly stores: Stores;
  /** Whether the database in use answers now (what `/readyz` reports); never rejects. */
  health(): Promise<StoreHealth>;
  /** This node's id on federation hop paths. */
  readonly nodeId: string;
  readonly runner: TurnRunner;
  readonly families: readonly FamilyStatus[];
  /** The live agent tree (rebuilt when remote peers join or leave, or skills change). */
  readonly tree: AgentTreeHolder;
  /** The current tree root. */
  root(): LlmAgent;
  /** The specialist table: the seven rows and any the embedder added. */
  readonly specs: readonly AgentSpec[];
  /** Every tool of the node now, in registration order, with its specialist. */
  tools(): OwnedTool[];
  /** Tools no specialist owns (by `agent` or prefix); listed in the orchestrator's instruction. */
  unmatchedTools(): string[];
  /** What `lango tools`, `doctor` and `agents` report (`observe/nodeInfo.ts`), as the node's owner-only routes do. */
  readonly info: NodeInfoSources;
  /** Health of each configured remote agent (empty without `a2a.remoteAgents`). */
  peers(): PeerStatus[];
  /** Probes the remote agent named `name` (every one when omitted) now; resolves with every one's health. */
  probePeers(name?: string): Promise<PeerStatus[]>;
  /** The request listener serving A2A, the card, discovery and health (`http.createServer(app.http)`). */
  readonly http: http.RequestListener;
  /** The node's agent card as served (ProtoJSON). */
  agentCard(): Promise<Record<string, unknown>>;
  /** Every route the node serves over HTTP, as its one route table holds them (`a2a/bindings/routes.ts`). */
  readonly routes: readonly RouteSpec[];
  /**
   * Starts listening on `server.host:server.port` (and the gRPC binding on `server.grpcPort` when set);
   * resolves with the base URL.
   */
  listen(): Promise<string>;
  /** The gRPC binding's port once `listen` started it (`server.grpcPort`; 0 picks one), else undefined. */
  readonly grpcPort: number | undefined;
  close(): Promise<void>;
}

/**
 * The composition root: the only place that constructs infrastructure
 * (database and stores, group commit, vault, logger, model, tools,
 * federation, the agent tree, runner, A2A server), each once, from a
 * validated configuration. Whatever it opened is closed again when a later
 * step fails.
 * @example
 * const app = await createApp(resolveConfig({ server: { port: 0 } }));
 * const url = await app.listen();
 * await app.close();
 */
export async function createApp(config: LangoConfig, deps: AppDeps = {}): Promise<LangoApp> {
  const secrets = deps.secrets ?? new SecretRegistry();
  secrets.add(config.agent.apiKey);
  secrets.add(config.embedding.apiKey);
  if (config.storage.url) secrets.add(storagePassword(config.storage.url));
  for (const token of [...(config.a2a.auth?.bearerTokens ?? []), ...(config.a2a.auth?.apiKeys ?? [])])
    secrets.add(token);
  secrets.add(config.observability.metricsToken);
  // Whatever logger is given writes through the secrets (winston's masks with them already).
  const logger = redactedLogger(
    deps.logger ?? createWinstonLogger({ level: config.logLevel, pretty: Boolean(process.stderr.isTTY), secrets }),
    secrets,
  );
  const clock = deps.clock ?? (() => new Date());
  const cwd = deps.cwd ?? process.cwd();
  const dataDir = path.resolve(cwd, config.dataDir);
  // From JavaScript nothing else checks their shape: every problem at once, each naming its field path.
  checkEmbedderInput(
    { specialists: deps.specialists, tools: deps.tools },
    specRows.map((row) => row.name),
  );
  const specs = defineSpecs<string>([...specRows, ...(deps.specialists ?? [])]);
  const extraTools = [...(deps.tools ?? [])];

  // Checks that need no I/O come first, so a refused start writes nothing: the
  // exposure rule (no public bind without auth), the master key's file and folder
  // (another user's or writable by others: refused), then the prompts directory.
  if (config.a2a.enabled) assertSafeExposure(config);
  if (config.security.enabled) checkMasterKeyFile({ masterKey: config.security.masterKey, dataDir });
  const tls = config.server.tls && serverTlsOptions(config.server.tls, cwd);
  const promptLogger = logger.child({ component: 'prompt' });
  const sections = loadPromptSections({ promptsDir: config.agent.promptsDir, logger: promptLogger, secrets });
  const systemPrompt = config.agent.multiAgent ? buildOrchestratorSystemPrompt(sections) : buildSystemPrompt(sections);
  const subAgentPrompt = createSubAgentPrompt({
    sections,
    promptsDir: config.agent.promptsDir,
    logger: promptLogger,
    secrets,
  });

  const cleanups: Array<() => unknown> = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        logger.warn('shutdown step failed', { error: errorMessage(err) });
      }
    }
  };

  try {
    // The observer first: the stores report their writes from the moment they open; the sinks join it last.
    const observation = createObservationHub();
    cleanups.push(() => observation.close());
    // The user's alone (0700), whatever the umask: it holds the keys, the database and the owner's token.
    makePrivateDir(dataDir);
    const storage = await openNodeStorage({
      url: config.storage.url,
      cluster: clusterSettings(config),
      dataDir,
      logger,
      clock,
      secrets,
      observer: observation,
      timelinesKept: config.observability.timeline.tasks,
    });
    // Closed last: everything else writes its final rows first.
    cleanups.push(() => storage.close());
    const { stores } = storage;
    const nodeId = await stores.node.nodeId();
    const vault = await openNodeVault(config, { stores, dataDir, secrets, clock, logger });
    const secretReferences = createSecretReferences({
      lookup: (principal, name) => requireVault(vault).secretValue(principal, name),
    });
    const callers = await nodeCallers(config, {
      specs,
      resolve: (text) => secretReferences.resolve(OWNER, text),
    });
    for (const credential of callers.credentials) secrets.add(credential.value);
    secrets.add(deps.ownerToken);
    // Who each request is, for every binding and page: one key set and one token cache per issuer. The local
    // owner token (`serveNode`) is one more owner credential; it never makes a2a.auth configured.
    const identity = createIdentity({
      config,
      callers,
      logger,
      ownerTokens: deps.ownerToken ? [deps.ownerToken] : undefined,
      now: () => clock().getTime(),
    });

    const toolset = await createToolset(toolFamilies, {
      config,
      dataDir,
      stores,
      vault,
      secretReferences,
      principals: callers,
      logger,
      secrets,
      clock,
      packages: deps.packages ?? createPackageLoader(),
      systemChromium: deps.systemChromium,
    });
    cleanups.push(() => toolset.close());

    // The tree holds no model: the runner gives every agent the node's model, which the offline model
    // needs the tree for (it routes by the keywords and tools of the agent it speaks for).
    const nodeTools = () => [...toolset.tools, ...extraTools];
    const tree = createAgentTreeHolder({
      tools: nodeTools,
      specs,
      familyOf: (toolName) => toolset.familyOf(toolName),
      multiAgent: config.agent.multiAgent,
      maxDelegationRounds: config.agent.maxDelegationRounds,
      systemPrompt,
      subAgentPrompt,
    });
    toolset.onToolsChanged(() => {
      tree.rebuild();
      logger.info('agent tree rebuilt', { component: 'tools', tools: toolset.tools.length });
    });
    // The offline model routes by the current tree; each tree's routes are worked out once.
    const offlineIndexOf = treeIndexes();
    const model =
      deps.model ??
      createConfiguredModel(config, {
        logger: logger.child({ component: 'llm' }),
        routes: (agentName) => offlineIndexOf(tree.current()).routes(agentName),
      });

    const federation = createNodeFederation(config, {
      logger,
      nodeId,
      cwd,
      localNames: [...tree.agentNames(), ...reservedAgentNames(specs)],
      // Outbound credentials for peers may be `{{secret:NAME}}` references into the owner's vault.
      resolveSecret: (name) => requireVault(vault).secretValue(OWNER, name),
      secrets,
    });
    if (federation) {
      cleanups.push(() => federation.close());
      await federation.start();
      // A peer that is down stays in the tree as a stand-in answering that it is unavailable.
      federation.onChange((remoteAgents) => {
        tree.rebuild(federation.routable());
        logger.info('agent tree rebuilt', { component: 'federation', remoteAgents: remoteAgents.map((a) => a.name) });
      });
      tree.rebuild(federation.routable());
    }
    const peers = () => federation?.status() ?? [];

    // The sinks and their pages, over what they show: the task rows, the callers, the peers and the tree.
    const observability = createObservability({
      config,
      logger,
      taskRows: storage.taskRows.tasks,
      callers,
      identity,
      peers,
      root: () => tree.current(),
      remoteCard: (name) => federation?.card(name),
      probe: async (name) => federation?.probe(name),
      stores,
      runTool: (input) => runner.runTool(input),
      runTurn: (input) => runToEnd(runner, input),
      model: () => ({ name: model.name, switchable: model.withModel !== undefined }),
      familyOf: (toolName) => toolset.familyOf(toolName),
      redact: (text) => secrets.redactText(text),
      clock,
    });
    observation.attach([observability.observer], () => observability.close());

    const runtimeLogger = logger.child({ component: 'runtime' });
    const turnEndHooks = toolset.instances.flatMap((i) => (i.onTurnEnd ? [i.onTurnEnd] : []));
    const runner = createRunner({
      tree,
      model,
      sessions: stores.sessions,
      familyOf: (toolName) => toolset.familyOf(toolName),
      logger: runtimeLogger,
      maxDelegationRounds: config.agent.maxDelegationRounds,
      maxTurnsPerAgent: config.agent.maxTurnsPerAgent,
      redact: (text) => secrets.redactText(text),
      contextProvider: combineContextProviders(
        toolset.instances.flatMap((i) => (i.contextProvider ? [i.contextProvider] : [])),
        runtimeLogger,
      ),
      onTurnEnd: async (turn) => {
        await Promise.all(turnEndHooks.map((hook) => hook(turn)));
      },
      observer: observation,
    });

    // What `lango tools`, `doctor` and `agents` report, in this process or from the node's owner-only routes.
    const ownedTools = (): OwnedTool[] =>
      nodeTools().map((tool) => ({ tool, owner: config.agent.multiAgent ? ownerOfTool(tool, specs) : undefined }));
    const info: NodeInfoSources = {
      config,
      dataDir,
      root: () => tree.current(),
      tools: ownedTools,
      unmatchedTools: () => partitionTools(nodeTools(), specs).unmatched.map((t) => t.name),
      families: () => toolset.statuses,
      peers: () => federation?.status() ?? [],
      probePeers: async () => (federation ? federation.probe() : []),
      sandbox: () => checkCommandSandbox(config, dataDir),
    };
    const a2a = createA2AServer({
      config,
      root: (principal) => tree.current(principal),
      runner,
      identity,
      redact: (text) => secrets.redactText(text),
      health: () => storage.health(),
      taskRows: storage.taskRows,
      taskEvents: storage.taskEvents,
      clusterTasks: config.storage.url
        ? createClusterTasks({ events: storage.taskEvents, rows: storage.taskRows.tasks, logger })
        : undefined,
      logger: logger.child({ component: 'a2a' }),
      clock,
      peerStatus: federation ? peers : undefined,
      remoteCard: federation ? (name) => federation.card(name) : undefined,
      // Every inbound message, federated or not: a request that already crossed this node, or too many nodes, is refused.
      admit: (metadata) => {
        const hop = checkInboundHops(metadata, nodeId, config.a2a.maxHops);
        return hop.ok ? undefined : hop.reason;
      },
      intercept: observability.intercept,
      pages: [...observability.pages, nodeInfoPages(info)],
    });
    // Before the tool families close: running turns are failed first, then the tools they use go away.
    cleanups.push(() => a2a.close());
    await toolset.start({ runner, model, agentNames: () => tree.agentNames(), runsJobs: deps.runJobs ?? true });

    let server: http.Server | https.Server | undefined;
    let grpcPort: number | undefined;
    return {
      config,
      logger,
      dataDir,
      stores,
      health: () => storage.health(),
      nodeId,
      runner,
      get families() {
        return toolset.statuses;
      },
      tree,
      root: () => tree.current(),
      specs,
      tools: ownedTools,
      unmatchedTools: info.unmatchedTools,
      info,
      peers: () => federation?.status() ?? [],
      probePeers: async (name) => (federation ? federation.probe(name) : []),
      http: a2a.app,
      agentCard: () => a2a.card(),
      routes: a2a.routes,
      get grpcPort() {
        return grpcPort;
      },
      listen: async () => {
        const url = await new Promise<string>((resolve, reject) => {
          const listening = createNodeServer(a2a.app, tls);
          const failed = (err: Error) => reject(listenError(err, config.server.host, config.server.port));
          listening.once('error', failed);
          listening.listen(config.server.port, config.server.host, () => {
            // From now on a server error (say, out of descriptors on accept) is logged, never thrown.
            listening.off('error', failed);
            listening.on('error', (err) => logger.error('http server error', { error: err.message }));
            server = listening;
            cleanups.push(() => closeServer(listening));
            const { port } = listening.address() as AddressInfo;
            const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
            const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
            a2a.setPublicUrl(url);
            resolve(url);
          });
        });
        // After the HTTP port: the card names gRPC at the public URL's host. `a2a.close` closes it.
        if (config.server.grpcPort !== undefined) {
          grpcPort = await a2a
            .listenGrpc(config.server.host, config.server.grpcPort, tls)
            .catch((err: NodeJS.ErrnoException) => {
              throw listenError(err, config.server.host, config.server.grpcPort!, 'server.grpcPort');
            });
        }
        return url;
      },
      close: async () => {
        if (server) server.closeIdleConnections();
        await closeAll();
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * The node's vault, opened once when `security.enabled` (the master key from
 * config or the key file in dataDir). A vault that cannot open leaves the node
 * running without it: the families that need it are reported broken with the
 * reason, and a secret reference fails with it.
 */
async function openNodeVault(
  config: LangoConfig,
  options: { stores: Stores; dataDir: string; secrets: SecretRegistry; clock: () => Date; logger: Logger },
): Promise<VaultAccess> {
  if (!config.security.enabled)
    return { ok: false, reason: 'secret references need the vault, which is off (security.enabled: false)' };
  try {
    const vault = await openVault({
      store: options.stores.vault,
      dataDir: options.dataDir,
      masterKey: config.security.masterKey,
      secrets: options.secrets,
      clock: options.clock,
      logger: options.logger.child({ component: 'vault' }),
    });
    return { ok: true, vault };
  } catch (err) {
    // A key someone else could have planted or read is no key: the node does not start on it.
    if (err instanceof UnsafePathError) throw err;
    const reason = errorMessage(err);
    options.logger.warn('vault unavailable; starting without it', { reason });
    return { ok: false, reason };
  }
}

/** The node's callers: `a2a.auth` with its secret references resolved and every grant checked against the node. */
async function nodeCallers(
  config: LangoConfig,
  options: { specs: readonly AgentSpec[]; resolve: (text: string) => Promise<string> },
): Promise<Callers> {
  const auth = await resolveCallerCredentials(config.a2a.auth, options.resolve);
  return createCallers(auth, {
    defaultGrant: DEFAULT_PEER_GRANT,
    known: {
      specialists: options.specs.map((spec) => spec.name),
      remoteAgents: config.a2a.remoteAgents.map((entry) => entry.name),
      toolFamilies: toolFamilies.map((family) => family.name),
    },
  });
}

/** The model `config.agent` asks for: an OpenAI-compatible endpoint, or the embedded offline model. */
function createConfiguredModel(
  config: LangoConfig,
  options: { logger: Logger; routes: (agentName: string) => readonly ModelRoute[] },
): Model {
  const { logger } = options;
  if (config.agent.provider !== 'openai') return createOfflineModel({ routes: options.routes });
  return createOpenAIModel({
    apiKey: config.agent.apiKey ?? 'none',
    baseURL: config.agent.baseUrl,
    model: config.agent.model,
    timeoutMs: config.agent.requestTimeoutMs,
    logger,
    // The model endpoint goes through the outbound address policy too: its configured host opened, pinned, no redirects.
    fetch: createEndpointFetch({ baseUrl: config.agent.baseUrl, setting: 'agent.baseUrl' }),
  });
}

/** The federation for `a2a.remoteAgents`, or undefined when there is nothing to federate. */
function createNodeFederation(
  config: LangoConfig,
  options: {
    logger: Logger;
    nodeId: string;
    cwd: string;
    localNames: string[];
    resolveSecret: SecretResolver;
    secrets: SecretRegistry;
  },
): Federation | undefined {
  const entries = config.a2a.remoteAgents;
  if (!config.a2a.enabled || entries.length === 0) return undefined;
  return createFederation({
    entries,
    // Names no remote may take: the local tree's, every specialist's (even one not created now) and the roots'.
    localNames: [...new Set(options.localNames)],
    logger: options.logger,
    cardsDir: path.resolve(options.cwd, 'agent-cards'),
    selfId: options.nodeId,
    maxHops: config.a2a.maxHops,
    verifyCards: config.a2a.verifyCards,
    cardFetchTimeoutMs: config.a2a.cardFetchTimeoutMs,
    probeIntervalMs: parseDuration(config.a2a.peerHealth.probeInterval, 'a2a.peerHealth.probeInterval'),
    resolveSecret: options.resolveSecret,
    secrets: options.secrets,
    limits: config.a2a.peerLimits,
    // `agents --check` asks the issuer for a token of the node's own callers' audience to exchange.
    selfAudience: [config.a2a.auth?.oidc?.audience ?? []].flat()[0],
  });
}

/** Why the node could not listen, as one line naming the setting to change. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number, portKey = 'server.port'): LangoError {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const why: Record<string, string | undefined> = {
    EADDRINUSE: `the port is already in use by another process (change ${portKey}${portKey === 'server.port' ? ' or PORT' : ''})`,
    EACCES: `permission denied (ports below 1024 need privileges; change ${portKey})`,
    EADDRNOTAVAIL: 'the address is not one of this machine (server.host)',
    ENOTFOUND: 'the host name does not resolve (server.host)',
    EAI_AGAIN: 'the host name could not be resolved now (server.host)',
  };
  const reason = why[err.code ?? ''] ?? (portKey === 'server.port' ? err.message : `${err.message} (${portKey})`);
  return new LangoError(`cannot listen on ${where}: ${reason}`, { cause: err });
}

/** Stops accepting connections and ends idle and active ones, so close never waits on a keep-alive client. */
function closeServer(server: http.Server | https.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
