import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses count as "public" for the key file fetcher (docs/design.md section 2, "Key file": only public
 * addresses, no loopback, private, link-local, CGNAT, ULA, multicast or IPv4-mapped ranges).
 *
 * An address is public when it is ordinary unicast reachable across the internet: everything in the IANA
 * special-purpose registries is refused, and IPv6 outside global unicast 2000::/3 is refused whole. Addresses
 * that carry an IPv4 address inside them (mapped, compatible, NAT64, Teredo) are refused whole as well, except
 * 6to4, which is refused when the IPv4 address it embeds is not public.
 *
 * Input is read the way a URL host or a socket reports it: brackets and an IPv6 zone id (`%eth0`) are dropped,
 * and IPv4 in the numeric forms the WHATWG URL parser accepts (`2130706433`, `0x7f.1`, `127.1`, `0177.0.0.1`) is
 * normalised the same way that parser does, so `new URL('http://2130706433/')` and this module agree.
 */

interface Range {
  prefix: bigint;
  bits: number;
  label: string;
}

const V4_RANGES: readonly Range[] = [
  v4('0.0.0.0', 32, 'unspecified'),
  v4('0.0.0.0', 8, '"this network" 0.0.0.0/8'),
  v4('10.0.0.0', 8, 'private 10.0.0.0/8'),
  v4('100.64.0.0', 10, 'CGNAT shared address space 100.64.0.0/10'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local 169.254.0.0/16'),
  v4('172.16.0.0', 12, 'private 172.16.0.0/12'),
  v4('192.0.0.0', 24, 'IETF protocol assignments 192.0.0.0/24'),
  v4('192.0.2.0', 24, 'documentation 192.0.2.0/24'),
  v4('192.88.99.0', 24, '6to4 relay anycast 192.88.99.0/24'),
  v4('192.168.0.0', 16, 'private 192.168.0.0/16'),
  v4('198.18.0.0', 15, 'benchmarking 198.18.0.0/15'),
  v4('198.51.100.0', 24, 'documentation 198.51.100.0/24'),
  v4('203.0.113.0', 24, 'documentation 203.0.113.0/24'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('255.255.255.255', 32, 'broadcast'),
  v4('240.0.0.0', 4, 'reserved 240.0.0.0/4'),
];

/** Checked in order, so the more specific ranges come first. 6to4 (2002::/16) is handled apart. */
const V6_RANGES: readonly Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('::ffff:0:0', 96, 'IPv4-mapped ::ffff:0:0/96'),
  v6('::', 96, 'IPv4-compatible ::/96'),
  v6('64:ff9b::', 96, 'NAT64 64:ff9b::/96'),
  v6('64:ff9b:1::', 48, 'local-use NAT64 64:ff9b:1::/48'),
  v6('100::', 64, 'discard-only 100::/64'),
  v6('2001::', 32, 'Teredo 2001::/32'),
  v6('2001:db8::', 32, 'documentation 2001:db8::/32'),
  v6('2001::', 23, 'IETF protocol assignments 2001::/23'),
  v6('3fff::', 20, 'documentation 3fff::/20'),
  v6('5f00::', 16, 'SRv6 segment identifiers 5f00::/16'),
  v6('fc00::', 7, 'unique local fc00::/7'),
  v6('fe80::', 10, 'link-local fe80::/10'),
  v6('fec0::', 10, 'site-local fec0::/10'),
  v6('ff00::', 8, 'multicast'),
];

const GLOBAL_UNICAST = v6('2000::', 3, 'outside global unicast 2000::/3');
const SIX_TO_FOUR = v6('2002::', 16, '6to4');

/** True only for an IP address that is ordinary public unicast; false for anything else, including non-IPs. */
export function isPublicAddress(ip: string): boolean {
  return nonPublicRange(ip) === null;
}

/**
 * Null when `ip` is a public address; otherwise a short description of why not, for messages
 * ("loopback", "private 10.0.0.0/8", "not an IP address").
 */
export function nonPublicRange(ip: string): string | null {
  const address = parseAddress(ip);
  if (!address) return 'not an IP address';
  return address.family === 4 ? rangeOfV4(address.value) : rangeOfV6(address.value);
}

/** An IP address as its family and numeric value; null when the text is not an IP address. */
export function parseAddress(text: string): { family: 4 | 6; value: bigint } | null {
  let host = text.trim();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const zone = host.indexOf('%');
  if (zone !== -1 && host.includes(':')) host = host.slice(0, zone);
  if (isIPv6(host)) return { family: 6, value: parseIPv6(host) };
  const ipv4 = whatwgIPv4(host);
  return ipv4 === null ? null : { family: 4, value: parseIPv4(ipv4) };
}

function rangeOfV4(value: bigint): string | null {
  return V4_RANGES.find((range) => inRange(value, 32, range))?.label ?? null;
}

function rangeOfV6(value: bigint): string | null {
  const special = V6_RANGES.find((range) => inRange(value, 128, range));
  if (special) return special.label;
  if (!inRange(value, 128, GLOBAL_UNICAST)) return GLOBAL_UNICAST.label;
  if (inRange(value, 128, SIX_TO_FOUR)) {
    // 2002:AABB:CCDD::/48 routes to the IPv4 address AA.BB.CC.DD (RFC 3056).
    const embedded = (value >> 80n) & 0xffffffffn;
    const label = rangeOfV4(embedded);
    return label === null ? null : `6to4 embedding ${formatIPv4(embedded)}, ${label}`;
  }
  return null;
}

/**
 * The dotted form the WHATWG URL host parser gives for an IPv4 host in any of its numeric spellings,
 * or null when the text is not one (a domain, garbage, or a number out of range).
 */
function whatwgIPv4(host: string): string | null {
  if (!/^[0-9a-fA-FxX.]+$/.test(host)) return null;
  if (isIPv4(host)) return host;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
  return isIPv4(hostname) ? hostname : null;
}

function parseIPv4(dotted: string): bigint {
  return dotted.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number.parseInt(part, 10)), 0n);
}

/** Expects text that `net.isIPv6` accepted (so one `::` at most, and a dotted tail only at the end). */
function parseIPv6(text: string): bigint {
  let host = text.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (dotted?.[1]) {
    const v4 = parseIPv4(dotted[1]);
    host = `${host.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = host.split('::');
  const headParts = head === '' ? [] : head.split(':');
  let parts = headParts;
  if (tail !== undefined) {
    const tailParts = tail === '' ? [] : tail.split(':');
    const zeros = new Array<string>(8 - headParts.length - tailParts.length).fill('0');
    parts = [...headParts, ...zeros, ...tailParts];
  }
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(Number.parseInt(part, 16)), 0n);
}

function inRange(value: bigint, width: number, range: Range): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.prefix >> shift;
}

function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => ((value >> shift) & 0xffn).toString()).join('.');
}

function v4(prefix: string, bits: number, label: string): Range {
  return { prefix: parseIPv4(prefix), bits, label };
}

function v6(prefix: string, bits: number, label: string): Range {
  return { prefix: parseIPv6(prefix), bits, label };
}
