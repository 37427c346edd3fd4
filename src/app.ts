import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { walkAgents, type LlmAgent } from './agent/agent';
import type { AnyTool } from './agent/tool';
import type { TurnRunner } from './agent/turn';
import type { LangoConfig } from './config/schema';
import { createOfflineModel } from './llm/offline';
import { createOpenAIModel } from './llm/openai';
import type { Model } from './llm/model';
import type { Logger } from './log/logger';
import { SecretRegistry } from './log/redact';
import { createWinstonLogger } from './log/winston';
import { buildAgentTree } from './orchestration/tree';
import { partitionTools } from './orchestration/partition';
import { loadPromptSections, buildOrchestratorSystemPrompt, buildSystemPrompt, createSubAgentPrompt } from './prompt';
import { createRunner } from './agent/runner';
import { createSessionStore } from './store/sessions';
import { openDatabase, type SqliteDatabase } from './store/database';
import { toolFamilies, type ToolFamilyInstance } from './tools/families';
import { createA2AServer } from './a2a/server';

/** Dependencies a caller may supply instead of the ones built from config (tests pass real ones on temp dirs). */
export interface AppDeps {
  logger?: Logger;
  /** Replaces the model built from `config.agent` (tests: a scripted model). */
  model?: Model;
  clock?: () => Date;
  /** Resolves a relative `dataDir`; defaults to the process's working directory. */
  cwd?: string;
  secrets?: SecretRegistry;
}

/** How one tool family came up. */
export interface FamilyStatus {
  name: string;
  agent: string;
  state: 'on' | 'off' | 'broken';
  reason?: string;
  tools: string[];
}

/** A built node: the agent tree, the runner, the A2A HTTP surface and their lifecycle. */
export interface LangoApp {
  readonly config: LangoConfig;
  readonly logger: Logger;
  readonly dataDir: string;
  readonly db: SqliteDatabase;
  readonly runner: TurnRunner;
  readonly families: readonly FamilyStatus[];
  /** The current tree root (rebuilt when remote peers join or leave). */
  root(): LlmAgent;
  /** Tools no specialist owns (by prefix); listed in the orchestrator's instruction. */
  unmatchedTools(): string[];
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
 * (database, logger, model, tools, tree, runner, A2A server) from a validated
 * configuration.
 * @example
 * const app = await createApp(resolveConfig({ server: { port: 0 } }));
 * const url = await app.listen();
 * await app.close();
 */
export async function createApp(config: LangoConfig, deps: AppDeps = {}): Promise<LangoApp> {
  const secrets = deps.secrets ?? new SecretRegistry();
  secrets.add(config.agent.apiKey);
  secrets.add(config.embedding.apiKey);
  const logger =
    deps.logger ??
    createWinstonLogger({ level: config.logLevel, pretty: Boolean(process.stderr.isTTY), secrets });
  const clock = deps.clock ?? (() => new Date());
  const dataDir = path.resolve(deps.cwd ?? process.cwd(), config.dataDir);
  const db = openDatabase(path.join(dataDir, 'lango.db'));
  const model = deps.model ?? createConfiguredModel(config, logger.child({ component: 'llm' }));

  const turns = () => runner;
  const agentNames = () => walkAgents(root).map((agent) => agent.name);

  const families: FamilyStatus[] = [];
  const instances: ToolFamilyInstance[] = [];
  const tools: AnyTool[] = [];
  for (const family of toolFamilies) {
    if (!family.enabled(config)) {
      families.push({ name: family.name, agent: family.agent, state: 'off', tools: [] });
      continue;
    }
    try {
      const instance = await family.create({
        config, dataDir, db, logger: logger.child({ component: `tools.${family.name}` }), secrets, clock, model, turns, agentNames,
      });
      instances.push(instance);
      tools.push(...instance.tools);
      families.push({ name: family.name, agent: family.agent, state: 'on', tools: instance.tools.map((t) => t.name) });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      logger.warn('tool family unavailable; starting without it', { family: family.name, reason });
      families.push({ name: family.name, agent: family.agent, state: 'broken', reason, tools: [] });
    }
  }

  const promptLogger = logger.child({ component: 'prompt' });
  const sections = loadPromptSections({ promptsDir: config.agent.promptsDir, logger: promptLogger, secrets });
  const systemPrompt = config.agent.multiAgent ? buildOrchestratorSystemPrompt(sections) : buildSystemPrompt(sections);
  const subAgentPrompt = createSubAgentPrompt({ sections, promptsDir: config.agent.promptsDir, logger: promptLogger, secrets });
  const buildTree = (): LlmAgent =>
    buildAgentTree({
      tools,
      model,
      multiAgent: config.agent.multiAgent,
      maxDelegationRounds: config.agent.maxDelegationRounds,
      systemPrompt,
      subAgentPrompt,
      remoteAgents: [],
    });
  let root = buildTree();

  const sessions = createSessionStore({ db, logger: logger.child({ component: 'sessions' }), clock });
  const runner: TurnRunner = createRunner({
    root: () => root,
    sessions,
    logger: logger.child({ component: 'runtime' }),
    maxDelegationRounds: config.agent.maxDelegationRounds,
    maxTurnsPerAgent: config.agent.maxTurnsPerAgent,
  });

  const a2a = createA2AServer({ config, root: () => root, runner, db, logger: logger.child({ component: 'a2a' }), clock });
  for (const instance of instances) await instance.start?.();

  let server: http.Server | undefined;
  return {
    config,
    logger,
    dataDir,
    db,
    runner,
    families,
    root: () => root,
    unmatchedTools: () => partitionTools(tools).unmatched.map((t) => t.name),
    http: a2a.app,
    agentCard: () => a2a.card(),
    listen: () =>
      new Promise<string>((resolve, reject) => {
        server = http.createServer(a2a.app);
        server.once('error', reject);
        server.listen(config.server.port, config.server.host, () => {
          const { port } = server!.address() as AddressInfo;
          const url = `http://${config.server.host}:${port}`;
          a2a.setPublicUrl(url);
          resolve(url);
        });
      }),
    close: async () => {
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await a2a.close();
      for (const instance of instances) await instance.close?.();
      db.close();
    },
  };
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
  });
}
