import { agentNameKey, type RemoteAgent } from '../agent/agent';
import type { RemoteAgentEntry } from '../config/schema';
import type { Logger } from '../log/logger';
import { entryCardUrl, loadPeer, type LoadedPeer, type PeerLoadOptions, type PeerSkip } from './loader';
import { normalizeNodeId, resolveNodeId, type NodeId } from './hops';
import type { PeerLimits } from './peerCallMeter';
import { createRemoteAgent, type CallReport } from './remoteAgent';

/**
 * The one-shot load of `a2a.remoteAgents` (spec "Remote agents loaded and
 * wired"): config-level refusals first (disabled entries, names taken by a
 * local agent or an earlier remote), then every card fetched in parallel,
 * so start-up waits about one card timeout however many peers are down.
 */

/** Options of {@link loadRemoteAgents}; `entries` is `config.a2a.remoteAgents`. */
export interface LoadRemoteAgentsOptions extends PeerLoadOptions {
  entries: RemoteAgentEntry[];
  /** Names of the local agents (orchestrator and specialists) a remote must not shadow. */
  localNames: string[];
  /** This node's id on hop paths: its public A2A base URL (a function when known only after listen). */
  selfId: NodeId;
  maxHops: number;
  /** `a2a.peerLimits`: bounds on what one delegated call may receive. */
  limits?: Partial<PeerLimits>;
  /** Receives each call's outcome for peer health, by remote name (the federation's circuit breakers). */
  onReport?: (name: string, report: CallReport) => void;
}

/** What {@link loadRemoteAgents} produced: usable agents (config order) and everything skipped. */
export interface LoadedRemoteAgents {
  agents: RemoteAgent[];
  peers: LoadedPeer[];
  skipped: PeerSkip[];
}

/**
 * Splits entries into those worth fetching and those refused by config
 * alone. Names compare case-insensitively: `Operator` would confuse the
 * model as much as `operator`.
 */
export function screenEntries(
  entries: RemoteAgentEntry[],
  localNames: string[],
  cardsDir: string,
): { candidates: RemoteAgentEntry[]; refused: PeerSkip[] } {
  const locals = new Set(localNames.map(agentNameKey));
  const taken = new Set<string>();
  const candidates: RemoteAgentEntry[] = [];
  const refused: PeerSkip[] = [];
  for (const entry of entries) {
    const key = agentNameKey(entry.name);
    const reason = !entry.enabled
      ? 'disabled in config (enabled: false)'
      : locals.has(key)
        ? `name collides with the local agent ${entry.name}`
        : taken.has(key)
          ? `name collides with another remote agent ${entry.name}`
          : undefined;
    if (reason) {
      refused.push({ name: entry.name, cardUrl: entryCardUrl(entry, cardsDir), reason, retry: false });
      continue;
    }
    taken.add(key);
    candidates.push(entry);
  }
  return { candidates, refused };
}

/** Loads one screened entry and refuses a card whose interfaces point back at this node. */
export async function loadScreenedPeer(
  entry: RemoteAgentEntry,
  options: PeerLoadOptions & { selfId: NodeId },
): Promise<{ ok: true; peer: LoadedPeer } | ({ ok: false } & PeerSkip)> {
  const result = await loadPeer(entry, options);
  if (!result.ok) return result;
  const self = normalizeNodeId(resolveNodeId(options.selfId));
  if (result.peer.sdkCard.supportedInterfaces.some((i) => normalizeNodeId(i.url) === self)) {
    return {
      ok: false,
      name: entry.name,
      cardUrl: result.peer.cardUrl,
      reason: `card points at this node (${self})`,
      retry: false,
    };
  }
  return result;
}

/**
 * Loads every entry, logs each unusable one as a warning (name, URL,
 * reason) and returns the rest as {@link RemoteAgent}s. Never throws.
 * @example
 * const { agents } = await loadRemoteAgents({
 *   entries: config.a2a.remoteAgents, localNames, logger, cardsDir: 'agent-cards',
 *   verifyCards: config.a2a.verifyCards, selfId: 'http://127.0.0.1:4000', maxHops: config.a2a.maxHops,
 * });
 */
export async function loadRemoteAgents(options: LoadRemoteAgentsOptions): Promise<LoadedRemoteAgents> {
  const log = options.logger.child({ component: 'federation' });
  const { candidates, refused } = screenEntries(options.entries, options.localNames, options.cardsDir);
  const results = await Promise.all(candidates.map((entry) => loadScreenedPeer(entry, { ...options, logger: log })));
  const peers: LoadedPeer[] = [];
  const skipped = [...refused];
  for (const result of results) {
    if (result.ok) peers.push(result.peer);
    else skipped.push({ name: result.name, cardUrl: result.cardUrl, reason: result.reason, retry: result.retry });
  }
  for (const skip of skipped)
    log.warn('remote agent skipped', { name: skip.name, url: skip.cardUrl, reason: skip.reason });
  for (const peer of peers) {
    log.info('remote agent loaded', {
      name: peer.name,
      url: peer.cardUrl,
      protocol: peer.protocolVersion,
      streaming: peer.streaming,
    });
  }
  const agents = peers.map((peer) =>
    remoteAgentFor(
      peer,
      options,
      log,
      options.onReport ? (report) => options.onReport?.(peer.name, report) : undefined,
    ),
  );
  return { agents, peers, skipped };
}

/** The {@link RemoteAgent} for a loaded peer, with the federation's dispatcher, limits and redactor. */
export function remoteAgentFor(
  peer: LoadedPeer,
  options: Pick<LoadRemoteAgentsOptions, 'selfId' | 'maxHops' | 'dispatcher' | 'policy' | 'limits' | 'secrets'>,
  logger: Logger,
  onReport?: (report: CallReport) => void,
): RemoteAgent {
  const secrets = options.secrets;
  return createRemoteAgent({
    peer,
    selfId: options.selfId,
    maxHops: options.maxHops,
    logger,
    // An entry with a client certificate of its own goes out on its own connections.
    dispatcher: peer.dispatcher ?? options.dispatcher,
    policy: options.policy,
    limits: options.limits,
    redact: secrets ? (text) => secrets.redactText(text) : undefined,
    onReport,
  });
}
