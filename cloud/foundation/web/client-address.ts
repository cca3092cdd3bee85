import { isIPv6 } from 'node:net';

/**
 * The key a per-address limit counts under (docs/design.md section 10.2): an IPv4 address as it is, and an IPv6
 * address by its /64, since one household or phone is handed a whole /64 and could otherwise step through it
 * to escape any limit. An IPv4 address seen through IPv6 (`::ffff:192.0.2.1`) counts as the IPv4 one.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` filled in, each without leading zeros. */
function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16).toString(16));
}
