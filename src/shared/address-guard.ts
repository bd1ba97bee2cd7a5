import { lookup } from 'node:dns/promises';
import { isIP, BlockList, type LookupFunction } from 'node:net';
import dns from 'node:dns';

/**
 * Where the platform never connects on behalf of a client (webhook deliveries, dynamic QR Code locations): loopback,
 * private, link-local (cloud metadata), CGNAT, multicast, unspecified.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) blocked.addSubnet(net, prefix, 'ipv6');

export function isForbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isForbiddenAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Resolves a URL's host and says whether every address is public; checked at registration. */
export async function resolvesToPublic(url: URL): Promise<boolean> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
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
