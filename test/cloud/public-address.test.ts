import { describe, expect, it } from 'vitest';
import { isPublicAddress, nonPublicRange } from '../../cloud/rules/domain-keys/public-address.js';

/** Addresses the key file fetcher must never connect to, each with the range it falls in. */
const REFUSED: [label: string, address: string, range: RegExp][] = [
  ['IPv4 loopback', '127.0.0.1', /loopback/],
  ['IPv4 loopback, elsewhere in 127/8', '127.255.0.9', /loopback/],
  ['private 10/8', '10.0.0.1', /private/],
  ['private 10/8, top end', '10.255.255.254', /private/],
  ['private 172.16/12', '172.16.0.1', /private/],
  ['private 172.16/12, top end', '172.31.255.255', /private/],
  ['private 192.168/16', '192.168.1.1', /private/],
  ['cloud metadata service 169.254.169.254', '169.254.169.254', /link-local/],
  ['CGNAT 100.64/10', '100.64.0.1', /CGNAT/],
  ['CGNAT 100.64/10, top end', '100.127.255.255', /CGNAT/],
  ['unspecified 0.0.0.0', '0.0.0.0', /unspecified/],
  ['"this network" 0/8', '0.1.2.3', /this network/],
  ['multicast 224/4', '224.0.0.1', /multicast/],
  ['multicast 239/8', '239.255.255.250', /multicast/],
  ['limited broadcast', '255.255.255.255', /broadcast/],
  ['reserved 240/4', '240.0.0.1', /reserved/],
  ['IETF protocol assignments 192.0.0/24', '192.0.0.8', /IETF/],
  ['documentation TEST-NET-1', '192.0.2.1', /documentation/],
  ['documentation TEST-NET-2', '198.51.100.7', /documentation/],
  ['documentation TEST-NET-3', '203.0.113.9', /documentation/],
  ['benchmarking 198.18/15', '198.19.0.1', /benchmarking/],
  ['6to4 relay anycast', '192.88.99.1', /6to4/],
  ['decimal number for 127.0.0.1', '2130706433', /loopback/],
  ['hexadecimal short form 0x7f.1', '0x7f.1', /loopback/],
  ['short form 127.1', '127.1', /loopback/],
  ['octal 0177.0.0.1', '0177.0.0.1', /loopback/],
  ['hexadecimal dotted 0xa.0.0.1', '0xa.0.0.1', /private/],
  ['decimal number for 169.254.169.254', '2852039166', /link-local/],
  ['trailing dot 127.0.0.1.', '127.0.0.1.', /loopback/],
  ['IPv6 loopback', '::1', /loopback/],
  ['IPv6 loopback, long form', '0:0:0:0:0:0:0:1', /loopback/],
  ['IPv6 loopback in brackets', '[::1]', /loopback/],
  ['IPv6 unspecified [::]', '[::]', /unspecified/],
  ['IPv4-mapped loopback [::ffff:127.0.0.1]', '[::ffff:127.0.0.1]', /IPv4-mapped/],
  ['IPv4-mapped loopback in hex', '::ffff:7f00:1', /IPv4-mapped/],
  ['IPv4-mapped, long upper-case form', '0:0:0:0:0:FFFF:7F00:0001', /IPv4-mapped/],
  ['IPv4-mapped public address', '::ffff:8.8.8.8', /IPv4-mapped/],
  ['IPv4-compatible', '::127.0.0.1', /IPv4-compatible/],
  ['NAT64 of loopback 64:ff9b::7f00:1', '64:ff9b::7f00:1', /NAT64/],
  ['NAT64 dotted 64:ff9b::10.0.0.1', '64:ff9b::10.0.0.1', /NAT64/],
  ['local-use NAT64 64:ff9b:1::/48', '64:ff9b:1::a00:1', /NAT64/],
  ['6to4 of loopback', '2002:7f00:1::1', /6to4 embedding 127\.0\.0\.1, loopback/],
  ['6to4 of 10.0.0.1', '2002:a00:1::', /6to4 embedding 10\.0\.0\.1, private/],
  ['6to4 of the metadata service', '2002:a9fe:a9fe::1', /6to4 embedding 169\.254\.169\.254/],
  ['Teredo 2001::/32', '2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
  ['IETF protocol assignments 2001::/23', '2001:2::1', /IETF/],
  ['documentation 2001:db8::/32', '2001:db8::1', /documentation/],
  ['documentation 3fff::/20', '3fff:1::1', /documentation/],
  ['discard-only 100::/64', '100::1', /discard/],
  ['unique local fc00::/7', 'fd12:3456:789a::1', /unique local/],
  ['unique local fc00::', 'fc00::1', /unique local/],
  ['link-local fe80::/10', 'fe80::1', /link-local/],
  ['link-local with a zone id', 'fe80::1%eth0', /link-local/],
  ['link-local with a URL-encoded zone id in brackets', '[fe80::1%25eth0]', /link-local/],
  ['site-local fec0::/10', 'fec0::1', /site-local/],
  ['multicast ff00::/8', 'ff02::1', /multicast/],
  ['outside global unicast', '4000::1', /global unicast/],
];

const ACCEPTED: [label: string, address: string][] = [
  ['public IPv4', '93.184.215.14'],
  ['public IPv4 next to 172.16/12', '172.32.0.1'],
  ['public IPv4 next to CGNAT', '100.128.0.1'],
  ['public IPv4 next to 192.0.0/24', '192.0.1.1'],
  ['public IPv4 next to 198.18/15', '198.20.0.1'],
  ['public IPv4 1.1.1.1', '1.1.1.1'],
  ['public IPv6', '2606:4700:4700::1111'],
  ['public IPv6 in brackets', '[2a00:1450:4001:82a::200e]'],
  ['6to4 of a public address', '2002:808:808::1'],
];

const NOT_ADDRESSES: [label: string, text: string][] = [
  ['empty', ''],
  ['a domain', 'example.com'],
  ['localhost', 'localhost'],
  ['five parts', '1.2.3.4.5'],
  ['a number beyond 32 bits', '4294967296'],
  ['an IPv4 with a zone id', '127.0.0.1%lo'],
  ['a malformed IPv6', '1::2::3'],
  ['an unclosed bracket', '[::1'],
];

describe('[attack:keyfile.private-address] isPublicAddress', () => {
  it.each(REFUSED)('refuses %s (%s)', (_label, address, range) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(nonPublicRange(address)).toMatch(range);
  });

  it.each(ACCEPTED)('accepts %s (%s)', (_label, address) => {
    expect(isPublicAddress(address)).toBe(true);
    expect(nonPublicRange(address)).toBeNull();
  });

  it.each(NOT_ADDRESSES)('refuses what is not an IP address: %s', (_label, text) => {
    expect(isPublicAddress(text)).toBe(false);
    expect(nonPublicRange(text)).toBe('not an IP address');
  });

  it('reads numeric IPv4 hosts the way the URL parser does', () => {
    for (const host of ['2130706433', '0x7f.1', '127.1', '0177.0.0.1', '0x7f000001']) {
      expect(new URL(`http://${host}/`).hostname).toBe('127.0.0.1');
      expect(nonPublicRange(host)).toBe('loopback');
    }
  });
});
