import type { RemoteAgent } from '../agent/agent';
import type { RemoteAgentEntry } from '../config/schema';
import { errorMessage, RemoteAgentError } from '../errors';
import type { Logger } from '../log/logger';
import { fetchJson } from './cardFetch';
import { DEFAULT_CARD_TIMEOUT_MS, DEFAULT_MAX_CARD_BYTES, type LoadedPeer, type PeerLoadOptions } from './loader';
import { loadScreenedPeer } from './loadRemoteAgents';
import type { NodeId } from './hops';
import { preferredOrigin } from './peerCard';

/**
 * Active health (issue 28): whether a loaded peer answers now, asked on a
 * schedule and on demand, so a peer that stopped answering is known before
 * any user call fails. Every probe goes through the federation's bounded,
 * policy-checked card fetch.
 */

/** What a probe found: the peer answering (with its card as loaded now), or why not. */
export type ProbeResult = { ok: true; peer: LoadedPeer; latencyMs: number } | { ok: false; reason: string };

/**
 * Probes a loaded peer: a peer configured by URL has its card loaded again
 * (fetched, checked, verified, pinned as at start); a peer whose card is a
 * file has the well-known card URL of its interface's origin asked, where any
 * HTTP answer below 500 means it is up (the file, not that URL, is its card).
 * @example
 * const result = await probePeer(entry, peer, { ...loadOptions, selfId });
 * if (!result.ok) markDown(result.reason);
 */
export async function probePeer(
  entry: RemoteAgentEntry,
  peer: LoadedPeer,
  options: PeerLoadOptions & { selfId: NodeId },
): Promise<ProbeResult> {
  const started = Date.now();
  if (!entry.cardFile) {
    // What the load warned about at start (an unsigned card, a tolerated deviation) is not repeated every interval.
    const result = await loadScreenedPeer(entry, { ...options, logger: quiet(options.logger) });
    return result.ok
      ? { ok: true, peer: result.peer, latencyMs: result.peer.latencyMs ?? Date.now() - started }
      : { ok: false, reason: result.reason };
  }
  try {
    await fetchJson(new URL('/.well-known/agent-card.json', preferredOrigin(peer.sdkCard)).href, {
      timeoutMs: options.cardFetchTimeoutMs ?? DEFAULT_CARD_TIMEOUT_MS,
      maxBytes: options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES,
      headers: { ...peer.headers, 'A2A-Version': '1.0' },
      dispatcher: options.dispatcher,
      signal: options.signal,
    });
  } catch (error) {
    const status = error instanceof RemoteAgentError ? /^HTTP (\d{3})/.exec(error.message)?.[1] : undefined;
    if (status === undefined || Number(status) >= 500) return { ok: false, reason: `card ${errorMessage(error)}` };
  }
  return { ok: true, peer, latencyMs: Date.now() - started };
}

/** `logger` with its warnings and notes as debug lines. */
function quiet(logger: Logger): Logger {
  return {
    debug: (message, meta) => logger.debug(message, meta),
    info: (message, meta) => logger.debug(message, meta),
    warn: (message, meta) => logger.debug(message, meta),
    error: (message, meta) => logger.error(message, meta),
    child: (bindings) => quiet(logger.child(bindings)),
  };
}

/**
 * The agent the tree holds for a peer that is down: it keeps the peer's
 * name, keywords and card URL, so a message meant for it is still routed to
 * it, and answers at once (no network) that the peer is unavailable, with
 * the reason `reason()` gives at that moment.
 * @example
 * const standIn = unavailableAgent({ name: 'weather', cardUrl, keywords: [] }, () => unavailableReason(status));
 */
export function unavailableAgent(
  peer: { name: string; cardUrl: string; description?: string; keywords: readonly string[] },
  reason: () => string,
): RemoteAgent {
  return Object.freeze({
    kind: 'remote' as const,
    name: peer.name,
    description: `Unavailable now (retrying). ${peer.description ?? `Remote A2A agent ${peer.name}`}`,
    keywords: [...peer.keywords],
    cardUrl: peer.cardUrl,
    // eslint-disable-next-line require-yield -- it streams nothing: the outcome is the whole answer
    async *invoke() {
      return { status: 'failed' as const, reason: reason() };
    },
  });
}
