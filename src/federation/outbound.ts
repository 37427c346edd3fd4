import type { Dispatcher } from 'undici';
import type { RemoteAgentEntry } from '../config/schema';
import { formatIp } from '../net/address';
import { createPinnedAgent } from '../net/dispatcher';
import { isLoopbackHost, parseHost } from '../net/host';
import { createOutboundPolicy, type Lookup, type OutboundPolicy } from '../net/policy';

/**
 * The federation's side of the outbound address policy. Peers are
 * strangers whose DNS is theirs, so every request to a peer (card fetch,
 * re-probe, JWKS, remote call, cancel) goes through one pinned dispatcher:
 * public addresses pass; a non-public one only for a host the operator
 * named in `a2a.remoteAgents` — an IP literal or `localhost` opens itself
 * (a loopback peer opens `localhost`, `127.0.0.1` and `::1`, one machine
 * under three names), a host name only with `allowPrivateNetwork: true`.
 * A card cannot open anything: an interface on another host (with
 * `allowCrossOrigin`) must be public or named in config itself.
 */

/** The names of this machine that a loopback peer may use interchangeably (issue 12). */
export const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** The canonical text a host is compared by: the formatted address for literals, the lower-case name otherwise. */
export function canonicalHost(host: string): string | undefined {
  const parsed = parseHost(host);
  if (parsed.kind === 'ip') return formatIp(parsed.ip);
  if (parsed.kind === 'name') return parsed.name;
  return undefined;
}

/** Hosts a configured URL opens: itself when it is a literal or loopback (plus the loopback names), a name on request. */
export function openedHosts(url: string, allowPrivateNetwork: boolean): string[] {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return [];
  }
  const host = canonicalHost(hostname);
  if (!host) return [];
  if (isLoopbackHost(host)) return [host, ...LOOPBACK_NAMES];
  if (parseHost(host).kind === 'ip' || allowPrivateNetwork) return [host];
  return [];
}

/** The URLs an entry names in config: its card (or base) URL, a JWKS URL in `publicKey`, its OAuth 2 (or token exchange) token URL. */
function entryUrls(entry: RemoteAgentEntry): string[] {
  const urls = [entry.agentCardUrl, entry.baseUrl].filter((u): u is string => Boolean(u));
  if (entry.publicKey && /^https?:\/\//i.test(entry.publicKey.trim())) urls.push(entry.publicKey.trim());
  if (entry.auth?.type === 'oauth2' || entry.auth?.type === 'tokenExchange') urls.push(entry.auth.tokenUrl);
  return urls;
}

/** The hosts the operator opened for peers; `cardFile` entries add theirs when loaded ({@link PeerNetwork.open}). */
export interface PeerNetwork {
  readonly dispatcher: Dispatcher;
  /** The policy behind the dispatchers, for connections no dispatcher makes (a gRPC peer's channel). */
  readonly policy: OutboundPolicy;
  /** Opens the non-public addresses of the host of `url` for this federation, as config-named. */
  open(url: string, allowPrivateNetwork: boolean): void;
  /**
   * The dispatcher of an entry with TLS material of its own (a client
   * certificate, a CA): the same address policy, its own connections;
   * made once per entry name and closed with the network.
   */
  dispatcherFor(name: string, tls: PeerTls): Dispatcher;
  close(): Promise<void>;
}

/** An entry's TLS material as read (`tls` of `a2a.remoteAgents[]`). */
export interface PeerTls {
  cert?: string;
  key?: string;
  ca?: string;
}

/**
 * The pinned dispatcher every request to a peer goes through, opened for
 * the hosts `entries` name.
 * @example
 * const network = createPeerNetwork({ entries: config.a2a.remoteAgents });
 * await fetchJson(cardUrl, { dispatcher: network.dispatcher, timeoutMs: 5000, maxBytes: 262144 });
 */
export function createPeerNetwork(options: { entries: RemoteAgentEntry[]; lookup?: Lookup }): PeerNetwork {
  const opened = new Set<string>();
  const open = (url: string, allowPrivateNetwork: boolean) => {
    for (const host of openedHosts(url, allowPrivateNetwork)) opened.add(host);
  };
  for (const entry of options.entries) {
    if (!entry.enabled) continue;
    for (const url of entryUrls(entry)) open(url, entry.allowPrivateNetwork);
  }
  const policy = createOutboundPolicy({
    setting: 'an a2a.remoteAgents entry naming this host (with allowPrivateNetwork: true for a host name)',
    allowHosts: (host) => opened.has(host),
    lookup: options.lookup,
  });
  const dispatcher = createPinnedAgent({ policy });
  const own = new Map<string, Dispatcher>();
  return {
    dispatcher,
    policy,
    open,
    dispatcherFor(name, tls) {
      let found = own.get(name);
      if (!found) own.set(name, (found = createPinnedAgent({ policy, tls })));
      return found;
    },
    close: async () => {
      await Promise.all([dispatcher, ...own.values()].map((d) => d.destroy()));
    },
  };
}
