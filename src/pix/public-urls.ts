/**
 * What this platform publishes to the Pix network under its public base URL (`PUBLIC_BASE_URL`, the holder API):
 * the location of each charge's payload and the key set that signs them. On the network every such URL is `https://`
 * (a BR Code's location has no scheme; the payer's app prefixes https), whatever scheme the base has in development.
 */

const TXID = /^[A-Za-z0-9]{26,35}$/;

function hostAndPath(publicBaseUrl: string): { host: string; path: string } {
  const base = new URL(publicBaseUrl);
  return { host: base.host, path: base.pathname.replace(/\/+$/, '') };
}

/**
 * The location of a charge's dynamic BR Code: `<public host and path>/pix/cob/<txid>` without scheme. A dynamic code
 * is the only kind that can name a charge: a static code's txid (field 62-05) holds at most 25 characters and a
 * charge's has 26 to 35, so the txid travels in the location instead.
 */
export function chargeLocation(publicBaseUrl: string, txid: string): string {
  const { host, path } = hostAndPath(publicBaseUrl);
  return `${host}${path}/pix/cob/${txid}`;
}

/** The `jku` of the charges' payloads: where payers' institutions read the platform's signing keys. */
export function keySetUrl(publicBaseUrl: string): string {
  const { host, path } = hostAndPath(publicBaseUrl);
  return `https://${host}${path}/pix/jwks.json`;
}

/**
 * The txid of a location this platform issued, or null for any other. Only the exact form `chargeLocation` writes is
 * the platform's: a query, a trailing `/` or another spelling is a location nobody issued, which the holder API would
 * still answer (it ignores queries and trailing slashes), so a payment by it would read as another institution's charge.
 */
export function txidOfOwnLocation(publicBaseUrl: string, location: string): string | null {
  const { host, path } = hostAndPath(publicBaseUrl);
  const prefix = `${host}${path}/pix/cob/`;
  if (!location.startsWith(prefix)) return null;
  const txid = location.slice(prefix.length);
  return TXID.test(txid) ? txid : null;
}

/** Whether a location (without scheme) names the platform's host, however spelt: case, default port, IPv4 forms. */
export function namesPlatformHost(publicBaseUrl: string, location: string): boolean {
  try {
    return new URL(`https://${location}`).host === hostAndPath(publicBaseUrl).host;
  } catch {
    return false;
  }
}

/** Whether `url` is one of the platform's own Pix documents, exactly as published: a charge's location or the key set. */
export function isPublishedHere(publicBaseUrl: string, url: URL): boolean {
  if (url.protocol !== 'https:') return false;
  return url.href === keySetUrl(publicBaseUrl) || txidOfOwnLocation(publicBaseUrl, url.href.slice('https://'.length)) !== null;
}

/** Where the platform itself answers one of its published URLs: the same path on the public base, with its scheme. */
export function servedAt(publicBaseUrl: string, url: URL): URL {
  return new URL(`${publicBaseUrl.replace(/\/+$/, '')}${url.pathname.slice(hostAndPath(publicBaseUrl).path.length)}${url.search}`);
}
