import { RemoteAgentError } from '../errors';
import type { PeerCredentials } from './peerToken';

/*
 * What one delegated call may receive from a peer (`a2a.peerLimits`) and
 * what its exchanges showed (reached, refused, invalid, how many events):
 * the peer's fetch (`peerFetch.ts`) and the gRPC client fill a call's
 * meter, `callFaults.ts` names what went wrong from it.
 */

/** `a2a.peerLimits`: what one delegated call may receive. */
export interface PeerLimits {
  /** Largest single response or stream event, and largest answer kept from one call. */
  maxAnswerBytes: number;
  /** Most stream events one call may receive. */
  maxEvents: number;
  /** Longest one call may last. */
  maxDurationMs: number;
}

/** Defaults of `a2a.peerLimits` (the schema holds the same values). */
export const DEFAULT_PEER_LIMITS: PeerLimits = {
  maxAnswerBytes: 1024 * 1024,
  maxEvents: 10_000,
  maxDurationMs: 120_000,
};

/** A peer's answer was unusable: not JSON, an HTTP error page, a redirect, over a cap, cut off. */
export class PeerAnswerError extends RemoteAgentError {}

/**
 * What one call's exchanges with a peer showed. The SDK's own errors do
 * not say whether the peer was reached or what it sent; this does.
 */
export class PeerCallMeter {
  /**
   * @param credentials the call's own credentials (a token exchanged for its caller, `onBehalfOf.ts`), used
   * instead of the peer's for every request of the call.
   */
  constructor(readonly credentials?: PeerCredentials) {}

  /** Response headers arrived at least once: the peer is reachable. */
  responded = false;
  /** Why the answer was unusable (first reason wins). */
  invalid?: string;
  /** The peer sent an A2A error object: alive, speaking A2A, refusing. */
  rejected?: string;
  /** Stream events received. */
  events = 0;

  /** Records an unusable answer and returns the error to throw. */
  fail(reason: string): PeerAnswerError {
    this.invalid ??= reason;
    return new PeerAnswerError(`invalid answer: ${reason}`);
  }
}

/**
 * The meters of one peer's calls in flight, each found by the call's abort
 * signal: one SDK client (and its fetch) serves every call to a pinned
 * card, and the SDK hands each request's `signal` to the fetch unchanged,
 * so the signal says which call — and so which bound — a request is part of.
 */
export class PeerCallMeters {
  private readonly bySignal = new WeakMap<AbortSignal, PeerCallMeter>();

  /** A fresh meter for the call whose requests carry `signal`, with the call's own credentials when it has some. */
  start(signal: AbortSignal, credentials?: PeerCredentials): PeerCallMeter {
    const meter = new PeerCallMeter(credentials);
    this.bySignal.set(signal, meter);
    return meter;
  }

  /** The meter of the call `signal` belongs to; undefined for a request outside every call. */
  of(signal: AbortSignal | null | undefined): PeerCallMeter | undefined {
    return signal ? this.bySignal.get(signal) : undefined;
  }
}
