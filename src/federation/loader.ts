import { promises as fs } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentCard } from '@a2a-js/sdk';
import type { Dispatcher } from 'undici';
import type { OutboundPolicy } from '../net/policy';
import { parseAgentCard, type ParsedAgentCard } from '../protocol/cardSchema';
import type { RemoteAgentEntry } from '../config/schema';
import { errorMessage, RemoteAgentError } from '../errors';
import type { Logger } from '../log/logger';
import { fetchJson } from './cardFetch';
import { verifyCard, type VerifyCardsMode } from './cardVerify';
import type { PeerTls } from './outbound';
import { createClientCredentials, type PeerCredentials } from './peerToken';
import { createOnBehalfOf, type OnBehalfOf } from './onBehalfOf';
import {
  grpcInterface,
  pinInterfaces,
  preferredOrigin,
  sanitizeCardText,
  skillKeywords,
  supportsStreaming,
  toSdkCard,
  wireVersion,
} from './peerCard';

/**
 * Loads one `a2a.remoteAgents` entry into a usable peer, or says why not.
 * Never throws: every failure is a {@link PeerSkip} whose reason names what
 * was wrong, so one bad peer cannot stop the node (spec "Remote agent load
 * failure": skipped with a warning, the orchestrator continues).
 */

/** Default per-fetch card deadline (`a2a.cardFetchTimeoutMs`). */
export const DEFAULT_CARD_TIMEOUT_MS = 5_000;
/** Default cap on a card body. */
export const DEFAULT_MAX_CARD_BYTES = 256 * 1024;
/** Where the SDK serves v1.0 cards, relative to a base URL; then where v0.2/v0.3 nodes did. */
const WELL_KNOWN = ['.well-known/agent-card.json', '.well-known/agent.json'];

/** The node's `SecretRegistry` as the federation uses it: registers peer credentials, masks them in peer text. */
export interface SecretSink {
  add(value: string | undefined): void;
  /** Forgets a value no longer in use (an exchanged token dropped). */
  delete?(value: string): void;
  redactText(text: string): string;
}

/** Looks up `{{secret:NAME}}` references (the vault's secrets store); `undefined` when unknown. */
export type SecretResolver = (name: string) => string | undefined | Promise<string | undefined>;

/** Everything needed to load entries; shared by {@link loadPeer} and the federation. */
export interface PeerLoadOptions {
  /** Directory `cardFile` entries are read from (the repository's `agent-cards/`). */
  cardsDir: string;
  verifyCards: VerifyCardsMode;
  cardFetchTimeoutMs?: number;
  maxCardBytes?: number;
  /** The federation's pinned dispatcher (outbound.ts): card and JWKS fetches go through the address policy. */
  dispatcher: Dispatcher;
  /** Opens a host named by the operator (a `cardFile` card's own interface host) in that policy. */
  openHost?: (url: string, allowPrivateNetwork: boolean) => void;
  /** The dispatcher of an entry with TLS material of its own, under the same policy (`PeerNetwork.dispatcherFor`). */
  dispatcherFor?: (name: string, tls: PeerTls) => Dispatcher;
  /** The address policy itself (`PeerNetwork.policy`): a gRPC peer's channel connects where it says. */
  policy?: Pick<OutboundPolicy, 'resolve'>;
  resolveSecret?: SecretResolver;
  /** Where peer credentials are registered, so the log redactor masks them (a peer echoing its token). */
  secrets?: SecretSink;
  logger: Logger;
  /** Aborts in-flight fetches (the federation closing). */
  signal?: AbortSignal;
}

/** A peer whose card was fetched, validated, verified and pinned. */
export interface LoadedPeer {
  name: string;
  entry: RemoteAgentEntry;
  /** Where the card came from, fit to show: its URL without credentials (userinfo dropped, query values masked), or a file: URL. */
  cardUrl: string;
  parsed: ParsedAgentCard;
  /** The SDK card the client is built from (pinned interfaces only). */
  sdkCard: AgentCard;
  description: string;
  keywords: string[];
  streaming: boolean;
  protocolVersion: '1.0' | '0.3';
  /** Outbound headers for this peer (auth and configured headers), secrets resolved. */
  headers: Record<string, string>;
  /** The entry's own connections (its client certificate, its CA); the federation's dispatcher when absent. */
  dispatcher?: Dispatcher;
  /** Credentials fetched when a call needs them (OAuth 2 client credentials); none for static ones (`headers`). */
  credentials?: PeerCredentials;
  /** Each call's credentials, made for its caller (`auth.type: tokenExchange`, `onBehalfOf.ts`). */
  onBehalfOf?: OnBehalfOf;
  latencyMs?: number;
}

/** Why an entry is not used. `retry` is false when only a config change can fix it. */
export interface PeerSkip {
  name: string;
  cardUrl: string;
  reason: string;
  retry: boolean;
}

/** Outcome of loading one entry. */
export type PeerLoadResult = { ok: true; peer: LoadedPeer } | ({ ok: false } & PeerSkip);

/** Where an entry's card lives, as configured (credentials included): what is fetched, never what is shown. */
function configuredCardUrl(entry: RemoteAgentEntry, cardsDir: string): string {
  if (entry.agentCardUrl) return entry.agentCardUrl;
  if (entry.baseUrl) return new URL(WELL_KNOWN[0], withSlash(entry.baseUrl)).href;
  return pathToFileURL(path.resolve(cardsDir, entry.cardFile ?? '')).href;
}

/** Where an entry's card lives as shown in status, `/agents`, the extended card and logs (see {@link displayUrl}). */
export function entryCardUrl(entry: RemoteAgentEntry, cardsDir: string): string {
  return displayUrl(configuredCardUrl(entry, cardsDir));
}

/**
 * A URL fit to show: userinfo dropped, every query value masked, fragment
 * dropped. A card URL may carry a credential (`?key=…`, `user:pass@`);
 * `/agents` and the extended card must not (issue 11, G).
 * @example
 * displayUrl('https://u:p@peer.example/card.json?key=abc'); // 'https://peer.example/card.json?key=***'
 */
export function displayUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  url.username = '';
  url.password = '';
  url.hash = '';
  const query = url.search
    .slice(1)
    .split('&')
    .filter(Boolean)
    .map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=***` : pair));
  url.search = '';
  return `${url.href}${query.length ? `?${query.join('&')}` : ''}`;
}

/**
 * Fetches (or reads) and checks the card of one entry.
 * @example
 * const result = await loadPeer(entry, { cardsDir: 'agent-cards', verifyCards: 'ifPresent', logger });
 * if (!result.ok) logger.warn('remote agent skipped', result);
 */
export async function loadPeer(entry: RemoteAgentEntry, options: PeerLoadOptions): Promise<PeerLoadResult> {
  const configuredUrl = configuredCardUrl(entry, options.cardsDir);
  const cardUrl = displayUrl(configuredUrl);
  const skip = (reason: string, retry: boolean): PeerLoadResult => ({
    ok: false,
    name: entry.name,
    cardUrl,
    reason,
    retry,
  });
  let headers: Record<string, string>;
  let transport: PeerTransport;
  try {
    headers = await outboundHeaders(entry, options.resolveSecret);
    transport = await peerTransport(entry, options);
  } catch (error) {
    return skip(errorMessage(error), false);
  }
  registerPeerSecrets(entry, headers, configuredUrl, options.secrets);
  // The card comes over the entry's own connections too: a peer that asks for a client certificate asks on every port.
  const dispatched = { ...options, dispatcher: transport.dispatcher ?? options.dispatcher };
  let raw: unknown;
  let origin: string | undefined;
  let latencyMs: number | undefined;
  try {
    if (entry.cardFile) {
      raw = await readCardFile(entry.cardFile, options);
    } else {
      const fetched = await fetchCard(entry, configuredUrl, headers, dispatched);
      raw = fetched.body;
      latencyMs = fetched.latencyMs;
      origin = new URL(fetched.url).origin;
    }
  } catch (error) {
    return skip(`card ${errorMessage(error)}`, !entry.cardFile);
  }
  // Liberal where it costs nothing (issue 12): the entry's description stands in for a card without one.
  const described = withEntryDescription(raw, entry);
  if (described !== raw) {
    options.logger.warn('remote agent card deviates from the A2A spec; tolerated', {
      name: entry.name,
      url: cardUrl,
      deviation: 'the card has no description; the entry description is used',
    });
  }
  const parsed = parseAgentCard(described);
  if (!parsed.ok) return skip(`malformed card: ${parsed.issues.join('; ')}`, true);
  const rawCard = raw as Record<string, unknown>;
  try {
    // The signature covers the card as served, never our completed copy.
    const verification = await verifyCard(parsed, rawCard, {
      mode: options.verifyCards,
      publicKey: entry.publicKey,
      timeoutMs: options.cardFetchTimeoutMs,
      dispatcher: dispatched.dispatcher,
    });
    if (verification.status === 'unchecked') {
      options.logger.warn('remote agent card signature not checked', {
        name: entry.name,
        url: cardUrl,
        reason: verification.reason,
      });
    }
    const sdkCard = toSdkCard(parsed, described as Record<string, unknown>);
    const pinOrigin = origin ?? preferredOrigin(sdkCard);
    // A cardFile card is the operator's own file: its preferred interface host counts as configured.
    if (entry.cardFile) options.openHost?.(pinOrigin, entry.allowPrivateNetwork);
    const pinned = pinInterfaces(sdkCard, pinOrigin, entry.allowCrossOrigin, (deviation) =>
      options.logger.warn('remote agent card deviates from the A2A spec; tolerated', {
        name: entry.name,
        url: cardUrl,
        deviation,
      }),
    );
    if (entry.transport === 'grpc' && !grpcInterface(pinned))
      throw new RemoteAgentError('transport: grpc, but the card offers no plaintext gRPC interface on its host');
    return {
      ok: true,
      peer: {
        name: entry.name,
        entry,
        cardUrl,
        parsed,
        sdkCard: pinned,
        description: sanitizeCardText(entry.description ?? parsed.card.description) || `Remote A2A agent ${entry.name}`,
        keywords: skillKeywords(parsed),
        streaming: supportsStreaming(pinned),
        protocolVersion: wireVersion(pinned),
        headers,
        ...transport,
        latencyMs,
      },
    };
  } catch (error) {
    return skip(errorMessage(error), true);
  }
}

/** The raw card with the entry's description when the card has none (a copy; `raw` itself when nothing is missing). */
function withEntryDescription(raw: unknown, entry: RemoteAgentEntry): unknown {
  if (!entry.description || !raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const card = raw as Record<string, unknown>;
  if (typeof card.description === 'string' && card.description.trim()) return raw;
  return { ...card, description: entry.description };
}

/** Header names whose values are credentials. */
const CREDENTIAL_HEADER = /(authorization|api[-_]?key|token|secret|password|cookie|credential|signature)/i;

/**
 * Registers everything secret an entry sends (its auth token or key,
 * credential-named or vault-resolved header values, query values and
 * userinfo of its card URL) with the redactor, so a peer echoing one
 * back never puts it in a log line or an answer.
 */
function registerPeerSecrets(
  entry: RemoteAgentEntry,
  headers: Record<string, string>,
  cardUrl: string,
  secrets?: SecretSink,
): void {
  if (!secrets) return;
  if (entry.auth?.type === 'bearer') secrets.add(headers.authorization?.replace(/^Bearer /, ''));
  if (entry.auth?.type === 'apiKey') secrets.add(headers[entry.auth.header]);
  for (const [name, value] of Object.entries(entry.headers ?? {}))
    if (CREDENTIAL_HEADER.test(name) || value.includes('{{secret:')) secrets.add(headers[name]);
  try {
    const url = new URL(cardUrl);
    if (url.password) {
      secrets.add(decodeURIComponent(url.password));
      // As it travels (Basic auth), in case a peer echoes the header.
      secrets.add(
        Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64'),
      );
    }
    for (const value of url.searchParams.values()) secrets.add(value);
  } catch {
    // a file: or unparsable URL carries no credential
  }
}

/** The auth and custom headers an entry sends, with `{{secret:NAME}}` references resolved. */
export async function outboundHeaders(
  entry: RemoteAgentEntry,
  resolveSecret?: SecretResolver,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(entry.headers ?? {})) out[key] = await resolveValue(value, resolveSecret);
  if (entry.auth?.type === 'bearer')
    out.authorization = `Bearer ${await resolveValue(entry.auth.token, resolveSecret)}`;
  if (entry.auth?.type === 'apiKey') out[entry.auth.header] = await resolveValue(entry.auth.key, resolveSecret);
  return out;
}

/** How an entry's calls go out: its own connections (TLS material) and fetched credentials, when it has them. */
interface PeerTransport {
  dispatcher?: Dispatcher;
  credentials?: PeerCredentials;
  onBehalfOf?: OnBehalfOf;
}

/**
 * The entry's TLS material (PEM, a PEM file, or `{{secret:NAME}}`) on
 * connections of its own, and its OAuth 2 client credentials or token
 * exchange, the client secret resolved and registered with the redactor.
 */
async function peerTransport(entry: RemoteAgentEntry, options: PeerLoadOptions): Promise<PeerTransport> {
  const transport: PeerTransport = {};
  if (entry.tls) {
    if (!options.dispatcherFor) throw new RemoteAgentError('tls: needs the federation network (a pinned dispatcher)');
    const tls: PeerTls = {};
    for (const key of ['cert', 'key', 'ca'] as const) {
      const value = entry.tls[key];
      if (value !== undefined) tls[key] = await pemOf(value, `tls.${key}`, options.resolveSecret);
    }
    options.secrets?.add(tls.key);
    transport.dispatcher = options.dispatcherFor(entry.name, tls);
  }
  if (entry.auth?.type === 'oauth2') {
    const clientSecret = await resolveValue(entry.auth.clientSecret, options.resolveSecret);
    options.secrets?.add(clientSecret);
    transport.credentials = createClientCredentials({
      grant: { ...entry.auth, clientSecret },
      dispatcher: transport.dispatcher ?? options.dispatcher,
      secrets: options.secrets,
      timeoutMs: options.cardFetchTimeoutMs,
    });
  }
  if (entry.auth?.type === 'tokenExchange') {
    const clientSecret = await resolveValue(entry.auth.clientSecret, options.resolveSecret);
    options.secrets?.add(clientSecret);
    transport.onBehalfOf = createOnBehalfOf({
      name: entry.name,
      grant: { ...entry.auth, clientSecret },
      dispatcher: transport.dispatcher ?? options.dispatcher,
      secrets: options.secrets,
      timeoutMs: options.cardFetchTimeoutMs,
    });
  }
  return transport;
}

/** A PEM value as written, from `{{secret:NAME}}`, or read from the file it names. */
async function pemOf(value: string, key: string, resolveSecret?: SecretResolver): Promise<string> {
  const resolved = await resolveValue(value, resolveSecret);
  if (resolved.includes('-----BEGIN')) return resolved;
  try {
    return await fs.readFile(path.resolve(resolved), 'utf8');
  } catch (error) {
    throw new RemoteAgentError(`${key}: cannot read ${resolved}: ${errorMessage(error)}`);
  }
}

async function resolveValue(value: string, resolveSecret?: SecretResolver): Promise<string> {
  const refs = [...value.matchAll(/\{\{secret:([^}]+)\}\}/g)];
  let out = value;
  for (const ref of refs) {
    const secret = resolveSecret ? await resolveSecret(ref[1].trim()) : undefined;
    if (secret === undefined)
      throw new RemoteAgentError(`secret ${ref[1].trim()} is not available (needs the vault's secrets store)`);
    out = out.replace(ref[0], secret);
  }
  return out;
}

async function fetchCard(
  entry: RemoteAgentEntry,
  cardUrl: string,
  headers: Record<string, string>,
  options: PeerLoadOptions,
): Promise<{ body: unknown; latencyMs: number; url: string }> {
  const timeoutMs = options.cardFetchTimeoutMs ?? DEFAULT_CARD_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const urls = entry.baseUrl ? WELL_KNOWN.map((p) => new URL(p, withSlash(entry.baseUrl as string)).href) : [cardUrl];
  const common = {
    maxBytes: options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES,
    dispatcher: options.dispatcher,
    signal: options.signal,
  };
  for (let i = 0; ; i++) {
    try {
      // One deadline for all candidate paths: a well-known fallback never doubles start-up time.
      const remaining = Math.max(1, deadline - Date.now());
      const { url, basic } = withoutUserinfo(urls[i]);
      const fetched = await fetchJson(url, {
        ...common,
        timeoutMs: remaining,
        headers: {
          ...(basic && !headers.authorization ? { authorization: basic } : {}),
          ...headers,
          'A2A-Version': '1.0',
        },
      });
      return { ...fetched, url };
    } catch (error) {
      // One deadline for every path: a timeout is the card's whole timeout, not what this path had left of it.
      if (error instanceof RemoteAgentError && error.message.startsWith('timed out after'))
        throw new RemoteAgentError(`timed out after ${timeoutMs} ms`, { cause: error.cause });
      const notFound = error instanceof RemoteAgentError && /^HTTP 404/.test(error.message);
      if (!notFound || i + 1 >= urls.length) throw error;
    }
  }
}

/** A URL's `user:password@` as a Basic authorization header, and the URL without it (undici refuses userinfo). */
function withoutUserinfo(raw: string): { url: string; basic?: string } {
  const url = new URL(raw);
  if (!url.username && !url.password) return { url: raw };
  const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.href, basic: `Basic ${Buffer.from(user).toString('base64')}` };
}

async function readCardFile(file: string, options: PeerLoadOptions): Promise<unknown> {
  const root = path.resolve(options.cardsDir);
  const full = path.resolve(root, file);
  // An absolute path is the configuration file's own (`config/files.ts` resolved it); a relative name stays in cardsDir.
  if (!path.isAbsolute(file) && !full.startsWith(root + path.sep))
    throw new RemoteAgentError(`file ${file} is outside ${options.cardsDir}`);
  const stat = await fs.stat(full).catch(() => undefined);
  if (!stat?.isFile())
    throw new RemoteAgentError(`file ${file} not found${path.isAbsolute(file) ? '' : ` in ${options.cardsDir}`}`);
  const max = options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES;
  if (stat.size > max) throw new RemoteAgentError(`body too large: ${stat.size} bytes, limit ${max}`);
  try {
    return JSON.parse(await fs.readFile(full, 'utf8'));
  } catch {
    throw new RemoteAgentError(`file ${file} is not valid JSON`);
  }
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
