import type { Dispatcher } from 'undici';
import type { RemoteAgent } from '../agent/agent';
import { AgentCard } from '@a2a-js/sdk';
import { DEFAULT_CIRCUIT, PeerCircuit, nextBackoff, type CircuitOptions, type PeerStatus } from './health';
import type { LoadedPeer, PeerSkip } from './loader';
import { loadRemoteAgents, loadScreenedPeer, remoteAgentFor, type LoadRemoteAgentsOptions } from './loadRemoteAgents';
import type { Lookup } from '../net/policy';
import { createPeerNetwork, type PeerNetwork } from './outbound';
import type { CallReport } from './remoteAgent';
import { describePeerSecurity } from './peerSecurity';

/**
 * The node's set of remote agents over time: loads them at start, keeps a
 * circuit breaker per peer (an open circuit takes the peer out of
 * {@link Federation.agents}), re-probes skipped and open peers in the
 * background with exponential backoff, and tells listeners whenever the
 * usable set changes so the orchestrator tree and instruction are rebuilt
 * without a restart.
 */

/** Options of {@link createFederation}: those of `loadRemoteAgents` plus health tuning. */
export interface FederationOptions extends Omit<LoadRemoteAgentsOptions, 'onReport' | 'signal' | 'dispatcher'> {
  /** Replaces the pinned dispatcher built from the entries (outbound.ts); tests only. */
  dispatcher?: Dispatcher;
  /** The resolver behind the outbound address policy; injected in tests (no real DNS). */
  lookup?: Lookup;
  circuit?: Partial<CircuitOptions>;
  /** Wall clock for status times; injectable for tests. */
  clock?: { now(): number };
}

/** Called with the usable remote agents whenever that set changes. */
export type FederationListener = (agents: RemoteAgent[]) => void;

/** The running federation; see {@link createFederation}. */
export interface Federation {
  /** Loads every entry (parallel, bounded by about one card timeout) and starts background probing. */
  start(): Promise<void>;
  /** Stops probes and timers, aborts in-flight card fetches, closes connections. */
  close(): Promise<void>;
  /** The remote agents the orchestrator may route to now (loaded and circuit not open), config order. */
  agents(): RemoteAgent[];
  /** Health of every configured entry, config order. */
  status(): PeerStatus[];
  /** The card held for a loaded peer as ProtoJSON (pinned interfaces only), for `GET /agents/:name/card`. */
  card(name: string): Record<string, unknown> | undefined;
  /** Subscribes to changes of {@link agents}; returns the unsubscribe function. */
  onChange(listener: FederationListener): () => void;
}

interface PeerRecord {
  status: PeerStatus;
  entryIndex: number;
  peer?: LoadedPeer;
  agent?: RemoteAgent;
  circuit: PeerCircuit;
  retry: boolean;
  /** Wait before the next probe of a skipped peer; doubles per failed probe. */
  skipBackoffMs: number;
  timer?: NodeJS.Timeout;
}

/**
 * Creates the federation for `config.a2a.remoteAgents`.
 * @example
 * const federation = createFederation({
 *   entries: config.a2a.remoteAgents, localNames, logger, cardsDir, selfId, maxHops: config.a2a.maxHops,
 *   verifyCards: config.a2a.verifyCards, cardFetchTimeoutMs: config.a2a.cardFetchTimeoutMs,
 * });
 * await federation.start();
 * federation.onChange((remoteAgents) => rebuildTree(remoteAgents));
 */
export function createFederation(options: FederationOptions): Federation {
  const log = options.logger.child({ component: 'federation' });
  const clock = options.clock ?? { now: () => Date.now() };
  const circuitOptions: CircuitOptions = { ...DEFAULT_CIRCUIT, ...options.circuit };
  const network = options.dispatcher
    ? undefined
    : createPeerNetwork({ entries: options.entries, lookup: options.lookup });
  const dispatcher: Dispatcher = options.dispatcher ?? (network as PeerNetwork).dispatcher;
  const loadOptions = { ...options, dispatcher, openHost: network?.open, dispatcherFor: network?.dispatcherFor };
  const closing = new AbortController();
  const records = new Map<string, PeerRecord>();
  const listeners = new Set<FederationListener>();
  let usable: string[] = [];

  const report = (name: string, result: CallReport) => {
    const record = records.get(name);
    if (!record || closing.signal.aborted) return;
    if (result.ok) {
      record.circuit.recordSuccess();
      record.status = { ...record.status, state: 'healthy', failures: 0, latencyMs: result.latencyMs };
      return;
    }
    const opened = record.circuit.recordFailure();
    record.status = { ...record.status, failures: record.circuit.failures, lastError: result.error };
    if (opened) {
      log.warn('remote agent circuit opened', {
        name,
        url: record.status.cardUrl,
        failures: record.circuit.failures,
        lastError: result.error,
      });
      record.status.state = 'open';
      schedule(record, record.circuit.backoffMs);
      publish();
    }
  };

  const makeAgent = (peer: LoadedPeer): RemoteAgent =>
    remoteAgentFor(peer, loadOptions, log, (r) => report(peer.name, r));

  function publish(): void {
    const now = [...records.values()].filter((r) => r.agent && r.status.state === 'healthy').map((r) => r.status.name);
    if (now.join('\n') === usable.join('\n')) return;
    usable = now;
    const agents = federation.agents();
    for (const listener of listeners) {
      try {
        listener(agents);
      } catch (error) {
        log.error('federation listener failed', { error });
      }
    }
  }

  function schedule(record: PeerRecord, delayMs: number): void {
    if (closing.signal.aborted) return;
    clearTimeout(record.timer);
    record.status.nextProbeAt = new Date(clock.now() + delayMs).toISOString();
    record.timer = setTimeout(() => void probe(record), delayMs);
    record.timer.unref();
  }

  /** Re-loads the card of a skipped or open peer: success (re)joins it, failure backs off. */
  async function probe(record: PeerRecord): Promise<void> {
    record.timer = undefined;
    record.status.nextProbeAt = undefined;
    const wasSkipped = record.status.state === 'skipped';
    if (!wasSkipped) {
      record.circuit.startProbe();
      record.status.state = 'half-open';
    }
    const entry = options.entries[record.entryIndex];
    const result = await loadScreenedPeer(entry, { ...loadOptions, logger: log, signal: closing.signal });
    if (closing.signal.aborted) return;
    if (result.ok) {
      record.circuit.recordSuccess();
      record.peer = result.peer;
      record.agent = makeAgent(result.peer);
      record.status = statusOf(result.peer);
      log.info(wasSkipped ? 'remote agent joined' : 'remote agent circuit closed', {
        name: entry.name,
        url: result.peer.cardUrl,
      });
      publish();
      return;
    }
    if (wasSkipped) {
      record.skipBackoffMs = nextBackoff(record.skipBackoffMs, circuitOptions.maxBackoffMs);
      const changed = result.reason !== record.status.reason;
      record.status = { ...record.status, reason: result.reason, lastError: result.reason };
      // A peer that stays down the same way is logged once, not at every probe.
      (changed ? log.warn : log.debug)('remote agent still skipped', {
        name: entry.name,
        url: result.cardUrl,
        reason: result.reason,
      });
      if (result.retry) schedule(record, record.skipBackoffMs);
      return;
    }
    record.circuit.probeFailed();
    record.status = { ...record.status, state: 'open', lastError: result.reason, failures: record.circuit.failures };
    log.warn('remote agent probe failed', { name: entry.name, url: result.cardUrl, reason: result.reason });
    schedule(record, record.circuit.backoffMs);
  }

  const statusOf = (peer: LoadedPeer): PeerStatus => ({
    name: peer.name,
    cardUrl: peer.cardUrl,
    state: 'healthy',
    latencyMs: peer.latencyMs,
    protocolVersion: peer.protocolVersion,
    failures: 0,
    security: describePeerSecurity(peer.sdkCard, peer.entry),
  });

  const federation: Federation = {
    async start() {
      const loaded = await loadRemoteAgents({
        ...loadOptions,
        logger: options.logger,
        signal: closing.signal,
        onReport: report,
      });
      const index = new Map(options.entries.map((e, i) => [e.name, i] as const));
      const byName = new Map(loaded.agents.map((a) => [a.name, a] as const));
      for (const peer of loaded.peers) {
        records.set(peer.name, {
          status: statusOf(peer),
          entryIndex: index.get(peer.name) ?? 0,
          peer,
          agent: byName.get(peer.name),
          circuit: new PeerCircuit(circuitOptions),
          retry: true,
          skipBackoffMs: circuitOptions.baseBackoffMs,
        });
      }
      loaded.skipped.forEach((skip: PeerSkip, i) => {
        // Duplicate names keep the first entry's record; later duplicates are reported under a suffixed key.
        const key = records.has(skip.name) ? `${skip.name}#${i}` : skip.name;
        const record: PeerRecord = {
          status: {
            name: skip.name,
            cardUrl: skip.cardUrl,
            state: 'skipped',
            reason: skip.reason,
            lastError: skip.reason,
            failures: 0,
          },
          entryIndex: options.entries.findIndex((e) => e.name === skip.name),
          circuit: new PeerCircuit(circuitOptions),
          retry: skip.retry,
          skipBackoffMs: circuitOptions.baseBackoffMs,
        };
        records.set(key, record);
        if (skip.retry) schedule(record, circuitOptions.baseBackoffMs);
      });
      publish();
    },
    async close() {
      closing.abort();
      for (const record of records.values()) {
        clearTimeout(record.timer);
        record.timer = undefined;
        record.status.nextProbeAt = undefined;
      }
      listeners.clear();
      await network?.close();
    },
    agents() {
      return [...records.values()]
        .filter((r) => r.agent && r.status.state === 'healthy')
        .sort((a, b) => a.entryIndex - b.entryIndex)
        .map((r) => r.agent as RemoteAgent);
    },
    status() {
      return [...records.values()].sort((a, b) => a.entryIndex - b.entryIndex).map(({ status }) => ({ ...status }));
    },
    card(name) {
      const card = records.get(name)?.peer?.sdkCard;
      return card ? (AgentCard.toJSON(card) as Record<string, unknown>) : undefined;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return federation;
}
