/**
 * Canonical IP addresses. Every spelling a URL, a resolver or `inet_aton`
 * accepts comes down to one byte form here, so the outbound policy judges
 * the address the socket will really reach: `127.1`, `0x7f.1`,
 * `2130706433`, `017700000001` and `[::ffff:7f00:1]` are all 127.0.0.1.
 */

/** An IPv4 or IPv6 address as bytes (4 or 16), the only form the policy reasons about. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/**
 * Parses an IP address in any spelling: IPv4 in one to four parts, each
 * decimal, octal (leading `0`) or hex (`0x`), with an optional trailing dot
 * (the WHATWG URL host parser and `inet_aton` agree on these); IPv6 with or
 * without brackets, `::` compression, a dotted IPv4 tail and a zone id
 * (`%eth0`, dropped). Returns `undefined` for anything else.
 * @example
 * parseIp('0x7f.1');            // { family: 4, bytes: [127, 0, 0, 1] }
 * parseIp('[::ffff:7f00:1]');   // { family: 6, bytes: [0, …, 0xff, 0xff, 127, 0, 0, 1] }
 */
export function parseIp(text: string): IpAddress | undefined {
  const trimmed = text.trim();
  const inner = trimmed.startsWith('[') && trimmed.endsWith(']') ? trimmed.slice(1, -1) : trimmed;
  if (inner.includes(':')) {
    const bytes = parseIPv6(inner);
    return bytes ? { family: 6, bytes } : undefined;
  }
  if (inner !== trimmed) return undefined;
  const bytes = parseIPv4(inner);
  return bytes ? { family: 4, bytes } : undefined;
}

/**
 * Whether a host's last label is a number (decimal, or hex with `0x`): the
 * WHATWG URL parser then insists the whole host is an IPv4 address, and so
 * do we — `1.2.3.300` or `example.0x10` must never reach a resolver that
 * might read them its own way.
 */
export function endsInNumber(host: string): boolean {
  const labels = host.split('.');
  if (labels.at(-1) === '') labels.pop();
  const last = labels.at(-1) ?? '';
  return /^\d+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

/** One IPv4 part: decimal, octal with a leading 0, hex with 0x (an empty `0x` is 0, as in WHATWG). */
function ipv4Number(part: string): number | undefined {
  if (part === '') return undefined;
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(part)) {
    digits = part.slice(2);
    radix = 16;
    if (digits === '') return 0;
    if (!/^[0-9a-f]+$/i.test(digits)) return undefined;
  } else if (part.length > 1 && part.startsWith('0')) {
    digits = part.slice(1);
    radix = 8;
    if (!/^[0-7]+$/.test(digits)) return undefined;
  } else if (!/^\d+$/.test(part)) {
    return undefined;
  }
  // Long digit strings would lose precision as numbers; anything this long is out of range anyway.
  if (digits.replace(/^0+/, '').length > 12) return Number.POSITIVE_INFINITY;
  return parseInt(digits, radix);
}

function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = ipv4Number(part);
    if (n === undefined) return undefined;
    numbers.push(n);
  }
  const last = numbers.pop() as number;
  if (numbers.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  numbers.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return Uint8Array.of(Math.floor(value / 2 ** 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255);
}

function parseIPv6(text: string): Uint8Array | undefined {
  const zone = text.indexOf('%');
  const address = zone >= 0 ? text.slice(0, zone) : text;
  if (zone >= 0 && !/^[\w.-]+$/.test(text.slice(zone + 1))) return undefined;
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (i === pieces.length - 1 && piece.includes('.')) {
        // A dotted IPv4 tail is strict: exactly four decimal parts.
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(piece)) return undefined;
        const v4 = piece.split('.').map(Number);
        if (v4.some((n) => n > 255)) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return undefined;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 255;
  });
  return bytes;
}

/** The usual text of an address: dotted IPv4, RFC 5952 IPv6 (lower case, longest zero run as `::`). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [...ip.bytes].join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i] << 8) | ip.bytes[i + 1]);
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start < 0) return hex.join(':');
  const head = hex.slice(0, best.start).join(':');
  const tail = hex.slice(best.start + best.length).join(':');
  return `${head}::${tail}`;
}

/** An IPv4 address from four bytes of a larger buffer. */
export function ipv4At(bytes: Uint8Array, offset: number, xor = 0): IpAddress {
  return { family: 4, bytes: Uint8Array.from(bytes.subarray(offset, offset + 4), (b) => b ^ xor) };
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for; sockets connect to it as IPv4. */
export function unmapIPv4(ip: IpAddress): IpAddress {
  if (ip.family === 6 && ip.bytes.subarray(0, 10).every((b) => b === 0) && ip.bytes[10] === 255 && ip.bytes[11] === 255)
    return ipv4At(ip.bytes, 12);
  return ip;
}

/** A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`); a bare address is a one-address network. */
export interface Cidr {
  readonly network: IpAddress;
  readonly prefix: number;
}

/** Parses `address[/prefix]` in any address spelling; `undefined` when either half is invalid. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.lastIndexOf('/');
  const network = parseIp(slash >= 0 ? text.slice(0, slash) : text);
  if (!network) return undefined;
  const max = network.family === 4 ? 32 : 128;
  const prefixText = slash >= 0 ? text.slice(slash + 1) : String(max);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > max) return undefined;
  return { network, prefix };
}

/** Whether `ip` lies in `cidr`; an IPv4-mapped IPv6 address is compared as the IPv4 it stands for. */
export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  const ip = cidr.network.family === 4 ? unmapIPv4(address) : address;
  if (ip.family !== cidr.network.family) return false;
  const full = Math.floor(cidr.prefix / 8);
  for (let i = 0; i < full; i++) if (ip.bytes[i] !== cidr.network.bytes[i]) return false;
  const rest = cidr.prefix % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (ip.bytes[full] & mask) === (cidr.network.bytes[full] & mask);
}
