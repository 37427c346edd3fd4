import path from 'node:path';
import type { AnyTool } from '../agent/tool';
import { storagePassword } from '../config/cluster';
import type { LangoConfig } from '../config/schema';
import { assertSafeExposure } from '../identity/identity';
import { serverTlsOptions, type ServerTlsOptions } from '../identity/serverTls';
import type { Logger } from '../log/logger';
import { SecretRegistry } from '../log/redact';
import { redactedLogger } from '../log/redactedLogger';
import { createWinstonLogger } from '../log/winston';
import { checkEmbedderInput } from '../orchestration/embedderInput';
import { defineSpecs, specRows, type AgentSpec } from '../orchestration/specs';
import type { SubAgentPromptFunc } from '../orchestration/tree';
import { buildOrchestratorSystemPrompt, buildSystemPrompt, createSubAgentPrompt, loadPromptSections } from '../prompt';
import { checkMasterKeyFile } from '../vault/masterKey';
import type { AppDeps } from './deps';

/** What the node knows before any I/O: its logger, secrets, clock, folders, specialists, TLS and prompts. */
export interface PreparedNode {
  secrets: SecretRegistry;
  logger: Logger;
  clock: () => Date;
  cwd: string;
  dataDir: string;
  specs: readonly AgentSpec[];
  extraTools: AnyTool[];
  tls: ServerTlsOptions | undefined;
  systemPrompt: string;
  subAgentPrompt: SubAgentPromptFunc;
}

/**
 * The first step of `createApp`: what needs no I/O (the secrets to mask, the
 * logger, the embedder's input, the exposure rule, TLS, the prompts).
 */
export function prepareNode(config: LangoConfig, deps: AppDeps): PreparedNode {
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
  return { secrets, logger, clock, cwd, dataDir, specs, extraTools, tls, systemPrompt, subAgentPrompt };
}
