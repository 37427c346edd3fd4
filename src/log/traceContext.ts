import { randomUUID } from 'node:crypto';

/**
 * W3C trace context (`traceparent`): read from an inbound request, carried
 * in every log line of the turn and sent on with each hop to a peer, so one
 * trace id names a whole delegation chain. Beside the logger because every
 * layer that logs may need it.
 */

/** Metadata key (and HTTP header) carrying the W3C trace context. */
export const TRACEPARENT_KEY = 'traceparent';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A parsed W3C trace context. */
export interface TraceContext {
  traceId: string;
  spanId: string;
  flags: string;
}

/** Parses a `traceparent` value; `undefined` when absent or malformed (all-zero ids are invalid). */
export function parseTraceparent(value: unknown): TraceContext | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return undefined;
  return { traceId: m[1], spanId: m[2], flags: m[3] };
}

/**
 * The `traceparent` for an outgoing call: same trace id as the inbound
 * context (a new one when there is none), a fresh span id.
 */
export function childTraceparent(inbound: unknown): { traceparent: string; traceId: string } {
  const parent = parseTraceparent(inbound);
  // randomUUID draws from a buffered entropy pool: one per request instead of two randomBytes calls.
  const random = randomUUID().replace(/-/g, '');
  const traceId = parent?.traceId ?? random;
  const spanId = parent ? random.slice(0, 16) : random.slice(16);
  return { traceparent: `00-${traceId}-${spanId}-${parent?.flags ?? '01'}`, traceId };
}
