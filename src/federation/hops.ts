/**
 * Loop prevention and trace propagation across federated nodes. Every
 * outgoing A2A message carries, in its metadata, the ids of the nodes it
 * has crossed and a hop count; a node finding itself on the path, or a path
 * longer than `a2a.maxHops`, refuses the message instead of recursing
 * (issue 4, "Loops"). The W3C `traceparent` rides along beside them (see
 * log/traceContext.ts) so one trace id names the whole delegation chain.
 */

/** Metadata key holding the node ids already crossed, oldest first. */
export const FEDERATION_PATH_KEY = 'lango.federation.path';
/** Metadata key holding how many A2A hops the request has made so far. */
export const FEDERATION_HOPS_KEY = 'lango.federation.hops';
const MAX_PATH = 64;

/**
 * This node's id on hop paths: its public A2A base URL. A function when the
 * URL is only known after `listen` (port 0); read at each use.
 */
export type NodeId = string | (() => string);

/** The current value of a {@link NodeId}. */
export function resolveNodeId(id: NodeId): string {
  return typeof id === 'function' ? id() : id;
}

/** The hop state read from inbound metadata. */
export interface HopState {
  /** Node ids crossed before this one. */
  path: string[];
  /** Hops made to reach this node (0 for a request from a user). */
  hops: number;
}

/** Result of {@link checkInboundHops}: go ahead with the hop state, or refuse with a reason. */
export type HopCheck = ({ ok: true } & HopState) | { ok: false; reason: string; path: string[]; hops: number };

/**
 * Normalizes a node id so `http://h:1/` and `http://h:1` compare equal: URLs
 * become their origin, anything else is trimmed and lower-cased.
 */
export function normalizeNodeId(id: string): string {
  try {
    const url = new URL(id);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  } catch {
    // not a URL: a plain node name
  }
  return id.trim().toLowerCase();
}

/** Reads the hop state from request metadata; missing or malformed values count as a fresh request. */
export function readHopState(metadata: Record<string, unknown> | undefined): HopState {
  const rawPath = metadata?.[FEDERATION_PATH_KEY];
  const path = Array.isArray(rawPath)
    ? rawPath.filter((p): p is string => typeof p === 'string' && p.length > 0 && p.length <= 512).slice(0, MAX_PATH)
    : [];
  const rawHops = metadata?.[FEDERATION_HOPS_KEY];
  const hops = typeof rawHops === 'number' && Number.isInteger(rawHops) && rawHops >= 0 ? rawHops : path.length;
  // A peer could claim fewer hops than the path shows; trust the larger.
  return { path, hops: Math.max(hops, path.length) };
}

/**
 * Checks an inbound A2A request before this node works on it: refused when
 * `selfId` is already on the path (a loop) or when the hop count exceeds
 * `maxHops`. The A2A executor calls this on every inbound message.
 * @example
 * const check = checkInboundHops(message.metadata, 'http://127.0.0.1:4000', config.a2a.maxHops);
 * if (!check.ok) return failTask(`refused: ${check.reason}`);
 */
export function checkInboundHops(
  metadata: Record<string, unknown> | undefined,
  selfId: string,
  maxHops: number,
): HopCheck {
  const state = readHopState(metadata);
  const self = normalizeNodeId(selfId);
  if (state.path.some((p) => normalizeNodeId(p) === self)) {
    return {
      ok: false,
      ...state,
      reason: `delegation loop: node ${self} is already on the path ${state.path.join(' -> ')}`,
    };
  }
  if (state.hops > maxHops) {
    return { ok: false, ...state, reason: `too many hops: ${state.hops} exceeds a2a.maxHops ${maxHops}` };
  }
  return { ok: true, ...state };
}

/**
 * The hop metadata for a message this node sends on: the inbound path plus
 * `selfId`, one more hop. Refused (like an inbound check) when the next hop
 * would exceed `maxHops` or when the target node is already on the path, so
 * a loop is caught before the request leaves.
 */
export function nextHop(
  inbound: Record<string, unknown> | undefined,
  selfId: string,
  maxHops: number,
  targetId?: string,
): { ok: true; metadata: Record<string, unknown> } | { ok: false; reason: string } {
  const state = readHopState(inbound);
  const path = [...state.path, normalizeNodeId(selfId)];
  const hops = state.hops + 1;
  if (hops > maxHops) return { ok: false, reason: `too many hops: ${hops} would exceed a2a.maxHops ${maxHops}` };
  if (targetId) {
    const target = normalizeNodeId(targetId);
    if (path.some((p) => normalizeNodeId(p) === target)) {
      return { ok: false, reason: `delegation loop: ${target} is already on the path ${path.join(' -> ')}` };
    }
  }
  return { ok: true, metadata: { [FEDERATION_PATH_KEY]: path, [FEDERATION_HOPS_KEY]: hops } };
}
