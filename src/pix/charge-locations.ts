import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { hit } from '../shared/rate-limit.ts';
import { findChargeByTxid, type PixCharge } from './charge-store.ts';
import { cobPayloadOf, receiverKeyOf } from './cob-payload.ts';
import { keySetUrl } from './public-urls.ts';
import { platformSigner } from './signing-key.ts';

const TXID = /^[A-Za-z0-9]{26,35}$/;

/** What an unknown txid is answered after: a charge of the same shape, whose signed payload is dropped. */
const decoyCharge = (txid: string, now: Date): Pick<PixCharge, 'txid' | 'createdAt' | 'expiresAt' | 'status' | 'amountCents'> => ({
  txid,
  createdAt: now.toISOString(),
  expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
  status: 'ACTIVE',
  amountCents: 0n,
});

/**
 * The charges' locations as payers' institutions read them: a charge's payload (API Pix `cob`) as a JWS signed with
 * the platform's key, whose public half is the key set at the payloads' `jku`. Reads are limited per client address,
 * and a known txid costs the same work as an unknown one (both build and sign a payload), so neither guessing nor
 * timing finds charges.
 */
export function chargeLocations(config: Pick<Config, 'PIX_SIGNING_KEY' | 'PIX_SIGNING_CERT' | 'publicBaseUrl' | 'KEY_PEPPER' | 'PIX_LOCATION_MAX_PER_MINUTE'>) {
  const signer = platformSigner(config);
  const jku = keySetUrl(config.publicBaseUrl);
  const limit = { name: 'pix-location', limit: config.PIX_LOCATION_MAX_PER_MINUTE, windowSeconds: 60 };
  return {
    keySet: { keys: [signer.publicJwk] },
    /** The signed payload of the charge at `txid`, or null when there is none (its decoy's signature is dropped). */
    async read(em: EntityManager, clientAddress: string, txid: string): Promise<string | null> {
      await hit(em, limit, clientAddress);
      const charge = TXID.test(txid) ? await findChargeByTxid(em, txid) : null;
      const now = new Date();
      const jws = signer.sign(cobPayloadOf(charge ?? decoyCharge(txid, now), receiverKeyOf(config.KEY_PEPPER, charge?.accountId ?? txid), now), jku);
      return charge ? jws : null;
    },
  };
}
