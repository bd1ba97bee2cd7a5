import { createHash, createPublicKey, constants, sign, verify, type JsonWebKey, type KeyObject, type X509Certificate } from 'node:crypto';

/**
 * JSON Web Signatures (RFC 7515, compact serialization) as the Pix network uses them for dynamic BR Code payloads:
 * the header names the algorithm, its type (`typ` "JWS", as the API Pix's example of a payload has it), the key
 * (`kid`) and the URL of the key set that holds it (`jku`), and, when the key has a certificate, the certificate's
 * thumbprints (`x5t`, `x5t#S256`), whose chain the key set publishes (`x5c`).
 */

/** What a payload may be signed with: RSA-PSS, RSA PKCS#1 v1.5 and ECDSA P-256, each with SHA-256. */
export const JWS_ALGORITHMS = ['PS256', 'RS256', 'ES256'] as const;
export type JwsAlgorithm = (typeof JWS_ALGORITHMS)[number];

/** The algorithm the platform signs with for a private key: RSA (2048 bits or more) → PS256, EC P-256 → ES256. */
export function signingAlgorithmOf(key: KeyObject): JwsAlgorithm | null {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048) return 'PS256';
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') return 'ES256';
  return null;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

function signatureOptions(alg: JwsAlgorithm, key: KeyObject) {
  if (alg === 'PS256') return { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };
  if (alg === 'ES256') return { key, dsaEncoding: 'ieee-p1363' as const };
  return { key };
}

/** RFC 7638: the SHA-256 of the key's required members in lexical order, base64url. A key's stable `kid`. */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return base64url(createHash('sha256').update(JSON.stringify(members)).digest());
}

/** The certificate members of a JWK and a JWS header (RFC 7517 §4.6–4.9, RFC 7515 §4.1.6–4.1.8). */
export interface CertificateMembers {
  /** The chain, leaf first, each certificate's DER in standard base64 (not base64url). */
  x5c: string[];
  /** SHA-1 and SHA-256 thumbprints of the leaf's DER, base64url. */
  x5t: string;
  'x5t#S256': string;
}

export function certificateMembers(chain: readonly X509Certificate[]): CertificateMembers {
  const leaf = chain[0]!.raw;
  return {
    x5c: chain.map((c) => c.raw.toString('base64')),
    x5t: base64url(createHash('sha1').update(leaf).digest()),
    'x5t#S256': base64url(createHash('sha256').update(leaf).digest()),
  };
}

export interface JwsSigner {
  alg: JwsAlgorithm;
  kid: string;
  /** The public half, as the key set publishes it, with its certificate chain when it has one. */
  publicJwk: JsonWebKey & { kid: string; alg: JwsAlgorithm; use: 'sig' } & Partial<CertificateMembers>;
}

/**
 * A signer for one private key and, optionally, its certificate chain (leaf first; the caller checked that the leaf
 * certifies this key): `sign` makes a compact JWS of a JSON payload.
 */
export function jwsSigner(privateKey: KeyObject, chain: readonly X509Certificate[] = []): JwsSigner & { sign(payload: unknown, jku: string): string } {
  const alg = signingAlgorithmOf(privateKey);
  if (!alg) throw new Error('the signing key must be RSA (2048 bits or more) or EC P-256');
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = jwkThumbprint(jwk);
  const certificate = chain.length > 0 ? certificateMembers(chain) : null;
  const thumbprints = certificate ? { x5t: certificate.x5t, 'x5t#S256': certificate['x5t#S256'] } : {};
  return {
    alg,
    kid,
    publicJwk: { ...jwk, kid, alg, use: 'sig', ...certificate },
    sign(payload, jku) {
      const header = { alg, typ: 'JWS', kid, jku, ...thumbprints };
      const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
      return `${input}.${base64url(sign('sha256', Buffer.from(input), signatureOptions(alg, privateKey)))}`;
    },
  };
}

export interface DecodedJws {
  header: Record<string, unknown>;
  payload: unknown;
  signingInput: string;
  signature: Buffer;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** An unsecured JWS (`alg` "none") has an empty signature: it decodes, and the algorithm check refuses it. */
const SIGNATURE = /^[A-Za-z0-9_-]*$/;

function json(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Splits a compact JWS; null when the text is not one (three base64url parts, a JSON object header, a JSON payload). */
export function decodeJws(text: string): DecodedJws | null {
  const parts = text.trim().split('.');
  if (parts.length !== 3) return null;
  const [h, p, s] = parts as [string, string, string];
  if (!BASE64URL.test(h) || !BASE64URL.test(p) || !SIGNATURE.test(s)) return null;
  const header = json(h);
  const payload = json(p);
  if (typeof header !== 'object' || header === null || Array.isArray(header) || payload === undefined) return null;
  return { header: header as Record<string, unknown>, payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, 'base64url') };
}

/** Whether `jws` is signed with `alg` by the key `jwk`; a key unusable with that algorithm never verifies. */
export function verifyJws(jws: DecodedJws, alg: JwsAlgorithm, jwk: JsonWebKey): boolean {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    return false;
  }
  const expectedType = alg === 'ES256' ? 'ec' : 'rsa';
  if (key.asymmetricKeyType !== expectedType) return false;
  if (alg === 'ES256' && key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return false;
  return verify('sha256', Buffer.from(jws.signingInput), signatureOptions(alg, key), jws.signature);
}
