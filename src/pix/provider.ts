import type { PixKeyType } from './keys.ts';

/** Who a Pix key belongs to, as the provider's directory (DICT) answers. */
export interface Beneficiary {
  ispb: string;
  name: string;
  document: string;
  institution: string;
  branch: string;
  account: string;
  accountType: string;
}

/** Who sends a Pix, as the receiving institution sees them. */
export interface PixParty {
  name: string;
  document: string;
  ispb: string;
  institution: string;
  branch: string;
  account: string;
}

export interface PayoutSubmission {
  payoutId: string;
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
  /** A payment of a dynamic QR Code: the charge's location (as scanned, without scheme) and the txid its payload gave. */
  charge: { location: string; txid: string } | null;
  payer: PixParty;
  /**
   * The account the Pix goes to, as the directory (or the charge) named it: an ISPB of the platform's own is a payment
   * the provider delivers back to the platform.
   */
  receiver: { ispb: string; branch: string; account: string };
}

export type ProviderPayoutState =
  | { state: 'PROCESSING' }
  | { state: 'POSTED'; endToEndId: string; settledAt: string; refund: { endToEndId: string; amountCents: string; refundedAt: string } | null }
  | { state: 'FAILED' | 'CANCELLED'; endToEndId: string; reason: string };

/**
 * A devolução: part or all of a Pix this platform received, sent back to its payer under an end-to-end id of its own
 * (`D…`). `originalEndToEndId` names the Pix it returns, so the payer's institution knows whose payment comes back.
 */
export interface PixReturn {
  endToEndId: string;
  originalEndToEndId: string;
  amountCents: bigint;
}

/** A public document of the Pix network (a charge's payload, a key set) as fetched: the HTTP answer, or why there is none. */
export type PixDocument = { ok: true; status: number; body: string } | { ok: false; error: string };

/**
 * Everything the platform asks of its Pix provider (PSP), implemented over HTTP by `http-provider.ts` (against the
 * sandbox PSP service, `src/sandbox/psp/`, or a real PSP's API behind the same adapter shape). What happens later
 * reaches the platform the other way: the provider's signed notifications (`provider-notifications.ts`).
 */
export interface PixProvider {
  resolveKey(type: PixKeyType, key: string): Promise<Beneficiary | null>;
  /**
   * The receiver of a dynamic QR Code's charge, told by the charge's location and payload: the owner of its key, as
   * the directory answers.
   */
  resolveChargeReceiver(charge: { location: string; txid: string; pixKey: string; pixKeyType: PixKeyType }): Promise<Beneficiary | null>;
  /** GET of a public `https://` URL of the Pix network: a dynamic QR Code's location, or the key set (`jku`) that signs it. */
  fetchDocument(url: URL): Promise<PixDocument>;
  /** Idempotent on payoutId: submitting again returns the same payout. */
  submitPayout(p: PayoutSubmission): Promise<void>;
  queryPayout(payoutId: string): Promise<ProviderPayoutState>;
  /** Sends a devolução to the payer's institution. Idempotent on the return's endToEndId: sending it again changes nothing. */
  returnPix(r: PixReturn): Promise<void>;
}
