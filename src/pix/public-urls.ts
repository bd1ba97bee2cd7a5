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

/** Whether `url` is one of the platform's own Pix documents (a charge's location, the key set). */
export function isPublishedHere(publicBaseUrl: string, url: URL): boolean {
  const { host, path } = hostAndPath(publicBaseUrl);
  return url.host === host && url.pathname.startsWith(`${path}/pix/`);
}

/** The txid of a location this platform serves, or null for any other location (another institution's charge). */
export function txidOfOwnLocation(publicBaseUrl: string, location: string): string | null {
  let url: URL;
  try {
    url = new URL(`https://${location.replace(/^https:\/\//i, '')}`);
  } catch {
    return null;
  }
  const { host, path } = hostAndPath(publicBaseUrl);
  const prefix = `${path}/pix/cob/`;
  if (url.host !== host || !url.pathname.startsWith(prefix) || url.search !== '') return null;
  const txid = url.pathname.slice(prefix.length);
  return TXID.test(txid) ? txid : null;
}

/** Where the platform itself answers one of its published URLs: the same path on the public base, with its scheme. */
export function servedAt(publicBaseUrl: string, url: URL): URL {
  return new URL(`${publicBaseUrl.replace(/\/+$/, '')}${url.pathname.slice(hostAndPath(publicBaseUrl).path.length)}${url.search}`);
}
