import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ConfigError } from '../../errors';

/** Resolves a hostname to every address it has (`dns.lookup` with `all: true` by default). */
export type LookupFn = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

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
 * Decides which hosts the browser may reach. Checked by `browser_navigate`
 * before a page load and by the guard proxy for every request the browser
 * makes (redirects, frames, subresources), always on the resolved addresses
 * so a public name pointing at a private address is caught.
 */
export interface HostPolicy {
  /** Checks a bare hostname or IP literal (brackets allowed for IPv6). */
  checkHost(hostname: string): Promise<HostDecision>;
  /** Checks a URL: http and https only, then its host. */
  checkUrl(url: string): Promise<HostDecision>;
}

/**
 * Loopback, private, link-local, CGNAT, multicast and reserved ranges: the
 * addresses a page must not pull the browser onto unless explicitly allowed.
 */
function privateRanges(): BlockList {
  const list = new BlockList();
  const v4: Array<[string, number]> = [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  const v6: Array<[string, number]> = [
    ['::', 128],
    ['::1', 128],
    ['::', 96], // IPv4-compatible (deprecated): ::127.0.0.1
    ['64:ff9b::', 96],
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['fec0::', 10],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ];
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

const PRIVATE = privateRanges();

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 it carries. */
function unmap(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  // The URL parser writes `[::ffff:127.0.0.1]` as `[::ffff:7f00:1]`.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return address;
  const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for loopback, private, link-local and other non-public addresses. */
export function isPrivateAddress(address: string): boolean {
  const plain = unmap(address);
  const family = isIP(plain);
  if (family === 0) return false;
  return PRIVATE.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** One allow/deny entry compiled: a CIDR, or a case-insensitive glob over host names and IP text. */
interface Pattern {
  source: string;
  matchesHost(host: string): boolean;
  matchesAddress(address: string): boolean;
}

function compilePattern(source: string): Pattern {
  const text = source
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  const slash = text.indexOf('/');
  if (slash > 0) {
    const net = text.slice(0, slash);
    const prefix = Number(text.slice(slash + 1));
    const family = isIP(net);
    const list = new BlockList();
    try {
      if (family === 0 || !Number.isInteger(prefix)) throw new Error('bad network or prefix');
      list.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6');
    } catch {
      throw new ConfigError(`tools.browser allow/deny entry "${source}" is not a valid CIDR`);
    }
    const inNet = (address: string): boolean => {
      const plain = unmap(address);
      const f = isIP(plain);
      return f !== 0 && list.check(plain, f === 4 ? 'ipv4' : 'ipv6');
    };
    return { source, matchesHost: inNet, matchesAddress: inNet };
  }
  const regex = new RegExp(`^${text.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  const test = (value: string): boolean => regex.test(value);
  return {
    source,
    matchesHost: test,
    matchesAddress: (address) => test(unmap(address)),
  };
}

function normalizeHost(hostname: string): string {
  return hostname
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Builds the browser's host policy. Order: `deny` (host or any address)
 * refuses; a non-empty `allow` must match the host or every address; a
 * private or loopback address needs an allow entry naming it (the catch-all
 * `*` only opens public hosts).
 * @example
 * const policy = createHostPolicy({ allow: ['127.0.0.1'], deny: ['*.ads.example'] });
 * await policy.checkUrl('http://127.0.0.1:8080/'); // { ok: true, address: '127.0.0.1', family: 4 }
 * await policy.checkUrl('http://localhost/');      // { ok: false, reason: '… loopback or private …' }
 */
export function createHostPolicy(options: HostPolicyOptions): HostPolicy {
  const allow = options.allow.map(compilePattern);
  const deny = options.deny.map(compilePattern);
  const lookup: LookupFn = options.lookup ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
  const lookupTimeoutMs = options.lookupTimeoutMs ?? 5_000;

  async function resolve(host: string): Promise<Array<{ address: string; family: number }>> {
    const family = isIP(host);
    if (family !== 0) return [{ address: host, family }];
    return withTimeout(lookup(host), lookupTimeoutMs, `resolving ${host}`);
  }

  async function checkHost(hostname: string): Promise<HostDecision> {
    const host = normalizeHost(hostname);
    if (!host) return { ok: false, reason: 'the URL has no host' };
    const deniedBy = deny.find((p) => p.matchesHost(host));
    if (deniedBy)
      return {
        ok: false,
        reason: `host ${host} is denied by tools.browser.deny ("${deniedBy.source}")`,
      };

    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = await resolve(host);
    } catch (error) {
      return {
        ok: false,
        reason: `cannot resolve host ${host}: ${(error as Error).message}`,
      };
    }
    if (addresses.length === 0) return { ok: false, reason: `host ${host} has no addresses` };

    for (const { address } of addresses) {
      const denied = deny.find((p) => p.matchesAddress(address));
      if (denied) {
        return {
          ok: false,
          reason: `host ${host} (${address}) is denied by tools.browser.deny ("${denied.source}")`,
        };
      }
      const allowedBy = allow.filter((p) => p.matchesHost(host) || p.matchesAddress(address));
      if (allow.length > 0 && allowedBy.length === 0) {
        return {
          ok: false,
          reason: `host ${host} is not in tools.browser.allow`,
        };
      }
      if (isPrivateAddress(address) && !allowedBy.some((p) => p.source.trim() !== '*')) {
        return {
          ok: false,
          reason:
            `host ${host} resolves to the loopback or private address ${address}; ` +
            'add it to tools.browser.allow to browse it',
        };
      }
    }
    const first = addresses[0];
    return {
      ok: true,
      address: first.address,
      family: first.family === 6 ? 6 : 4,
    };
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
