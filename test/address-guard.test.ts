import { describe, expect, test } from '@jest/globals';
import { isForbiddenAddress, isForbiddenLiteral } from '../src/shared/address-guard.ts';

/**
 * The address guard in process, against every block of the IANA special-purpose address registries (IPv4 and IPv6,
 * as published in 2025), the deprecated blocks they replaced, and the ways an IPv6 address can carry an IPv4 one.
 * Each block is probed at its first address, one inside, and its last: only globally reachable unicast passes.
 */

/** IANA IPv4 Special-Purpose Address Registry, plus multicast (224.0.0.0/4, its own registry). */
const IPV4_SPECIAL: [block: string, first: string, inside: string, last: string][] = [
  ['0.0.0.0/8 "this network"', '0.0.0.0', '0.1.2.3', '0.255.255.255'],
  ['10.0.0.0/8 private-use', '10.0.0.0', '10.20.30.40', '10.255.255.255'],
  ['100.64.0.0/10 shared address space (CGNAT)', '100.64.0.0', '100.100.1.1', '100.127.255.255'],
  ['127.0.0.0/8 loopback', '127.0.0.0', '127.0.0.1', '127.255.255.255'],
  ['169.254.0.0/16 link-local (cloud metadata)', '169.254.0.0', '169.254.169.254', '169.254.255.255'],
  ['172.16.0.0/12 private-use', '172.16.0.0', '172.20.1.1', '172.31.255.255'],
  ['192.0.0.0/24 IETF protocol assignments (DS-Lite, dummy, PCP and TURN anycast, NAT64 discovery)', '192.0.0.0', '192.0.0.9', '192.0.0.255'],
  ['192.0.0.8/32 dummy, .9 PCP anycast, .170 and .171 NAT64/DNS64 discovery', '192.0.0.8', '192.0.0.9', '192.0.0.171'],
  ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.0', '192.0.2.55', '192.0.2.255'],
  ['192.31.196.0/24 AS112-v4', '192.31.196.0', '192.31.196.1', '192.31.196.255'],
  ['192.52.193.0/24 AMT', '192.52.193.0', '192.52.193.1', '192.52.193.255'],
  ['192.88.99.0/24 deprecated 6to4 relay anycast', '192.88.99.0', '192.88.99.1', '192.88.99.255'],
  ['192.168.0.0/16 private-use', '192.168.0.0', '192.168.1.1', '192.168.255.255'],
  ['192.175.48.0/24 direct delegation AS112', '192.175.48.0', '192.175.48.1', '192.175.48.255'],
  ['198.18.0.0/15 benchmarking', '198.18.0.0', '198.18.5.5', '198.19.255.255'],
  ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.0', '198.51.100.7', '198.51.100.255'],
  ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.0', '203.0.113.9', '203.0.113.255'],
  ['224.0.0.0/4 multicast', '224.0.0.0', '239.1.2.3', '239.255.255.255'],
  ['240.0.0.0/4 reserved', '240.0.0.0', '250.1.2.3', '255.255.255.254'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255', '255.255.255.255', '255.255.255.255'],
];

/** IANA IPv6 Special-Purpose Address Registry, plus the other non-global blocks of the IPv6 address space. */
const IPV6_SPECIAL: [block: string, first: string, inside: string, last: string][] = [
  ['::/128 unspecified', '::', '::', '::'],
  ['::1/128 loopback', '::1', '::1', '::1'],
  ['::/96 IPv4-compatible (deprecated)', '::0.0.0.2', '::8.8.8.8', '::255.255.255.255'],
  ['::ffff:0:0/96 IPv4-mapped, of a private IPv4', '::ffff:10.0.0.0', '::ffff:127.0.0.1', '::ffff:192.168.255.255'],
  ['::ffff:0:0:0/96 IPv4-translated (SIIT)', '::ffff:0:0.0.0.0', '::ffff:0:8.8.8.8', '::ffff:0:255.255.255.255'],
  ['64:ff9b::/96 NAT64 well-known prefix, of a private IPv4', '64:ff9b::10.0.0.1', '64:ff9b::127.0.0.1', '64:ff9b::169.254.169.254'],
  ['64:ff9b:1::/48 NAT64 local-use', '64:ff9b:1::', '64:ff9b:1::808:808', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
  ['100::/64 discard-only', '100::', '100::1', '100::ffff:ffff:ffff:ffff'],
  ['100:0:0:1::/64 dummy prefix', '100:0:0:1::', '100:0:0:1::1', '100:0:0:1:ffff:ffff:ffff:ffff'],
  ['2001::/23 IETF protocol assignments (PCP, TURN, DNS-SD anycast, AS112-v6, ORCHIDv2, drone ids)', '2001::', '2001:1::1', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001::/32 Teredo', '2001::', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:2::/48 benchmarking', '2001:2::', '2001:2::1', '2001:2:0:ffff:ffff:ffff:ffff:ffff'],
  ['2001:3::/32 AMT', '2001:3::', '2001:3::1', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::', '2001:4:112::1', '2001:4:112:ffff:ffff:ffff:ffff:ffff'],
  ['2001:10::/28 deprecated ORCHID', '2001:10::', '2001:10::1', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:20::/28 ORCHIDv2', '2001:20::', '2001:20::1', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:30::/28 drone remote ID', '2001:30::', '2001:30::1', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:db8::/32 documentation', '2001:db8::', '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2002::/16 6to4, of a public and of a private IPv4', '2002:808:808::', '2002:7f00:1::1', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2620:4f:8000::/48 direct delegation AS112', '2620:4f:8000::', '2620:4f:8000::1', '2620:4f:8000:ffff:ffff:ffff:ffff:ffff'],
  ['3fff::/20 documentation', '3fff::', '3fff::1', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['5f00::/16 segment routing SIDs', '5f00::', '5f00::1', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fc00::/7 unique local', 'fc00::', 'fd12:3456::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fe80::/10 link-local', 'fe80::', 'fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fec0::/10 site-local (deprecated)', 'fec0::', 'fec0::1', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['ff00::/8 multicast', 'ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['4000::/3 and the rest outside 2000::/3, unassigned', '4000::', '8000::1', 'e000::1'],
];

describe('the address guard refuses every special-purpose block', () => {
  test.each([...IPV4_SPECIAL, ...IPV6_SPECIAL])('%s', (_block, ...addresses) => {
    for (const address of addresses) expect([address, isForbiddenAddress(address)]).toEqual([address, true]);
  });

  test('the forms the probe found: ::a.b.c.d, ::ffff:0:a.b.c.d, 6to4, fec0::/10 and 100::/64', () => {
    for (const address of ['::127.0.0.1', '::10.0.0.1', '::ffff:0:127.0.0.1', '::ffff:0:169.254.169.254', '2002:7f00:1::', '2002:a9fe:a9fe::1', 'fec0::1', '100::1']) {
      expect([address, isForbiddenAddress(address)]).toEqual([address, true]);
    }
  });

  test('anything that is not an address, or an address of one link (a zone), is refused', () => {
    for (const text of ['', 'localhost', '127.1', '0x7f000001', '2130706433', '1.2.3', '::g', '8.8.8.8/32', 'fe80::1%eth0', '2001:4860:4860::8888%1']) expect([text, isForbiddenAddress(text)]).toEqual([text, true]);
  });
});

describe('globally reachable unicast passes', () => {
  test.each([
    ['public IPv4', ['8.8.8.8', '1.1.1.1', '200.160.2.3', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.1', '198.17.255.255', '198.20.0.0', '223.255.255.255']],
    ['global unicast IPv6', ['2001:4860:4860::8888', '2606:4700:4700::1111', '2804:14c::1', '2001:200::1', '2a00:1450:4001::200e']],
    ['a public IPv4 written IPv4-mapped', ['::ffff:8.8.8.8', '::ffff:200.160.2.3']],
    ['a public IPv4 behind the NAT64 well-known prefix', ['64:ff9b::8.8.8.8', '64:ff9b::c8a0:203']],
  ])('%s', (_kind, addresses) => {
    for (const address of addresses) expect([address, isForbiddenAddress(address)]).toEqual([address, false]);
  });
});

describe('literal hosts of URLs', () => {
  test('a URL naming a forbidden address literally is caught, in any spelling the URL parser accepts', () => {
    for (const url of ['https://127.0.0.1/x', 'https://127.1:8443/', 'https://0x7f.0.0.1/', 'https://2130706433/', 'https://[::1]/', 'https://[::ffff:7f00:1]/', 'https://[::127.0.0.1]/', 'https://[2002:7f00:1::]/', 'https://[fec0::1]/']) {
      expect([url, isForbiddenLiteral(new URL(url))]).toEqual([url, true]);
    }
  });

  test('a public literal or a name is not (names are checked when looked up)', () => {
    for (const url of ['https://8.8.8.8/x', 'https://[2001:4860:4860::8888]/', 'https://localhost/', 'https://example.com/']) {
      expect([url, isForbiddenLiteral(new URL(url))]).toEqual([url, false]);
    }
  });
});
