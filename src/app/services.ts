import path from 'node:path';
import type { LangoConfig } from '../config/schema';
import { parseDuration } from '../duration';
import { errorMessage } from '../errors';
import { createFederation, type Federation } from '../federation/federation';
import type { SecretResolver } from '../federation/loader';
import { createCallers, resolveCallerCredentials, type Callers } from '../identity/callers';
import type { Model, ModelRoute } from '../llm/model';
import { createOfflineModel } from '../llm/offline';
import { createOpenAIModel } from '../llm/openai';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import { createEndpointFetch } from '../net/endpoint';
import type { AgentSpec } from '../orchestration/specs';
import type { Stores } from '../store';
import { DEFAULT_PEER_GRANT, toolFamilies } from '../tools/families';
import { openVault, type VaultAccess } from '../vault/vault';
import { UnsafePathError } from '../privateFiles';

/*
 * The services the composition root builds from config, one function each:
 * the vault, the callers, the model and the federation.
 */

/**
 * The node's vault, opened once when `security.enabled` (the master key from
 * config or the key file in dataDir). A vault that cannot open leaves the node
 * running without it: the families that need it are reported broken with the
 * reason, and a secret reference fails with it.
 */
export async function openNodeVault(
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
export async function nodeCallers(
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
export function createConfiguredModel(
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
export function createNodeFederation(
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
