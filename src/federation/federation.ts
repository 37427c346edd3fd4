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
import type { Logger } from '../log/logger';
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
  const peers = new FederationPeers(options);
  return {
    start: () => peers.start(),
    close: () => peers.close(),
    agents: () => peers.agents(),
    routable: () => peers.routable(),
    status: () => peers.status(),
    probe: (name) => peers.probe(name),
    card: (name) => peers.card(name),
    onChange: (listener) => peers.onChange(listener),
  };
}

/**
 * The federation's peers (see {@link createFederation}): a record per
 * configured entry, its circuit and probe timer, the listeners told when
 * the usable set changes.
 */
class FederationPeers {
  private readonly log: Logger;
  private readonly clock: { now(): number };
  private readonly circuitOptions: CircuitOptions;
  private readonly intervalMs: number;
  /** The pinned network built from the entries, unless a dispatcher was given (tests). */
  private readonly network: PeerNetwork | undefined;
  /** The options every load and probe of a peer gets: the federation's, over the pinned network. */
  private readonly loadOptions: FederationOptions &
    Pick<LoadRemoteAgentsOptions, 'dispatcher' | 'openHost' | 'dispatcherFor' | 'policy'>;
  private readonly closing = new AbortController();
  private readonly records = new Map<string, PeerRecord>();
  private readonly listeners = new Set<FederationListener>();
  private usable: string[] = [];

  constructor(private readonly options: FederationOptions) {
    this.log = options.logger.child({ component: 'federation' });
    this.clock = options.clock ?? { now: () => Date.now() };
    this.circuitOptions = { ...DEFAULT_CIRCUIT, ...options.circuit };
    this.intervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    const network = options.dispatcher
      ? undefined
      : createPeerNetwork({ entries: options.entries, lookup: options.lookup });
    this.network = network;
    const dispatcher: Dispatcher = options.dispatcher ?? (network as PeerNetwork).dispatcher;
    this.loadOptions = {
      ...options,
      dispatcher,
      openHost: network?.open,
      dispatcherFor: network?.dispatcherFor,
      policy: network?.policy,
    };
  }

  /** Now, as status times are written. */
  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  async start(): Promise<void> {
    const startedAt = this.iso();
    const loaded = await loadRemoteAgents({
      ...this.loadOptions,
      logger: this.options.logger,
      signal: this.closing.signal,
      onReport: (name: string, result: CallReport) => this.report(name, result),
    });
    const index = new Map(this.options.entries.map((e, i) => [e.name, i] as const));
    const byName = new Map(loaded.agents.map((a) => [a.name, a] as const));
    for (const peer of loaded.peers) {
      const record: PeerRecord = {
        status: { ...this.statusOf(peer), lastProbe: { at: startedAt, ok: true, latencyMs: peer.latencyMs } },
        entryIndex: index.get(peer.name) ?? 0,
        peer,
        agent: byName.get(peer.name),
        circuit: new PeerCircuit(this.circuitOptions),
        retry: true,
        skipBackoffMs: this.circuitOptions.baseBackoffMs,
      };
      this.records.set(peer.name, record);
      this.schedule(record);
    }
    loaded.skipped.forEach((skip: PeerSkip, i) => {
      // Duplicate names keep the first entry's record; later duplicates are reported under a suffixed key.
      const key = this.records.has(skip.name) ? `${skip.name}#${i}` : skip.name;
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
        entryIndex: this.options.entries.findIndex((e) => e.name === skip.name),
        circuit: new PeerCircuit(this.circuitOptions),
        retry: skip.retry,
        skipBackoffMs: this.circuitOptions.baseBackoffMs,
      };
      this.records.set(key, record);
      this.schedule(record);
    });
    this.publish();
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const record of this.records.values()) {
      clearTimeout(record.timer);
      record.timer = undefined;
      record.status.nextProbeAt = undefined;
    }
    this.listeners.clear();
    await this.network?.close();
  }

  agents(): RemoteAgent[] {
    return this.ordered()
      .filter((r) => r.agent && r.status.state === 'healthy')
      .map((r) => r.agent as RemoteAgent);
  }

  routable(): RemoteAgent[] {
    return this.ordered().flatMap((r) => {
      if (r.agent && r.status.state === 'healthy') return [r.agent];
      // Refused by config (disabled, a taken name): not in the tree at all.
      return r.retry && this.records.get(r.status.name) === r ? [this.standInOf(r)] : [];
    });
  }

  status(): PeerStatus[] {
    return this.ordered().map(({ status, peer }) => {
      const onBehalfOf = peer?.onBehalfOf;
      return {
        ...status,
        ...(status.lastProbe ? { lastProbe: { ...status.lastProbe } } : {}),
        ...(onBehalfOf ? { onBehalfOf: { mode: onBehalfOf.mode, ...onBehalfOf.last() } } : {}),
      };
    });
  }

  async probe(name?: string): Promise<PeerStatus[]> {
    const chosen = [...this.records.values()].filter((r) => name === undefined || r.status.name === name);
    // Each card, and for an on-behalf-of entry whether its issuer performs the exchange.
    await Promise.all(
      chosen.map((record) =>
        Promise.all([this.probeRecord(record), record.peer?.onBehalfOf?.check(this.options.selfAudience)]),
      ),
    );
    return this.status();
  }

  card(name: string): Record<string, unknown> | undefined {
    const card = this.records.get(name)?.peer?.sdkCard;
    return card ? (AgentCard.toJSON(card) as Record<string, unknown>) : undefined;
  }

  onChange(listener: FederationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** What a call said about peer `name`'s health: a success heals it, failures may open its circuit. */
  private report(name: string, result: CallReport): void {
    const record = this.records.get(name);
    if (!record || this.closing.signal.aborted) return;
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
      if (!wasHealthy) this.publish();
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
      this.log.warn('remote agent circuit opened', {
        name,
        url: record.status.cardUrl,
        failures: record.circuit.failures,
        lastError: result.error,
      });
      record.status = { ...record.status, state: 'open', since: record.status.since ?? this.iso() };
      this.schedule(record);
      this.publish();
    }
  }

  /** The remote agent of a peer that (re)joined, its calls reporting to its circuit. */
  private makeAgent(peer: LoadedPeer): RemoteAgent {
    return remoteAgentFor(peer, this.loadOptions, this.log, (r) => this.report(peer.name, r));
  }

  /** Tells the listeners the usable agents, when that set changed. */
  private publish(): void {
    const now = [...this.records.values()]
      .filter((r) => r.agent && r.status.state === 'healthy')
      .map((r) => r.status.name);
    if (now.join('\n') === this.usable.join('\n')) return;
    this.usable = now;
    const agents = this.agents();
    for (const listener of this.listeners) {
      try {
        listener(agents);
      } catch (error) {
        this.log.error('federation listener failed', { error });
      }
    }
  }

  /** The next probe of `record`: the interval while healthy, else its backoff, never longer than the interval. */
  private schedule(record: PeerRecord): void {
    if (this.closing.signal.aborted || !record.retry) return;
    const { state } = record.status;
    const base =
      state === 'healthy'
        ? this.intervalMs
        : Math.min(state === 'skipped' ? record.skipBackoffMs : record.circuit.backoffMs, this.intervalMs);
    const delayMs = jittered(base);
    clearTimeout(record.timer);
    record.status.nextProbeAt = new Date(this.clock.now() + delayMs).toISOString();
    record.timer = setTimeout(() => void this.probeRecord(record), timerDelay(delayMs));
    record.timer.unref();
  }

  /** Probes one peer (once at a time), then schedules its next probe. */
  private probeRecord(record: PeerRecord): Promise<void> {
    if (record.probing) return record.probing;
    if (!record.retry || this.closing.signal.aborted) return Promise.resolve();
    clearTimeout(record.timer);
    record.timer = undefined;
    record.status.nextProbeAt = undefined;
    const run = record.status.state === 'healthy' && record.peer ? this.checkHealthy(record) : this.rejoin(record);
    record.probing = run
      .catch((error: unknown) => this.log.error('remote agent probe failed unexpectedly', { error }))
      .finally(() => {
        record.probing = undefined;
        this.schedule(record);
      });
    return record.probing;
  }

  /** A healthy peer's scheduled probe: an answer keeps it, no answer marks it down at once. */
  private async checkHealthy(record: PeerRecord): Promise<void> {
    const entry = this.options.entries[record.entryIndex];
    const at = this.iso();
    const result = await probePeer(entry, record.peer as LoadedPeer, {
      ...this.loadOptions,
      logger: this.log,
      signal: this.closing.signal,
    });
    if (this.closing.signal.aborted) return;
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
    this.log.warn('remote agent down', { name: entry.name, url: record.status.cardUrl, reason: result.reason });
    this.publish();
  }

  /** Re-loads the card of a skipped, down or open peer: success (re)joins it, failure backs off. */
  private async rejoin(record: PeerRecord): Promise<void> {
    const before = record.status.state;
    const wasSkipped = before === 'skipped';
    if (before === 'open') {
      record.circuit.startProbe();
      record.status.state = 'half-open';
    }
    const entry = this.options.entries[record.entryIndex];
    const at = this.iso();
    const result = await loadScreenedPeer(entry, {
      ...this.loadOptions,
      logger: this.log,
      signal: this.closing.signal,
    });
    if (this.closing.signal.aborted) return;
    if (result.ok) {
      record.circuit.recordSuccess();
      record.peer = result.peer;
      record.agent = this.makeAgent(result.peer);
      record.standIn = undefined;
      record.status = { ...this.statusOf(result.peer), lastProbe: { at, ok: true, latencyMs: result.peer.latencyMs } };
      this.log.info(wasSkipped ? 'remote agent joined' : 'remote agent circuit closed', {
        name: entry.name,
        url: result.peer.cardUrl,
      });
      this.publish();
      return;
    }
    record.status.lastProbe = { at, ok: false, error: result.reason };
    if (wasSkipped) {
      record.skipBackoffMs = nextBackoff(record.skipBackoffMs, this.circuitOptions.maxBackoffMs);
      const changed = result.reason !== record.status.reason;
      record.status = { ...record.status, reason: result.reason, lastError: result.reason };
      // A peer that stays down the same way is logged once, not at every probe.
      (changed ? this.log.warn : this.log.debug)('remote agent still skipped', {
        name: entry.name,
        url: result.cardUrl,
        reason: result.reason,
      });
      record.retry = result.retry;
      return;
    }
    record.circuit.probeFailed();
    // A peer that stays down the same way is logged once, not at every probe.
    (result.reason !== record.status.lastError ? this.log.warn : this.log.debug)('remote agent probe failed', {
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

  /** The status of a peer just loaded: healthy. */
  private statusOf(peer: LoadedPeer): PeerStatus {
    return {
      name: peer.name,
      cardUrl: peer.cardUrl,
      state: 'healthy',
      latencyMs: peer.latencyMs,
      protocolVersion: peer.protocolVersion,
      failures: 0,
      security: describePeerSecurity(peer.sdkCard, peer.entry),
      skills: peer.sdkCard.skills.map((skill) => skill.id),
    };
  }

  /** The stand-in for a peer that is down, made once per outage. */
  private standInOf(record: PeerRecord): RemoteAgent {
    return (record.standIn ??= unavailableAgent(
      {
        name: record.status.name,
        cardUrl: record.status.cardUrl,
        description: record.peer?.description,
        keywords: record.peer?.keywords ?? [],
      },
      () => unavailableReason(record.status),
    ));
  }

  /** Every record, config order. */
  private ordered(): PeerRecord[] {
    return [...this.records.values()].sort((a, b) => a.entryIndex - b.entryIndex);
  }
}
