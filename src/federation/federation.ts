import type { Dispatcher } from 'undici';
import type { RemoteAgent } from '../agent/agent';
import { AgentCard } from '@a2a-js/sdk';
import {
  DEFAULT_CIRCUIT,
  DEFAULT_PROBE_INTERVAL_MS,
  PeerCircuit,
  jittered,
  nextBackoff,
  unavailableReason,
  type CircuitOptions,
  type PeerStatus,
} from './health';
import type { LoadedPeer, PeerSkip } from './loader';
import { loadRemoteAgents, loadScreenedPeer, remoteAgentFor, type LoadRemoteAgentsOptions } from './loadRemoteAgents';
import type { Lookup } from '../net/policy';
import { timerDelay } from '../duration';
import { createPeerNetwork, type PeerNetwork } from './outbound';
import { probePeer, unavailableAgent } from './probe';
import type { CallReport } from './remoteAgent';
import { describePeerSecurity } from './peerSecurity';

/**
 * The node's set of remote agents over time: loads them at start, probes
 * each one's card on a schedule (with jitter) and on demand, keeps a circuit
 * breaker per peer, re-probes skipped and unusable peers with backoff (never
 * longer than the probe interval), and tells listeners whenever the usable
 * set changes so the orchestrator tree and instruction are rebuilt without a
 * restart. A peer that is down stays in the tree as a stand-in that answers
 * it is unavailable (issue 28): a message meant for it says so.
 */

/** Options of {@link createFederation}: those of `loadRemoteAgents` plus health tuning. */
export interface FederationOptions extends Omit<LoadRemoteAgentsOptions, 'onReport' | 'signal' | 'dispatcher'> {
  /** Replaces the pinned dispatcher built from the entries (outbound.ts); tests only. */
  dispatcher?: Dispatcher;
  /** The resolver behind the outbound address policy; injected in tests (no real DNS). */
  lookup?: Lookup;
  circuit?: Partial<CircuitOptions>;
  /** How often each peer's card is probed (`a2a.peerHealth.probeInterval`); 30 s by default. */
  probeIntervalMs?: number;
  /** Wall clock for status times; injectable for tests. */
  clock?: { now(): number };
  /**
   * The audience of the node's own callers' tokens (`a2a.auth.oidc.audience`): `probe` exchanges a token of
   * the node's own for it to check on-behalf-of entries (`agents --check`).
   */
  selfAudience?: string;
}

/** Called with the usable remote agents whenever that set changes. */
export type FederationListener = (agents: RemoteAgent[]) => void;

/** The running federation; see {@link createFederation}. */
export interface Federation {
  /** Loads every entry (parallel, bounded by about one card timeout) and starts probing. */
  start(): Promise<void>;
  /** Stops probes and timers, aborts in-flight card fetches, closes connections. */
  close(): Promise<void>;
  /** The remote agents the orchestrator may route to now (loaded and healthy), config order. */
  agents(): RemoteAgent[];
  /**
   * The remote agents the tree holds, config order: each usable one, and for
   * each that is down (or skipped and retried) a stand-in that answers at
   * once that it is unavailable, and why.
   */
  routable(): RemoteAgent[];
  /** Health of every configured entry, config order. */
  status(): PeerStatus[];
  /**
   * Probes the peer named `name` (every peer when omitted) now and resolves
   * with the health of every entry once done: `lango agents --check`, the
   * console's "probe now". Unknown names probe nothing.
   */
  probe(name?: string): Promise<PeerStatus[]>;
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
  /** What the tree holds while the peer is down. */
  standIn?: RemoteAgent;
  circuit: PeerCircuit;
  retry: boolean;
  /** Wait before the next probe of a skipped peer; doubles per failed probe. */
  skipBackoffMs: number;
  timer?: NodeJS.Timeout;
  /** The probe in flight: a second ask waits for it. */
  probing?: Promise<void>;
}

/**
 * Creates the federation for `config.a2a.remoteAgents`.
 * @example
 * const federation = createFederation({
 *   entries: config.a2a.remoteAgents, localNames, logger, cardsDir, selfId, maxHops: config.a2a.maxHops,
 *   verifyCards: config.a2a.verifyCards, cardFetchTimeoutMs: config.a2a.cardFetchTimeoutMs,
 * });
 * await federation.start();
 * federation.onChange(() => rebuildTree(federation.routable()));
 */
export function createFederation(options: FederationOptions): Federation {
  const log = options.logger.child({ component: 'federation' });
  const clock = options.clock ?? { now: () => Date.now() };
  const iso = () => new Date(clock.now()).toISOString();
  const circuitOptions: CircuitOptions = { ...DEFAULT_CIRCUIT, ...options.circuit };
  const intervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
  const network = options.dispatcher
    ? undefined
    : createPeerNetwork({ entries: options.entries, lookup: options.lookup });
  const dispatcher: Dispatcher = options.dispatcher ?? (network as PeerNetwork).dispatcher;
  const loadOptions = {
    ...options,
    dispatcher,
    openHost: network?.open,
    dispatcherFor: network?.dispatcherFor,
    policy: network?.policy,
  };
  const closing = new AbortController();
  const records = new Map<string, PeerRecord>();
  const listeners = new Set<FederationListener>();
  let usable: string[] = [];

  const report = (name: string, result: CallReport) => {
    const record = records.get(name);
    if (!record || closing.signal.aborted) return;
    if (result.ok) {
      const wasHealthy = record.status.state === 'healthy';
      record.circuit.recordSuccess();
      record.status = {
        ...record.status,
        state: 'healthy',
        failures: 0,
        latencyMs: result.latencyMs,
        lastHopMs: result.latencyMs,
        since: undefined,
      };
      if (!wasHealthy) publish();
      return;
    }
    const opened = record.circuit.recordFailure();
    record.status = {
      ...record.status,
      failures: record.circuit.failures,
      lastError: result.error,
      lastHopMs: result.latencyMs,
    };
    if (opened) {
      log.warn('remote agent circuit opened', {
        name,
        url: record.status.cardUrl,
        failures: record.circuit.failures,
        lastError: result.error,
      });
      record.status = { ...record.status, state: 'open', since: record.status.since ?? iso() };
      schedule(record);
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

  /** The next probe of `record`: the interval while healthy, else its backoff, never longer than the interval. */
  function schedule(record: PeerRecord): void {
    if (closing.signal.aborted || !record.retry) return;
    const { state } = record.status;
    const base =
      state === 'healthy'
        ? intervalMs
        : Math.min(state === 'skipped' ? record.skipBackoffMs : record.circuit.backoffMs, intervalMs);
    const delayMs = jittered(base);
    clearTimeout(record.timer);
    record.status.nextProbeAt = new Date(clock.now() + delayMs).toISOString();
    record.timer = setTimeout(() => void probe(record), timerDelay(delayMs));
    record.timer.unref();
  }

  /** Probes one peer (once at a time), then schedules its next probe. */
  function probe(record: PeerRecord): Promise<void> {
    if (record.probing) return record.probing;
    if (!record.retry || closing.signal.aborted) return Promise.resolve();
    clearTimeout(record.timer);
    record.timer = undefined;
    record.status.nextProbeAt = undefined;
    const run = record.status.state === 'healthy' && record.peer ? checkHealthy(record) : rejoin(record);
    record.probing = run
      .catch((error: unknown) => log.error('remote agent probe failed unexpectedly', { error }))
      .finally(() => {
        record.probing = undefined;
        schedule(record);
      });
    return record.probing;
  }

  /** A healthy peer's scheduled probe: an answer keeps it, no answer marks it down at once. */
  async function checkHealthy(record: PeerRecord): Promise<void> {
    const entry = options.entries[record.entryIndex];
    const at = iso();
    const result = await probePeer(entry, record.peer as LoadedPeer, {
      ...loadOptions,
      logger: log,
      signal: closing.signal,
    });
    if (closing.signal.aborted) return;
    record.status.lastProbe = result.ok
      ? { at, ok: true, latencyMs: result.latencyMs }
      : { at, ok: false, error: result.reason };
    if (result.ok) {
      record.status.latencyMs = result.latencyMs;
      return;
    }
    // A call that failed meanwhile may have opened the circuit: that state stands.
    if (record.status.state !== 'healthy') return;
    record.circuit.trip();
    record.status = {
      ...record.status,
      state: 'down',
      since: at,
      lastError: result.reason,
      failures: record.circuit.failures,
    };
    log.warn('remote agent down', { name: entry.name, url: record.status.cardUrl, reason: result.reason });
    publish();
  }

  /** Re-loads the card of a skipped, down or open peer: success (re)joins it, failure backs off. */
  async function rejoin(record: PeerRecord): Promise<void> {
    const before = record.status.state;
    const wasSkipped = before === 'skipped';
    if (before === 'open') {
      record.circuit.startProbe();
      record.status.state = 'half-open';
    }
    const entry = options.entries[record.entryIndex];
    const at = iso();
    const result = await loadScreenedPeer(entry, { ...loadOptions, logger: log, signal: closing.signal });
    if (closing.signal.aborted) return;
    if (result.ok) {
      record.circuit.recordSuccess();
      record.peer = result.peer;
      record.agent = makeAgent(result.peer);
      record.standIn = undefined;
      record.status = { ...statusOf(result.peer), lastProbe: { at, ok: true, latencyMs: result.peer.latencyMs } };
      log.info(wasSkipped ? 'remote agent joined' : 'remote agent circuit closed', {
        name: entry.name,
        url: result.peer.cardUrl,
      });
      publish();
      return;
    }
    record.status.lastProbe = { at, ok: false, error: result.reason };
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
      record.retry = result.retry;
      return;
    }
    record.circuit.probeFailed();
    // A peer that stays down the same way is logged once, not at every probe.
    (result.reason !== record.status.lastError ? log.warn : log.debug)('remote agent probe failed', {
      name: entry.name,
      url: result.cardUrl,
      reason: result.reason,
    });
    record.status = {
      ...record.status,
      state: before === 'down' ? 'down' : 'open',
      lastError: result.reason,
      failures: record.circuit.failures,
    };
  }

  const statusOf = (peer: LoadedPeer): PeerStatus => ({
    name: peer.name,
    cardUrl: peer.cardUrl,
    state: 'healthy',
    latencyMs: peer.latencyMs,
    protocolVersion: peer.protocolVersion,
    failures: 0,
    security: describePeerSecurity(peer.sdkCard, peer.entry),
    skills: peer.sdkCard.skills.map((skill) => skill.id),
  });

  /** The stand-in for a peer that is down, made once per outage. */
  const standInOf = (record: PeerRecord): RemoteAgent =>
    (record.standIn ??= unavailableAgent(
      {
        name: record.status.name,
        cardUrl: record.status.cardUrl,
        description: record.peer?.description,
        keywords: record.peer?.keywords ?? [],
      },
      () => unavailableReason(record.status),
    ));

  const ordered = () => [...records.values()].sort((a, b) => a.entryIndex - b.entryIndex);

  const federation: Federation = {
    async start() {
      const startedAt = iso();
      const loaded = await loadRemoteAgents({
        ...loadOptions,
        logger: options.logger,
        signal: closing.signal,
        onReport: report,
      });
      const index = new Map(options.entries.map((e, i) => [e.name, i] as const));
      const byName = new Map(loaded.agents.map((a) => [a.name, a] as const));
      for (const peer of loaded.peers) {
        const record: PeerRecord = {
          status: { ...statusOf(peer), lastProbe: { at: startedAt, ok: true, latencyMs: peer.latencyMs } },
          entryIndex: index.get(peer.name) ?? 0,
          peer,
          agent: byName.get(peer.name),
          circuit: new PeerCircuit(circuitOptions),
          retry: true,
          skipBackoffMs: circuitOptions.baseBackoffMs,
        };
        records.set(peer.name, record);
        schedule(record);
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
            since: startedAt,
            ...(skip.retry ? { lastProbe: { at: startedAt, ok: false, error: skip.reason } } : {}),
          },
          entryIndex: options.entries.findIndex((e) => e.name === skip.name),
          circuit: new PeerCircuit(circuitOptions),
          retry: skip.retry,
          skipBackoffMs: circuitOptions.baseBackoffMs,
        };
        records.set(key, record);
        schedule(record);
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
      return ordered()
        .filter((r) => r.agent && r.status.state === 'healthy')
        .map((r) => r.agent as RemoteAgent);
    },
    routable() {
      return ordered().flatMap((r) => {
        if (r.agent && r.status.state === 'healthy') return [r.agent];
        // Refused by config (disabled, a taken name): not in the tree at all.
        return r.retry && records.get(r.status.name) === r ? [standInOf(r)] : [];
      });
    },
    status() {
      return ordered().map(({ status, peer }) => {
        const onBehalfOf = peer?.onBehalfOf;
        return {
          ...status,
          ...(status.lastProbe ? { lastProbe: { ...status.lastProbe } } : {}),
          ...(onBehalfOf ? { onBehalfOf: { mode: onBehalfOf.mode, ...onBehalfOf.last() } } : {}),
        };
      });
    },
    async probe(name) {
      const chosen = [...records.values()].filter((r) => name === undefined || r.status.name === name);
      // Each card, and for an on-behalf-of entry whether its issuer performs the exchange.
      await Promise.all(
        chosen.map((record) => Promise.all([probe(record), record.peer?.onBehalfOf?.check(options.selfAudience)])),
      );
      return federation.status();
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
