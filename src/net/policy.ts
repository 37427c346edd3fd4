import { lookup as dnsLookup } from 'node:dns/promises';
import { LangoError } from '../errors';
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr, type IpAddress } from './address';
import { isLocalhostName, parseHost } from './host';
import { classifyAddress, scopePhrase } from './ranges';

/**
 * The outbound address policy: every request the node makes (card fetches,
 * re-probes, remote calls, push webhooks, the navigator, embeddings, the
 * model) asks it where it may connect. Public addresses pass; loopback,
 * private, link-local and reserved ones only when the caller's
 * configuration opens them explicitly. Names are resolved here, every
 * answer is judged, and the connection is made to exactly the addresses
 * judged (see `dispatcher.ts`), so DNS cannot change between check and
 * connect.
 */

/** One resolver answer. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses; injected in tests (no real DNS). */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (`getaddrinfo` through `dns.lookup`), every address, in the resolver's order. */
export const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A request the policy refused; the message says which address and which setting would open it. */
export class OutboundRefusedError extends LangoError {}

/** Options of {@link createOutboundPolicy}: what this user of the network may reach besides the public internet. */
export interface OutboundPolicyOptions {
  /** Opens every non-public address (`a2a.pushNotifications.allowPrivateNetworks`). */
  allowPrivateNetworks?: boolean;
  /** Addresses or CIDRs, any spelling, opened whichever name leads to them. */
  allowAddresses?: string[];
  /**
   * Hosts whose addresses may be non-public: names exact or as globs with
   * `*` (`*.corp.example`), or a predicate over the canonical host (the
   * lower-case name, or the formatted address of a literal).
   */
  allowHosts?: string[] | ((host: string) => boolean);
  /** The configuration key a refusal points to, so the operator knows how to open an address. */
  setting: string;
  lookup?: Lookup;
  /** Bound on one resolution: a hung resolver must not hang a request. */
  lookupTimeoutMs?: number;
}

/** The verdict on one host: the addresses a connection may use (in order), or why none. */
export type OutboundDecision = { ok: true; addresses: IpAddress[] } | { ok: false; reason: string };

/** See {@link createOutboundPolicy}. */
export interface OutboundPolicy {
  /** Judges a host without DNS: literals fully, `localhost` as loopback, other names pass (checked when resolved). */
  checkLiteral(host: string): { ok: true } | { ok: false; reason: string };
  /** Resolves a host (literal or name) and judges every address. */
  resolve(host: string, signal?: AbortSignal): Promise<OutboundDecision>;
  /** `http:`/`https:` only, then {@link OutboundPolicy.resolve} on its host. */
  checkUrl(url: string | URL, signal?: AbortSignal): Promise<OutboundDecision>;
}

const LOCALHOST_ADDRESSES = [parseIp('127.0.0.1') as IpAddress, parseIp('::1') as IpAddress];

/** Compiles a host glob: `*` matches any run of characters, the rest literally, whole name. */
export function hostGlob(pattern: string): RegExp {
  const text = pattern.trim().toLowerCase().replace(/\.$/, '');
  return new RegExp(`^${text.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
}

/**
 * Builds a policy. Openings are explicit: `allowPrivateNetworks` opens all
 * non-public addresses, `allowAddresses` some networks, `allowHosts` the
 * addresses of some names. A name whose answer mixes allowed and refused
 * addresses is refused as a whole (a rebinding answer often does).
 * Unspecified (`0.0.0.0`, `::`) and multicast addresses are refused unless
 * an `allowAddresses` network names them: connecting to `0.0.0.0` reaches
 * this machine on Linux.
 * @example
 * const policy = createOutboundPolicy({ setting: 'a2a.pushNotifications.allowPrivateNetworks' });
 * await policy.resolve('169.254.169.254'); // { ok: false, reason: '169.254.169.254 (link-local, …) is not public …' }
 */
export function createOutboundPolicy(options: OutboundPolicyOptions): OutboundPolicy {
  const cidrs: Cidr[] = (options.allowAddresses ?? []).map((text) => {
    const cidr = parseCidr(text.trim());
    if (!cidr) throw new LangoError(`${options.setting}: "${text}" is neither an IP address nor a CIDR network`);
    return cidr;
  });
  const globs = typeof options.allowHosts === 'function' ? [] : (options.allowHosts ?? []).map(hostGlob);
  const hostOpened =
    typeof options.allowHosts === 'function' ? options.allowHosts : (host: string) => globs.some((g) => g.test(host));
  const lookup = options.lookup ?? systemLookup;
  const lookupTimeoutMs = options.lookupTimeoutMs ?? 5_000;

  /** Why `ip` (reached through `host`) may not be used, or undefined when it may. */
  function refusal(ip: IpAddress, host: string): string | undefined {
    if (cidrs.some((c) => cidrContains(c, ip))) return undefined;
    const verdict = classifyAddress(ip);
    if (verdict.scope === 'public') return undefined;
    const never = verdict.scope === 'unspecified' || verdict.scope === 'multicast';
    if (!never && (options.allowPrivateNetworks || hostOpened(host))) return undefined;
    const what = host === formatIp(ip) ? `${host} is` : `${host} resolves to ${formatIp(ip)},`;
    return `${what} ${scopePhrase(verdict)}, not public; open it with ${options.setting}`;
  }

  function judge(host: string, addresses: IpAddress[], partial: boolean): OutboundDecision {
    if (addresses.length === 0) return { ok: false, reason: `${host} has no addresses` };
    const reasons = addresses.map((ip) => refusal(ip, host));
    const allowed = addresses.filter((_, i) => !reasons[i]);
    const refused = reasons.find(Boolean);
    if (refused && (!partial || allowed.length === 0)) return { ok: false, reason: refused };
    return { ok: true, addresses: allowed };
  }

  async function resolveName(name: string, signal?: AbortSignal): Promise<IpAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const bounded = new Promise<never>((_, reject) => {
      const ms = lookupTimeoutMs;
      timer = setTimeout(() => reject(new Error(`resolving ${name} timed out after ${ms} ms`)), ms);
      onAbort = () => reject(new Error(`resolving ${name} was aborted`));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const answers = await Promise.race([lookup(name), bounded]);
      return answers.flatMap((a) => {
        const ip = parseIp(a.address);
        return ip ? [ip] : [];
      });
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  const policy: OutboundPolicy = {
    checkLiteral(host) {
      const parsed = parseHost(host);
      if (parsed.kind === 'invalid') return { ok: false, reason: parsed.reason };
      if (parsed.kind === 'ip') {
        const reason = refusal(parsed.ip, formatIp(parsed.ip));
        return reason ? { ok: false, reason } : { ok: true };
      }
      if (isLocalhostName(parsed.name)) {
        const decision = judge(parsed.name, LOCALHOST_ADDRESSES, true);
        return decision.ok ? { ok: true } : decision;
      }
      return { ok: true };
    },
    async resolve(host, signal) {
      const parsed = parseHost(host);
      if (parsed.kind === 'invalid') return { ok: false, reason: parsed.reason };
      if (parsed.kind === 'ip') return judge(formatIp(parsed.ip), [parsed.ip], false);
      // `localhost` never goes to DNS: it is this machine whatever a resolver says.
      if (isLocalhostName(parsed.name)) return judge(parsed.name, LOCALHOST_ADDRESSES, true);
      let addresses: IpAddress[];
      try {
        addresses = await resolveName(parsed.name, signal);
      } catch (error) {
        return { ok: false, reason: `cannot resolve host ${parsed.name}: ${(error as Error).message}` };
      }
      return judge(parsed.name, addresses, false);
    },
    async checkUrl(url, signal) {
      let parsed: URL;
      try {
        parsed = typeof url === 'string' ? new URL(url) : url;
      } catch {
        return { ok: false, reason: `"${String(url).slice(0, 200)}" is not an absolute URL` };
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        return { ok: false, reason: `only http and https are allowed, not ${parsed.protocol}` };
      return policy.resolve(parsed.hostname, signal);
    },
  };
  return policy;
}
