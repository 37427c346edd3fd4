import type http from 'node:http';
import type https from 'node:https';
import type { LlmAgent } from './agent/agent';
import type { AnyTool } from './agent/tool';
import { createRunner } from './agent/runner';
import type { ToolRunner } from './agent/toolRun';
import { runToEnd, type TurnRunner } from './agent/turn';
import { combineContextProviders } from './agent/turnState';
import { createA2AServer, type A2AServer } from './a2a/server';
import type { RouteSpec } from './a2a/bindings/routes';
import { createClusterTasks } from './a2a/tasks/clusterTasks';
import type { LangoConfig } from './config/schema';
import type { Federation } from './federation/federation';
import { checkInboundHops } from './federation/hops';
import type { PeerStatus } from './federation/health';
import type { Model } from './llm/model';
import type { Logger } from './log/logger';
import type { SecretRegistry } from './log/redact';
import type { ObservationHub } from './observation/hub';
import { createObservability } from './observe/observability';
import { nodeInfoPages, type NodeInfoSources } from './observe/nodeInfo';
import { checkCommandSandbox } from './tools/operator/family';
import type { AgentTreeHolder } from './orchestration/liveTree';
import { ownerOfTool, partitionTools } from './orchestration/partition';
import type { AgentSpec } from './orchestration/specs';
import type { StoreHealth, Stores } from './store';
import type { FamilyStatus, Toolset } from './toolset/toolset';
import { buildAgents, startFederation, type NodeAgents } from './app/agents';
import { Cleanups, openCore, type NodeCore } from './app/core';
import type { AppDeps } from './app/deps';
import { closeServer, listenNode } from './app/listen';
import { prepareNode, type PreparedNode } from './app/prepare';

export type { AppDeps } from './app/deps';
export type { FamilyStatus } from './toolset/toolset';

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
  const node = prepareNode(config, deps);
  const cleanups = new Cleanups(node.logger);
  try {
    const core = await openCore(config, deps, node, cleanups);
    const agents = await buildAgents(config, deps, node, core, cleanups);
    const federation = await startFederation(config, node, core, agents, cleanups);
    const served = serveNode(config, node, core, agents, federation);
    // Before the tool families close: running turns are failed first, then the tools they use go away.
    cleanups.push(() => served.a2a.close());
    await agents.toolset.start({
      runner: served.runner,
      model: agents.model,
      agentNames: () => agents.tree.agentNames(),
      runsJobs: deps.runJobs ?? true,
    });
    return nodeApp(config, { node, core, agents, federation, served, cleanups });
  } catch (err) {
    await cleanups.closeAll();
    throw err;
  }
}

/** What serves the node: the runner, what `lango tools`, `doctor` and `agents` report, and the A2A server. */
interface ServedNode {
  runner: TurnRunner & ToolRunner;
  ownedTools: () => OwnedTool[];
  info: NodeInfoSources;
  a2a: A2AServer;
}

/** Builds the observability sinks and pages, the runner, the node's info and the A2A server over them. */
function serveNode(
  config: LangoConfig,
  node: PreparedNode,
  core: NodeCore,
  agents: NodeAgents,
  federation: Federation | undefined,
): ServedNode {
  const { logger, secrets, clock, dataDir, specs } = node;
  const { storage, stores, nodeId, callers, identity, observation } = core;
  const { toolset, tree, model, nodeTools } = agents;
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

  const runner = createNodeRunner(config, { logger, secrets, stores, toolset, tree, model, observation });

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
  return { runner, ownedTools, info, a2a };
}

/** The node's turn runner: the live tree, the model, the sessions, the tool families' context and turn-end hooks. */
function createNodeRunner(
  config: LangoConfig,
  parts: {
    logger: Logger;
    secrets: SecretRegistry;
    stores: Stores;
    toolset: Toolset;
    tree: AgentTreeHolder;
    model: Model;
    observation: ObservationHub;
  },
): TurnRunner & ToolRunner {
  const { toolset, secrets } = parts;
  const runtimeLogger = parts.logger.child({ component: 'runtime' });
  const turnEndHooks = toolset.instances.flatMap((i) => (i.onTurnEnd ? [i.onTurnEnd] : []));
  return createRunner({
    tree: parts.tree,
    model: parts.model,
    sessions: parts.stores.sessions,
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
    observer: parts.observation,
  });
}

/** The built node as {@link LangoApp}: its parts, listening, and closing everything it opened. */
function nodeApp(
  config: LangoConfig,
  parts: {
    node: PreparedNode;
    core: NodeCore;
    agents: NodeAgents;
    federation: Federation | undefined;
    served: ServedNode;
    cleanups: Cleanups;
  },
): LangoApp {
  const { node, core, agents, federation, served, cleanups } = parts;
  const { logger } = node;
  const { a2a } = served;
  let server: http.Server | https.Server | undefined;
  let grpcPort: number | undefined;
  return {
    config,
    logger,
    dataDir: node.dataDir,
    stores: core.stores,
    health: () => core.storage.health(),
    nodeId: core.nodeId,
    runner: served.runner,
    get families() {
      return agents.toolset.statuses;
    },
    tree: agents.tree,
    root: () => agents.tree.current(),
    specs: node.specs,
    tools: served.ownedTools,
    unmatchedTools: served.info.unmatchedTools,
    info: served.info,
    peers: () => federation?.status() ?? [],
    probePeers: async (name) => (federation ? federation.probe(name) : []),
    http: a2a.app,
    agentCard: () => a2a.card(),
    routes: a2a.routes,
    get grpcPort() {
      return grpcPort;
    },
    listen: async () => {
      const listened = await listenNode({
        config,
        a2a,
        tls: node.tls,
        logger,
        onListening: (listening) => {
          server = listening;
          cleanups.push(() => closeServer(listening));
        },
      });
      if (config.server.grpcPort !== undefined) grpcPort = listened.grpcPort;
      return listened.url;
    },
    close: async () => {
      if (server) server.closeIdleConnections();
      await cleanups.closeAll();
    },
  };
}
