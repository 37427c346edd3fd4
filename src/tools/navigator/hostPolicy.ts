import { ConfigError } from '../../errors';
import { cidrContains, formatIp, parseCidr, parseIp, unmapIPv4, type Cidr, type IpAddress } from '../../net/address';
import { parseHost } from '../../net/host';
import { createOutboundPolicy, hostGlob, type Lookup } from '../../net/policy';
import { classifyAddress } from '../../net/ranges';

/** Resolves a hostname to every address it has: the outbound policy's resolver type. */
export type LookupFn = Lookup;

/** The verdict on one host: where to connect when allowed, why not otherwise. */
export type HostDecision = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

/** Options for {@link createHostPolicy}. */
export interface HostPolicyOptions {
  /** `tools.browser.allow`: host globs (`*.example.com`), IPs or CIDRs (`10.0.0.0/8`). Empty = any public host. */
  allow: string[];
  /** `tools.browser.deny`: same forms; a match always refuses. */
  deny: string[];
  /** Injected for tests; `dns.lookup` by default. */
  lookup?: LookupFn;
  /** Bound on one resolution; a hung resolver must not hang a page load. */
  lookupTimeoutMs?: number;
}

/**
 * Decides which hosts the browser may reach, on top of the node's outbound
 * address policy (src/net): that policy parses every spelling of an
 * address, resolves names and judges every address; this adds the
 * navigator's deny list and its allow-only mode. Checked by
 * `browser_navigate` before a page load and by the guard proxy for every
 * request the browser makes (redirects, frames, subresources); the proxy
 * then connects to the very address approved.
 */
export interface HostPolicy {
  /** Checks a bare hostname or IP literal (brackets allowed for IPv6). */
  checkHost(hostname: string): Promise<HostDecision>;
  /** Checks a URL: http and https only, then its host. */
  checkUrl(url: string): Promise<HostDecision>;
}

/** True for loopback, private, link-local and other non-public addresses (the outbound policy's classification). */
export function isPrivateAddress(address: string): boolean {
  const ip = parseIp(address);
  return ip !== undefined && classifyAddress(ip).scope !== 'public';
}

/** One allow/deny entry compiled: a CIDR (or one address), or a case-insensitive glob over host names. */
interface Pattern {
  source: string;
  cidr?: Cidr;
  glob?: RegExp;
}

function compilePattern(source: string): Pattern {
  const text = source
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (text.includes('/')) {
    const cidr = parseCidr(text);
    if (!cidr) throw new ConfigError(`tools.browser allow/deny entry "${source}" is not a valid CIDR`);
    return { source, cidr };
  }
  const ip = parseIp(text);
  return ip ? { source, cidr: parseCidr(text) } : { source, glob: hostGlob(text) };
}

const matchesHost = (p: Pattern, host: string) => p.glob?.test(host) ?? false;
const matchesAddress = (p: Pattern, ip: IpAddress) => (p.cidr ? cidrContains(p.cidr, ip) : false);

/**
 * Builds the browser's host policy. Order: `deny` (host or any address)
 * refuses; a non-empty `allow` must match the host or every address; a
 * private or loopback address needs an allow entry naming it (the catch-all
 * `*` only opens public hosts).
 * @example
 * const policy = createHostPolicy({ allow: ['127.0.0.1'], deny: ['*.ads.example'] });
 * await policy.checkUrl('http://127.0.0.1:8080/'); // { ok: true, address: '127.0.0.1', family: 4 }
 * await policy.checkUrl('http://localhost/');      // { ok: false, reason: 'localhost is a loopback address (127.0.0.0/8), not public; …' }
 */
export function createHostPolicy(options: HostPolicyOptions): HostPolicy {
  const allow = options.allow.map(compilePattern);
  const deny = options.deny.map(compilePattern);
  // The catch-all `*` opens every public host, never a private one: only entries naming one do.
  const opening = allow.filter((p) => p.source.trim() !== '*');
  const outbound = createOutboundPolicy({
    setting: 'tools.browser.allow',
    allowAddresses: opening.flatMap((p) => (p.cidr ? [p.source.trim().replace(/^\[|\]$/g, '')] : [])),
    allowHosts: opening.flatMap((p) => (p.glob ? [p.source] : [])),
    lookup: options.lookup,
    lookupTimeoutMs: options.lookupTimeoutMs,
  });

  async function checkHost(hostname: string): Promise<HostDecision> {
    const parsed = parseHost(hostname.trim().replace(/^\[|\]$/g, ''));
    if (parsed.kind === 'invalid') return { ok: false, reason: parsed.reason };
    const host = parsed.kind === 'ip' ? formatIp(parsed.ip) : parsed.name;
    const deniedBy = deny.find((p) => matchesHost(p, host));
    if (deniedBy) return { ok: false, reason: `host ${host} is denied by tools.browser.deny ("${deniedBy.source}")` };

    const decision = await outbound.resolve(host);
    if (!decision.ok) return decision;
    for (const ip of decision.addresses) {
      const denied = deny.find((p) => matchesAddress(p, ip));
      if (denied) {
        return {
          ok: false,
          reason: `host ${host} (${formatIp(ip)}) is denied by tools.browser.deny ("${denied.source}")`,
        };
      }
      const allowed = allow.some((p) => p.source.trim() === '*' || matchesHost(p, host) || matchesAddress(p, ip));
      if (allow.length > 0 && !allowed) return { ok: false, reason: `host ${host} is not in tools.browser.allow` };
    }
    const first = unmapIPv4(decision.addresses[0]);
    return { ok: true, address: formatIp(first), family: first.family };
  }

  async function checkUrl(url: string): Promise<HostDecision> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, reason: `"${url}" is not an absolute URL` };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return {
        ok: false,
        reason: `only http and https URLs can be browsed, not ${parsed.protocol}`,
      };
    }
    return checkHost(parsed.hostname);
  }

  return { checkHost, checkUrl };
}
