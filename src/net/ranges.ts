import { formatIp, ipv4At, parseCidr, cidrContains, type Cidr, type IpAddress } from './address';

/**
 * What kind of network an address belongs to. Only `public` addresses are
 * reachable by default; everything else needs an explicit opening.
 */
export type AddressScope = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

/** The verdict on one address: its scope, the range that decided it, and the IPv4 an IPv6 form carries. */
export interface AddressClass {
  scope: AddressScope;
  /** The special-purpose range it falls in (`169.254.0.0/16`), or `public`. */
  range: string;
  /** For IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo…): how, and which. */
  embedded?: { via: string; ipv4: IpAddress };
}

interface Range {
  cidr: Cidr;
  text: string;
  scope: AddressScope;
}

function table(rows: Array<[string, AddressScope]>): Range[] {
  return rows.map(([text, scope]) => ({ cidr: parseCidr(text) as Cidr, text, scope }));
}

/** IANA IPv4 special-purpose ranges (RFC 6890 and successors) that are not the public internet. */
const IPV4 = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'private'], // shared address space (carrier-grade NAT)
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'], // includes the cloud metadata address 169.254.169.254
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'reserved'], // documentation
  ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast (deprecated)
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'], // benchmarking
  ['198.51.100.0/24', 'reserved'], // documentation
  ['203.0.113.0/24', 'reserved'], // documentation
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'reserved'], // limited broadcast
  ['240.0.0.0/4', 'reserved'],
]);

/** IPv6 ranges judged by the IPv4 address they carry, and where in the address it sits. */
const EMBEDDING: Array<{ cidr: Cidr; via: string; ipv4: (bytes: Uint8Array) => IpAddress[] }> = [
  { cidr: parseCidr('::ffff:0:0/96') as Cidr, via: 'IPv4-mapped', ipv4: (b) => [ipv4At(b, 12)] },
  { cidr: parseCidr('::ffff:0:0:0/96') as Cidr, via: 'IPv4-translated (SIIT)', ipv4: (b) => [ipv4At(b, 12)] },
  { cidr: parseCidr('64:ff9b::/96') as Cidr, via: 'NAT64', ipv4: (b) => [ipv4At(b, 12)] },
  { cidr: parseCidr('2002::/16') as Cidr, via: '6to4', ipv4: (b) => [ipv4At(b, 2)] },
  // Teredo: the server address in clear, the client's public address inverted bit by bit.
  { cidr: parseCidr('2001::/32') as Cidr, via: 'Teredo', ipv4: (b) => [ipv4At(b, 12, 0xff), ipv4At(b, 4)] },
  // IPv4-compatible (deprecated): after :: and ::1 were taken out below.
  { cidr: parseCidr('::/96') as Cidr, via: 'IPv4-compatible', ipv4: (b) => [ipv4At(b, 12)] },
];

/** IPv6 special-purpose ranges (RFC 6890 and successors); checked before the embedded forms. */
const IPV6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215)
  ['100::/64', 'reserved'], // discard-only
  ['2001:db8::/32', 'reserved'], // documentation
  ['2001:10::/28', 'reserved'], // ORCHID
  ['2001:20::/28', 'reserved'], // ORCHIDv2
  ['3fff::/20', 'reserved'], // documentation
  ['5f00::/16', 'reserved'], // SRv6 SIDs
  ['fc00::/7', 'private'], // unique local
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // site-local (deprecated)
  ['ff00::/8', 'multicast'],
]);

/** Global unicast: the only IPv6 space that is public (outside the special ranges above). */
const GLOBAL_UNICAST = parseCidr('2000::/3') as Cidr;

function classifyIPv4(ip: IpAddress): AddressClass {
  const range = IPV4.find((r) => cidrContains(r.cidr, ip));
  return range ? { scope: range.scope, range: range.text } : { scope: 'public', range: 'public' };
}

/**
 * Classifies an address. An IPv6 address that carries an IPv4 one
 * (mapped `::ffff:a.b.c.d`, SIIT, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`,
 * Teredo `2001::/32`, IPv4-compatible `::a.b.c.d`) is as private as the
 * least public IPv4 it carries: `[::ffff:169.254.169.254]` is link-local.
 * IPv6 outside global unicast (`2000::/3`) is reserved.
 * @example
 * classifyAddress(parseIp('::ffff:7f00:1')!); // { scope: 'loopback', range: '127.0.0.0/8', embedded: { via: 'IPv4-mapped', … } }
 */
export function classifyAddress(ip: IpAddress): AddressClass {
  if (ip.family === 4) return classifyIPv4(ip);
  const special = IPV6.find((r) => cidrContains(r.cidr, ip));
  if (special) return { scope: special.scope, range: special.text };
  const embedding = EMBEDDING.find((e) => cidrContains(e.cidr, ip));
  if (embedding) {
    const carried = embedding.ipv4(ip.bytes);
    for (const ipv4 of carried) {
      const inner = classifyIPv4(ipv4);
      if (inner.scope !== 'public') return { ...inner, embedded: { via: embedding.via, ipv4 } };
    }
    return { scope: 'public', range: 'public', embedded: { via: embedding.via, ipv4: carried[0] } };
  }
  if (!cidrContains(GLOBAL_UNICAST, ip)) return { scope: 'reserved', range: 'outside 2000::/3' };
  return { scope: 'public', range: 'public' };
}

/** What an address is, for refusals: `a link-local address (169.254.0.0/16, IPv4-mapped 169.254.169.254)`. */
export function scopePhrase(verdict: AddressClass): string {
  const article = /^[aeiou]/.test(verdict.scope) ? 'an' : 'a';
  const via = verdict.embedded ? `, ${verdict.embedded.via} ${formatIp(verdict.embedded.ipv4)}` : '';
  const range = verdict.scope === 'public' ? '' : verdict.range;
  const detail = [range, via.slice(2)].filter(Boolean).join(', ');
  return `${article} ${verdict.scope} address${detail ? ` (${detail})` : ''}`;
}
