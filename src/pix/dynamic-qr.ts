import type { JsonWebKey } from 'node:crypto';
import { DomainError, refusals } from '../shared/errors.ts';
import { reaisToCents } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import type { BrCode } from './brcode.ts';
import { CobPayload } from './cob-payload.ts';
import { decodeJws, JWS_ALGORITHMS, verifyJws, type DecodedJws, type JwsAlgorithm } from '../shared/jws.ts';
import { identifyPixKey, type PixKeyType } from './keys.ts';
import type { PixDocument, PixProvider } from './provider.ts';
import { chargeLocation, namesPlatformHost, txidOfOwnLocation } from './public-urls.ts';

/**
 * The payer's side of a dynamic BR Code: fetch the charge's payload from its location through the provider, check that
 * the receiver's institution signed it (the key named by `kid` in the key set at `jku`, on the location's own host), and
 * that the charge can be paid now. Anything else is refused before money moves.
 */

/** A charge read from its location, its signature checked: what the payment sends, and to whom. */
export interface ScannedCharge {
  /** As in the code: host and path, without scheme. */
  location: string;
  txid: string;
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
}

const unavailable = (why: string) => new DomainError('QR_LOCATION_UNAVAILABLE', { why });
const notFound = (status: number) => new DomainError('QR_CHARGE_NOT_FOUND', { status });
const invalidPayload = (why: string) => new DomainError('QR_PAYLOAD_INVALID', { why });
const invalidSignature = (why: string) => new DomainError('QR_SIGNATURE_INVALID', { why });

const KeySet = z.object({ keys: z.array(z.looseObject({ kid: z.string().optional(), alg: z.string().optional(), use: z.string().optional(), kty: z.string() })) });

function fetched(doc: PixDocument, onMissing: (status: number) => DomainError, onError: (why: string) => DomainError): string {
  if (!doc.ok) throw onError(doc.error);
  if (doc.status === 404 || doc.status === 410) throw onMissing(doc.status);
  if (doc.status !== 200) throw onError(`it answered HTTP ${doc.status}`);
  return doc.body;
}

/** The key that signed the payload, from the key set its header names; refused unless it is on the location's host. */
async function signingKey(provider: PixProvider, jws: DecodedJws, location: URL): Promise<{ alg: JwsAlgorithm; jwk: z.output<typeof KeySet>['keys'][number] }> {
  const { alg, kid, jku, crit } = jws.header;
  if (!JWS_ALGORITHMS.includes(alg as JwsAlgorithm)) throw invalidSignature(`algorithm ${JSON.stringify(alg)} is not one of ${JWS_ALGORITHMS.join(', ')}`);
  // A critical header extension is one this verifier would have to understand (RFC 7515 §4.1.11); it understands none.
  if (crit !== undefined) throw invalidSignature('the header has critical extensions');
  if (typeof kid !== 'string' || kid === '') throw invalidSignature('the header names no key (kid)');
  if (typeof jku !== 'string') throw invalidSignature('the header names no key set (jku)');
  let keySetUrl: URL;
  try {
    keySetUrl = new URL(jku);
  } catch {
    throw invalidSignature('jku is not a URL');
  }
  // Whoever serves the location signs it: a key set elsewhere would let any host vouch for any charge.
  if (keySetUrl.protocol !== 'https:' || keySetUrl.host !== location.host) throw invalidSignature(`the key set (jku) must be served over https by ${location.host}`);
  const body = fetched(await provider.fetchDocument(keySetUrl), (status) => invalidSignature(`the key set answered HTTP ${status}`), (why) => invalidSignature(`the key set could not be read: ${why}`));
  let parsed: z.output<typeof KeySet>;
  try {
    parsed = KeySet.parse(JSON.parse(body));
  } catch {
    throw invalidSignature('the key set is not a JWK set');
  }
  const jwk = parsed.keys.find((k) => k.kid === kid);
  if (!jwk) throw invalidSignature(`the key ${kid} is not in the receiver's key set`);
  if ((jwk.alg !== undefined && jwk.alg !== alg) || (jwk.use !== undefined && jwk.use !== 'sig')) throw invalidSignature(`the key ${kid} is not a ${alg} signing key`);
  return { alg: alg as JwsAlgorithm, jwk };
}

/**
 * Reads and checks the charge of a dynamic code: signature, payload, txid (a location of this platform names the
 * charge's own), status and expiry at `now`. `publicBaseUrl` tells the platform's own locations apart.
 */
export async function readScannedCharge(provider: PixProvider, code: BrCode & { url: string }, publicBaseUrl: string, now: Date): Promise<ScannedCharge> {
  let location: URL;
  try {
    location = new URL(`https://${code.url}`);
  } catch {
    throw unavailable('its URL is not valid');
  }
  // Any other spelling of one of its own locations would be read as another institution's charge and paid to its key.
  const ownTxid = txidOfOwnLocation(publicBaseUrl, code.url);
  if (ownTxid === null && namesPlatformHost(publicBaseUrl, code.url)) throw new DomainError('QR_LOCATION_INVALID', { canonical: chargeLocation(publicBaseUrl, '<txid>') });
  const text = fetched(await provider.fetchDocument(location), notFound, unavailable);
  const jws = decodeJws(text);
  if (!jws) throw invalidPayload('the location did not answer a JWS');
  const { alg, jwk } = await signingKey(provider, jws, location);
  if (!verifyJws(jws, alg, jwk as JsonWebKey)) throw invalidSignature('the signature does not match the payload (altered, or signed with another key)');

  const parsed = CobPayload.safeParse(jws.payload);
  if (!parsed.success) throw invalidPayload(parsed.error.issues.map((i) => `${i.path.join('.') || 'payload'}: ${i.message}`).join('; '));
  const payload = parsed.data;
  if (ownTxid !== null && ownTxid !== payload.txid) throw invalidPayload('its txid is not the charge of this location');
  const key = identifyPixKey(payload.chave);
  if (!key) throw invalidPayload('chave is not a Pix key');
  const amountCents = reaisToCents(payload.valor.original)!;
  if (amountCents <= 0n) throw invalidPayload('a charge whose amount the payer chooses (valor.original 0.00) is not supported');
  if (payload.valor.modalidadeAlteracao === 1) throw new DomainError('QR_AMOUNT_CHANGE_NOT_SUPPORTED');

  if (payload.status === 'CONCLUIDA') throw new DomainError('CHARGE_ALREADY_PAID');
  if (payload.status !== 'ATIVA') throw new DomainError('CHARGE_REMOVED');
  if (Date.parse(payload.calendario.criacao) + payload.calendario.expiracao * 1000 <= now.getTime()) throw new DomainError('CHARGE_EXPIRED');
  return { location: code.url, txid: payload.txid, amountCents, ...key };
}
readScannedCharge.raises = refusals(
  'QR_LOCATION_UNAVAILABLE',
  'QR_LOCATION_INVALID',
  'QR_CHARGE_NOT_FOUND',
  'QR_PAYLOAD_INVALID',
  'QR_SIGNATURE_INVALID',
  'QR_AMOUNT_CHANGE_NOT_SUPPORTED',
  'CHARGE_ALREADY_PAID',
  'CHARGE_EXPIRED',
  'CHARGE_REMOVED',
);

/**
 * What a payment of a scanned charge sends: exactly its amount. The code's own amount (field 54) and the payer's, when
 * given, must be that amount (422: the code was altered, or the payer means another payment).
 */
export function scannedChargeAmount(charge: ScannedCharge, code: BrCode, requested: bigint | undefined): bigint {
  for (const other of [code.amountCents, requested]) {
    if (other !== null && other !== undefined && other !== charge.amountCents) {
      throw new DomainError('CHARGE_AMOUNT_MISMATCH', { amountCents: charge.amountCents });
    }
  }
  return charge.amountCents;
}
scannedChargeAmount.raises = refusals('CHARGE_AMOUNT_MISMATCH');
