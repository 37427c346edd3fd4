import type { PeerSecurity } from './peerSecurity';

/**
 * Per-peer health (issue 4, "Staying healthy"; issue 28, active health): a
 * circuit breaker over the outcome of delegated calls — unreachable, timed
 * out and invalid answers count, a peer's own A2A errors do not
 * (agent-cards/README.md says why) — the backoff schedule for probing peers
 * that are down or were skipped at start-up, and what a person is told of a
 * peer that is down.
 */

/**
 * What `GET /agents` and `lango agents --check` show for a remote agent:
 * `healthy`; `down` (a probe of its card failed); `open` (its circuit opened
 * after failed calls); `half-open` (a probe after `open` is in flight);
 * `skipped` (never loaded, with the reason).
 */
export const PEER_STATES = ['healthy', 'down', 'open', 'half-open', 'skipped'] as const;
/** One of {@link PEER_STATES}. */
export type PeerState = (typeof PEER_STATES)[number];

/** The last probe of a peer's card: when it ran and what it found. */
export interface PeerProbe {
  /** When it started (ISO time). */
  at: string;
  ok: boolean;
  latencyMs?: number;
  /** Why it failed. */
  error?: string;
}

/** The health of one configured remote agent. */
export interface PeerStatus {
  name: string;
  cardUrl: string;
  state: PeerState;
  /** Why the peer is skipped (set with `state: 'skipped'`). */
  reason?: string;
  /** The last failure seen: card fetch, call or probe. */
  lastError?: string;
  /** Latency of the last successful card fetch or call. */
  latencyMs?: number;
  /** Wire protocol spoken with the peer, once its card is loaded. */
  protocolVersion?: '1.0' | '0.3';
  /** Consecutive counted failures (unreachable, timed out, invalid answer). */
  failures: number;
  /** When the next background probe runs (ISO time), if one is scheduled. */
  nextProbeAt?: string;
  /** What the peer's card asks of callers and whether the entry gives it (once its card is loaded). */
  security?: PeerSecurity;
  /** The last probe of its card (scheduled, or asked for by `agents --check` or the console). */
  lastProbe?: PeerProbe;
  /** Since when it has been unusable (ISO time); unset while healthy. */
  since?: string;
  /** The skill ids its card offers (what a skill-targeted send may name), once its card is loaded. */
  skills?: string[];
  /** How long the last call to it took, answered or not (the delegation hop as the caller saw it). */
  lastHopMs?: number;
  /**
   * With `auth.type: tokenExchange`: whether on-behalf-of works, as the last token exchange for a caller (or
   * `agents --check`'s exchange of the node's own token) found; `mode` is the entry's `onBehalfOf`.
   */
  onBehalfOf?: { mode: 'required' | 'preferred'; at?: string; ok?: boolean; reason?: string; probe?: boolean };
}

/** Tuning of {@link PeerCircuit}. */
export interface CircuitOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** First wait before probing an open (or skipped) peer. */
  baseBackoffMs: number;
  /** The wait doubles per failed probe up to this. */
  maxBackoffMs: number;
}

/** Defaults: three strikes, first probe after 5 s, at most every 5 min. */
export const DEFAULT_CIRCUIT: CircuitOptions = { failureThreshold: 3, baseBackoffMs: 5_000, maxBackoffMs: 300_000 };

/**
 * A circuit breaker for one peer. Closed: calls flow, failures are counted.
 * Open: the peer is out of the routing table until a probe. Half-open: a
 * probe is in flight; its result closes or re-opens the circuit with a
 * doubled backoff.
 * @example
 * const circuit = new PeerCircuit(DEFAULT_CIRCUIT);
 * if (circuit.recordFailure()) scheduleProbe(circuit.backoffMs);
 */
export class PeerCircuit {
  private state: 'closed' | 'open' | 'half-open' = 'closed';
  private consecutive = 0;
  private backoff: number;

  constructor(private readonly options: CircuitOptions) {
    this.backoff = options.baseBackoffMs;
  }

  /** `closed`, `open` or `half-open`. */
  get current(): 'closed' | 'open' | 'half-open' {
    return this.state;
  }

  get failures(): number {
    return this.consecutive;
  }

  /** How long to wait before the next probe. */
  get backoffMs(): number {
    return this.backoff;
  }

  /** A call or probe succeeded: closes the circuit and resets the backoff. */
  recordSuccess(): void {
    this.state = 'closed';
    this.consecutive = 0;
    this.backoff = this.options.baseBackoffMs;
  }

  /** A call failed in a way that counts; true when this failure opened the circuit. */
  recordFailure(): boolean {
    this.consecutive += 1;
    if (this.state === 'closed' && this.consecutive >= this.options.failureThreshold) {
      this.state = 'open';
      return true;
    }
    return false;
  }

  /** A probe of the peer's card failed: open at once, whatever the count (active health). */
  trip(): void {
    this.state = 'open';
    this.consecutive += 1;
  }

  /** A probe is about to run. */
  startProbe(): void {
    this.state = 'half-open';
  }

  /** The probe failed: open again, wait twice as long next time. */
  probeFailed(): void {
    this.state = 'open';
    this.consecutive += 1;
    this.backoff = nextBackoff(this.backoff, this.options.maxBackoffMs);
  }
}

/** Exponential backoff step: doubles, capped at `max`. */
export function nextBackoff(current: number, max: number): number {
  return Math.min(current * 2, max);
}

/**
 * What a person is told when a message is meant for a peer that is down:
 * `weather is unavailable: its card has not answered since 12:03; retrying`.
 * The time is the node's local time of day.
 */
export function unavailableReason(status: PeerStatus): string {
  const since = status.since ? ` since ${clockTime(new Date(status.since))}` : '';
  const why = status.lastError ? ` (${status.lastError})` : '';
  const what =
    status.state === 'open' || status.state === 'half-open'
      ? `its calls have failed${since}${why}`
      : !status.lastError || /^(card )?(unreachable|timed out)/.test(status.lastError)
        ? `its card has not answered${since}`
        : `its card could not be used${since}${why}`;
  return `${status.name} is unavailable: ${what}; retrying`;
}

/** `12:03`: a time of day as the unavailable answer gives it. */
function clockTime(at: Date): string {
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/**
 * The wait before the next scheduled probe: `ms` shortened by up to a fifth
 * at random, so peers probed together drift apart and a probe is never later
 * than its interval.
 */
export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.max(1, Math.round(ms * (1 - PROBE_JITTER * random())));
}

/** The share of an interval {@link jittered} may take off. */
const PROBE_JITTER = 0.2;

/** Default `a2a.peerHealth.probeInterval`: how often each remote's card is probed. */
export const DEFAULT_PROBE_INTERVAL_MS = 30_000;
