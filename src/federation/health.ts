import type { PeerSecurity } from './peerSecurity';

/**
 * Per-peer health (issue 4, "Staying healthy"): a circuit breaker over the
 * outcome of delegated calls — unreachable, timed out and invalid answers
 * count, a peer's own A2A errors do not (agent-cards/README.md says why) —
 * and the backoff schedule for probing peers that are down or were
 * skipped at start-up.
 */

/** What `GET /agents` and `lango agents --check` show for a remote agent. */
export type PeerState = 'healthy' | 'open' | 'half-open' | 'skipped';

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
