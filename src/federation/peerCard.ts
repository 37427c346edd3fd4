import { AgentCard, type AgentInterface } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import type { ParsedAgentCard } from '../protocol/cardSchema';
import { RemoteAgentError } from '../errors';
import { STOPWORDS } from '../stopwords';
import { canonicalHost, LOOPBACK_NAMES } from './outbound';

/**
 * Turns a validated (still untrusted) card into what the node uses: the
 * SDK card the client is built from, with only the interfaces we allow;
 * a capped, flattened description; routing keywords from skills.
 */

/** Longest card description carried into the orchestrator's prompt. */
export const MAX_DESCRIPTION = 300;
const MAX_KEYWORDS = 24;
/** Bindings the SDK client speaks over HTTP. */
const HTTP_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);
/** A2A's gRPC binding (§10): its interface URL is a gRPC target. */
const GRPC_BINDING = 'GRPC';

/** Reads a v1.0 or v0.3 card as the SDK client's in-memory v1.0 card (v0.3 interfaces stamped `0.3`). */
export function toSdkCard(parsed: ParsedAgentCard, raw: Record<string, unknown>): AgentCard {
  if (parsed.version === '0.3') {
    return new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(raw);
  }
  return AgentCard.fromJSON(raw);
}

/**
 * Keeps the card's HTTP interfaces whose origin is `origin` (every HTTP
 * interface when `allowCrossOrigin`), so a card served from one host cannot
 * send our requests — and our credentials — to another. `localhost`,
 * `127.0.0.1` and `::1` are one machine: a card fetched from one of them
 * may name its interfaces on another (same scheme and port), with a
 * warning through `onDeviation`. A gRPC interface (`host:port`, plaintext)
 * is kept on the origin's host, any port (gRPC has its own). Throws naming
 * the offending URLs when nothing usable is left.
 */
export function pinInterfaces(
  card: AgentCard,
  origin: string,
  allowCrossOrigin: boolean,
  onDeviation: (deviation: string) => void = () => undefined,
): AgentCard {
  const offered = card.supportedInterfaces ?? [];
  let aliased: string | undefined;
  const kept = offered.filter((i) => {
    if (i.protocolBinding.toUpperCase() === GRPC_BINDING) return allowCrossOrigin || onOriginHost(i.url, origin);
    if (!HTTP_BINDINGS.has(i.protocolBinding.toUpperCase())) return false;
    let url: URL;
    try {
      url = new URL(i.url);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    if (allowCrossOrigin || url.origin === origin) return true;
    if (sameLoopbackOrigin(url, origin)) {
      aliased ??= url.origin;
      return true;
    }
    return false;
  });
  if (kept.length === 0) {
    const listed = offered.map((i) => `${i.protocolBinding} ${i.url}`).join(', ') || 'none';
    throw new RemoteAgentError(
      allowCrossOrigin
        ? `card offers no JSONRPC or HTTP+JSON interface over http(s), nor a plaintext GRPC one (listed: ${listed})`
        : `card offers no interface on its own origin ${origin} (listed: ${listed}; set allowCrossOrigin to permit)`,
    );
  }
  if (aliased)
    onDeviation(`the card names its interface on ${aliased} but was fetched from ${origin}: same machine, accepted`);
  return { ...card, supportedInterfaces: kept };
}

/**
 * The host and port of a gRPC interface URL (`host:port`, `[v6]:port`, `grpc://host:port`).
 * @throws RemoteAgentError for anything else (a TLS target, a path, no port).
 */
export function grpcTarget(url: string): { host: string; port: number } {
  const plain = url.replace(/^grpc:\/\//i, '');
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:/[\]\s]+):(\d{1,5})\/?$/.exec(plain);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65535)
    throw new RemoteAgentError(
      `gRPC interface ${JSON.stringify(url.slice(0, 200))} is not a plaintext gRPC target (host:port)`,
    );
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/**
 * Whether the peer is called over gRPC: its entry asks for it (`transport: grpc`), or its card (as pinned) offers
 * nothing the node speaks over HTTP.
 */
export function callsOverGrpc(transport: 'auto' | 'grpc', card: AgentCard): boolean {
  if (transport === 'grpc') return true;
  const bindings = (card.supportedInterfaces ?? []).map((i) => i.protocolBinding.toUpperCase());
  return bindings.includes('GRPC') && !bindings.some((b) => b === 'JSONRPC' || b === 'HTTP+JSON');
}

/** The card's gRPC interface of v1.0, if it has one. */
export function grpcInterface(card: AgentCard): AgentInterface | undefined {
  return (card.supportedInterfaces ?? []).find(
    (i) => i.protocolBinding.toUpperCase() === 'GRPC' && (i.protocolVersion || '1.0').startsWith('1'),
  );
}

/** Whether the gRPC target `url` is on the host of `origin` (this machine's names count as one). */
function onOriginHost(url: string, origin: string): boolean {
  let host: string;
  let originHost: string;
  try {
    host = grpcTarget(url).host;
    originHost = new URL(origin).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  const canonical = (h: string) => canonicalHost(h) ?? h.toLowerCase();
  const machine = (h: string) => THIS_MACHINE.has(canonical(h));
  return canonical(host) === canonical(originHost) || (machine(host) && machine(originHost));
}

/** The three names of this machine (issue 12); another loopback address may be another service. */
const THIS_MACHINE = new Set(LOOPBACK_NAMES);

/** Same scheme and port, both hosts among `localhost`, `127.0.0.1`, `::1` (in any spelling). */
function sameLoopbackOrigin(url: URL, origin: string): boolean {
  let other: URL;
  try {
    other = new URL(origin);
  } catch {
    return false;
  }
  const machine = (host: string) => THIS_MACHINE.has(canonicalHost(host) ?? '');
  return url.protocol === other.protocol && url.port === other.port && machine(url.hostname) && machine(other.hostname);
}

/**
 * The origin a `cardFile` card is pinned to: that of its first (preferred) interface (`grpc://host:port` for a
 * gRPC target), and the one hop checks name for the peer.
 */
export function preferredOrigin(card: AgentCard): string {
  const first = card.supportedInterfaces?.[0];
  try {
    if (first?.protocolBinding.toUpperCase() === GRPC_BINDING) {
      const { host, port } = grpcTarget(first.url);
      return `grpc://${host.includes(':') ? `[${host}]` : host}:${port}`;
    }
    return new URL(first?.url ?? '').origin;
  } catch {
    throw new RemoteAgentError('card has no valid interface URL');
  }
}

/** Card text made safe to quote: control characters dropped, whitespace collapsed, length capped. */
export function sanitizeCardText(text: string, max = MAX_DESCRIPTION): string {
  const flat = text
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Routing keywords from the card's skills: tags, skill-name words and
 * significant words of the examples, lower-cased, letters/digits/-/_ only,
 * deduplicated, at most 24, so card text cannot smuggle instructions
 * into the routing table.
 */
export function skillKeywords(parsed: ParsedAgentCard): string[] {
  const out = new Set<string>();
  const add = (word: string) => {
    const w = word.toLowerCase().replace(/[^a-z0-9_-]/g, '');
    if (w.length >= 3 && w.length <= 32 && !STOPWORDS.has(w) && out.size < MAX_KEYWORDS) out.add(w);
  };
  for (const skill of parsed.card.skills) for (const tag of skill.tags) add(tag.replace(/\s+/g, '-'));
  for (const skill of parsed.card.skills) for (const word of skill.name.split(/[\s/]+/)) add(word);
  for (const skill of parsed.card.skills)
    for (const ex of skill.examples) for (const word of ex.split(/\s+/)) add(word);
  return [...out];
}

/** Whether the peer streams (`capabilities.streaming`), read from the SDK card. */
export function supportsStreaming(card: AgentCard): boolean {
  return card.capabilities?.streaming === true;
}

/** The protocol the client will speak with this card: `0.3` when every kept interface is a v0.3 one. */
export function wireVersion(card: AgentCard): '1.0' | '0.3' {
  return (card.supportedInterfaces ?? []).some((i) => !i.protocolVersion || i.protocolVersion.startsWith('1'))
    ? '1.0'
    : '0.3';
}
