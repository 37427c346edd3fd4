import { endsInNumber, parseIp, type IpAddress } from './address';
import { classifyAddress } from './ranges';

/**
 * Host names as the outbound policy reads them: an IP literal in any
 * spelling, a DNS name, or neither. A host whose last label is a number
 * must be an IPv4 address (as in the WHATWG URL parser), so `1.2.3.256`
 * is refused instead of being handed to a resolver.
 */

/** A parsed host. */
export type ParsedHost =
  { kind: 'ip'; ip: IpAddress } | { kind: 'name'; name: string } | { kind: 'invalid'; reason: string };

/** Lower case, brackets kept for IPv6, one trailing dot dropped from names. */
export function parseHost(host: string): ParsedHost {
  const text = host.trim().toLowerCase();
  if (text === '') return { kind: 'invalid', reason: 'the host is empty' };
  if (text.includes(':') || text.startsWith('[')) {
    const ip = parseIp(text);
    return ip ? { kind: 'ip', ip } : { kind: 'invalid', reason: `${host} is not a valid IPv6 address` };
  }
  if (endsInNumber(text)) {
    const ip = parseIp(text);
    return ip ? { kind: 'ip', ip } : { kind: 'invalid', reason: `${host} ends in a number but is not an IPv4 address` };
  }
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  if (name.length > 253 || !/^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/.test(name))
    return { kind: 'invalid', reason: `${host} is not a valid host name` };
  return { kind: 'name', name };
}

/** `localhost` and its subdomains always mean this machine (RFC 6761 §6.3). */
export function isLocalhostName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  return n === 'localhost' || n.endsWith('.localhost');
}

/**
 * Whether a host names this machine: a loopback address in any spelling
 * (`127.1`, `0x7f000001`, `::1`, `[::ffff:127.0.0.1]`) or `localhost`.
 * A name that merely starts with digits (`127.example.com`) is not.
 * @example
 * isLoopbackHost('127.0.0.2');        // true
 * isLoopbackHost('127.example.com');  // false
 */
export function isLoopbackHost(host: string): boolean {
  const parsed = parseHost(host);
  if (parsed.kind === 'ip') return classifyAddress(parsed.ip).scope === 'loopback';
  return parsed.kind === 'name' && isLocalhostName(parsed.name);
}
