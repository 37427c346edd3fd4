import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { walkAgents, type LlmAgent, type RemoteAgent } from './agent/agent';
import { createRunner } from './agent/runner';
import type { TurnRunner } from './agent/turn';
import { combineContextProviders } from './agent/turnState';
import { assertSafeExposure } from './a2a/auth';
import { createA2AServer } from './a2a/server';
import type { LangoConfig } from './config/schema';
import { LangoError } from './errors';
import { createFederation, type Federation } from './federation/federation';
import { checkInboundHops } from './federation/hops';
import type { SecretResolver } from './federation/loader';
import type { PeerStatus } from './federation/health';
import type { Model } from './llm/model';
import { createOfflineModel } from './llm/offline';
import { createOpenAIModel } from './llm/openai';
import { createEndpointFetch } from './net/endpoint';
import type { Logger } from './log/logger';
import { SecretRegistry } from './log/redact';
import { createWinstonLogger } from './log/winston';
import { agentSpecs } from './orchestration/specs';
import { partitionTools } from './orchestration/partition';
import { buildAgentTree, RESERVED_AGENT_NAMES } from './orchestration/tree';
import { buildOrchestratorSystemPrompt, buildSystemPrompt, createSubAgentPrompt, loadPromptSections } from './prompt';
import { startBackgroundCheckpoints } from './store/checkpointer';
import { openDatabase, type SqliteDatabase } from './store/database';
import { loadNodeId } from './store/nodeId';
import { createSessionStore } from './store/sessions';
import { toolFamilies } from './tools/families';
import { createVaultSecretResolver } from './tools/vault/family';
import { createToolset, type FamilyStatus } from './tools/toolset';

export type { FamilyStatus } from './tools/toolset';

/** Dependencies a caller may supply instead of the ones built from config (tests pass real ones on temp dirs). */
export interface AppDeps {
  logger?: Logger;
  /** Replaces the model built from `config.agent` (tests: a scripted model). */
  model?: Model;
  clock?: () => Date;
  /** Resolves a relative `dataDir` and `agent-cards/`; defaults to the process's working directory. */
  cwd?: string;
  secrets?: SecretRegistry;
}

/** A built node: the agent tree, the runner, the A2A HTTP surface and their lifecycle. */
export interface LangoApp {
  readonly config: LangoConfig;
  readonly logger: Logger;
  readonly dataDir: string;
  readonly db: SqliteDatabase;
  /** This node's id on federation hop paths. */
  readonly nodeId: string;
  readonly runner: TurnRunner;
  readonly families: readonly FamilyStatus[];
  /** The current tree root (rebuilt when remote peers join or leave). */
  root(): LlmAgent;
  /** Tools no specialist owns (by prefix); listed in the orchestrator's instruction. */
  unmatchedTools(): string[];
  /** Health of each configured remote agent (empty without `a2a.remoteAgents`). */
  peers(): PeerStatus[];
  /** The express application serving A2A, the card, discovery and health. */
  readonly http: express.Express;
  /** The node's agent card as served (ProtoJSON). */
  agentCard(): Promise<Record<string, unknown>>;
  /** Starts listening on `server.host:server.port`; resolves with the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The composition root: the only place that constructs infrastructure
 * (database, logger, model, tools, federation, tree, runner, A2A server)
 * from a validated configuration. Whatever it opened is closed again when a
 * later step fails.
 * @example
 * const app = await createApp(resolveConfig({ server: { port: 0 } }));
 * const url = await app.listen();
 * await app.close();
 */
export async function createApp(config: LangoConfig, deps: AppDeps = {}): Promise<LangoApp> {
  const secrets = deps.secrets ?? new SecretRegistry();
  secrets.add(config.agent.apiKey);
  secrets.add(config.embedding.apiKey);
  for (const token of [...(config.a2a.auth?.bearerTokens ?? []), ...(config.a2a.auth?.apiKeys ?? [])])
    secrets.add(token);
  const logger =
    deps.logger ?? createWinstonLogger({ level: config.logLevel, pretty: Boolean(process.stderr.isTTY), secrets });
  const clock = deps.clock ?? (() => new Date());
  const cwd = deps.cwd ?? process.cwd();
  const dataDir = path.resolve(cwd, config.dataDir);

  // Checks that need no I/O come first, so a refused start writes nothing: the
  // exposure rule (no public bind without auth), then the prompts directory.
  if (config.a2a.enabled) assertSafeExposure(config);
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
        logger.warn('shutdown step failed', { error: err instanceof Error ? err.message : String(err) });
      }
    }
  };

  try {
    const dbFile = path.join(dataDir, 'lango.db');
    const db = openDatabase(dbFile);
    cleanups.push(() => db.close());
    const stopCheckpoints = startBackgroundCheckpoints({ db, file: dbFile, logger });
    cleanups.push(stopCheckpoints);
    const nodeId = loadNodeId(db);
    const model = deps.model ?? createConfiguredModel(config, logger.child({ component: 'llm' }));

    let root: LlmAgent | undefined;
    let runner: TurnRunner | undefined;
    const currentRoot = (): LlmAgent => {
      if (!root) throw new Error('the agent tree is not built yet');
      return root;
    };
    const toolset = await createToolset(toolFamilies, {
      config,
      dataDir,
      db,
      logger,
      secrets,
      clock,
      model,
      turns: () => {
        if (!runner) throw new Error('the runner is not built yet');
        return runner;
      },
      agentNames: () => walkAgents(currentRoot()).map((agent) => agent.name),
      toolsChanged: () => {
        if (!root) return; // during start-up the tree is built from the final tools anyway
        root = buildTree(federation?.agents() ?? []);
        logger.info('agent tree rebuilt', { component: 'tools', tools: toolset.tools.length });
      },
    });
    cleanups.push(() => toolset.close());

    const buildTree = (remoteAgents: RemoteAgent[]): LlmAgent =>
      buildAgentTree({
        tools: toolset.tools,
        model,
        multiAgent: config.agent.multiAgent,
        maxDelegationRounds: config.agent.maxDelegationRounds,
        systemPrompt,
        subAgentPrompt,
        remoteAgents,
      });

    // Outbound credentials for peers may be `{{secret:NAME}}` references into the vault.
    const vaultSecrets = createVaultSecretResolver({ config, dataDir, db, secrets, clock, logger });
    const federation = createNodeFederation(config, {
      logger,
      nodeId,
      cwd,
      localNames: walkAgents(buildTree([])).map((a) => a.name),
      resolveSecret: (name) => vaultSecrets.resolveSecretReferences(`{{secret:${name}}}`),
      secrets,
    });
    if (federation) {
      cleanups.push(() => federation.close());
      await federation.start();
      federation.onChange((remoteAgents) => {
        root = buildTree(remoteAgents);
        logger.info('agent tree rebuilt', { component: 'federation', remoteAgents: remoteAgents.map((a) => a.name) });
      });
    }
    root = buildTree(federation?.agents() ?? []);

    const sessions = createSessionStore({
      db,
      logger: logger.child({ component: 'sessions' }),
      clock,
      redact: (text) => secrets.redactText(text),
    });
    cleanups.push(() => sessions.flush());
    const runtimeLogger = logger.child({ component: 'runtime' });
    const turnEndHooks = toolset.instances.flatMap((i) => (i.onTurnEnd ? [i.onTurnEnd] : []));
    runner = createRunner({
      root: currentRoot,
      sessions,
      logger: runtimeLogger,
      maxDelegationRounds: config.agent.maxDelegationRounds,
      maxTurnsPerAgent: config.agent.maxTurnsPerAgent,
      contextProvider: combineContextProviders(
        toolset.instances.flatMap((i) => (i.contextProvider ? [i.contextProvider] : [])),
        runtimeLogger,
      ),
      onTurnEnd: async (turn) => {
        await Promise.all(turnEndHooks.map((hook) => hook(turn)));
      },
    });

    const a2a = createA2AServer({
      config,
      root: currentRoot,
      runner,
      db,
      logger: logger.child({ component: 'a2a' }),
      clock,
      peerStatus: federation ? () => federation.status() : undefined,
      remoteCard: federation ? (name) => federation.card(name) : undefined,
      // Every inbound message, federated or not: a request that already crossed this node, or too many nodes, is refused.
      admit: (metadata) => {
        const hop = checkInboundHops(metadata, nodeId, config.a2a.maxHops);
        return hop.ok ? undefined : hop.reason;
      },
    });
    // Before the tool families close: running turns are failed first, then the tools they use go away.
    cleanups.push(() => a2a.close());
    for (const instance of toolset.instances) await instance.start?.();

    let server: http.Server | undefined;
    return {
      config,
      logger,
      dataDir,
      db,
      nodeId,
      runner,
      get families() {
        return toolset.statuses;
      },
      root: currentRoot,
      unmatchedTools: () => partitionTools(toolset.tools).unmatched.map((t) => t.name),
      peers: () => federation?.status() ?? [],
      http: a2a.app,
      agentCard: () => a2a.card(),
      listen: () =>
        new Promise<string>((resolve, reject) => {
          const listening = http.createServer(a2a.app);
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
            const url = `http://${host}:${port}`;
            a2a.setPublicUrl(url);
            resolve(url);
          });
        }),
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

/** The model `config.agent` asks for: an OpenAI-compatible endpoint, or the embedded offline model. */
function createConfiguredModel(config: LangoConfig, logger: Logger): Model {
  if (config.agent.provider !== 'openai') return createOfflineModel();
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
    localNames: [...new Set([...options.localNames, ...agentSpecs.map((s) => s.name), ...RESERVED_AGENT_NAMES])],
    logger: options.logger,
    cardsDir: path.resolve(options.cwd, 'agent-cards'),
    selfId: options.nodeId,
    maxHops: config.a2a.maxHops,
    verifyCards: config.a2a.verifyCards,
    cardFetchTimeoutMs: config.a2a.cardFetchTimeoutMs,
    resolveSecret: options.resolveSecret,
    secrets: options.secrets,
    limits: config.a2a.peerLimits,
  });
}

/** Why the node could not listen, as one line naming the setting to change. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): LangoError {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const why: Record<string, string | undefined> = {
    EADDRINUSE: 'the port is already in use by another process (change server.port or PORT)',
    EACCES: 'permission denied (ports below 1024 need privileges; change server.port)',
    EADDRNOTAVAIL: 'the address is not one of this machine (server.host)',
    ENOTFOUND: 'the host name does not resolve (server.host)',
    EAI_AGAIN: 'the host name could not be resolved now (server.host)',
  };
  return new LangoError(`cannot listen on ${where}: ${why[err.code ?? ''] ?? err.message}`, { cause: err });
}

/** Stops accepting connections and ends idle and active ones, so close never waits on a keep-alive client. */
function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
