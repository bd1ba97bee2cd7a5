import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where the platform never connects on behalf of a client (webhook deliveries, dynamic QR Code locations): anything but
 * globally reachable unicast. The special-purpose blocks come from ipaddr.js's ranges (the IANA IPv4 and IPv6
 * special-purpose registries, kept up to date by its maintainers) instead of a hand list; every block of those
 * registries is refused, even the few it marks globally reachable (anycast services such as AS112, AMT, PCP and TURN,
 * which no receiver is).
 */

/** IANA's global unicast allocation: anything outside it (unassigned, deprecated or special) is not a receiver. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052): the address reached is the IPv4 in its last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

const lastIpv4Of = (address: ipaddr.IPv6) => new ipaddr.IPv4(address.toByteArray().slice(12));

function isPublicIpv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

/**
 * An IPv6 address is public when it is global unicast outside every special block. The forms that carry an IPv4 address
 * are judged by that address when a host may really be written so (IPv4-mapped, NAT64's well-known prefix); the other
 * embeddings (IPv4-compatible `::a.b.c.d`, `::ffff:0:a.b.c.d`, 6to4, Teredo, NAT64's local prefixes) are refused whole:
 * a relay or translator decides where they lead.
 */
function isPublicIpv6(address: ipaddr.IPv6): boolean {
  if (address.isIPv4MappedAddress() || address.match(NAT64_WELL_KNOWN)) return isPublicIpv4(lastIpv4Of(address));
  return address.match(IPV6_GLOBAL_UNICAST) && address.range() === 'unicast';
}

export function isForbiddenAddress(address: string): boolean {
  switch (isIP(address)) {
    case 4:
      return !isPublicIpv4(ipaddr.IPv4.parse(address));
    case 6:
      // A zone (`fe80::1%eth0`) is a link's: never a receiver's. ipaddr.js reads `::a.b.c.d` as if it were
      // `::ffff:a.b.c.d`, so the address is first written as the URL parser writes it (RFC 5952, hexadecimal only).
      return address.includes('%') || !isPublicIpv6(ipaddr.IPv6.parse(new URL(`http://[${address}]`).hostname.slice(1, -1)));
    default:
      return true;
  }
}

/** The host of a URL without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Whether a URL names a forbidden address literally. A literal is never looked up, so the connect-time guard
 * (`guardedLookup`) never sees it: every client that connects through that guard checks this first.
 */
export function isForbiddenLiteral(url: URL): boolean {
  const host = hostOf(url);
  return isIP(host) !== 0 && isForbiddenAddress(host);
}

/** Resolves a URL's host and says whether every address is public; checked at registration. */
export async function resolvesToPublic(url: URL): Promise<boolean> {
  const host = hostOf(url);
  try {
    const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
    return addresses.length > 0 && addresses.every((a) => !isForbiddenAddress(a.address));
  } catch {
    return false;
  }
}

/** A DNS lookup for the delivery socket that refuses forbidden addresses: checked at connect time, so a DNS change after registration cannot redirect a delivery inward. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const list = addresses as unknown as dns.LookupAddress[];
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad || list.length === 0) {
      return callback(Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'EFORBIDDENADDRESS' }), '', 4);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};
