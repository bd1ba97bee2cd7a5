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

export interface PayoutSubmission {
  payoutId: string;
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
}

export type ProviderPayoutState =
  | { state: 'PROCESSING' }
  | { state: 'POSTED'; endToEndId: string; settledAt: string; refund: { endToEndId: string; amountCents: string; refundedAt: string } | null }
  | { state: 'FAILED' | 'CANCELLED'; endToEndId: string; reason: string };

/**
 * Everything the platform asks of its Pix provider (PSP). The sandbox simulator implements it; a real PSP adapter
 * would too. Incoming Pix reaches the platform the other way: the provider notifies, and `receivePix` credits.
 */
export interface PixProvider {
  resolveKey(type: PixKeyType, key: string): Promise<Beneficiary | null>;
  /** Idempotent on payoutId: submitting again returns the same payout. */
  submitPayout(p: PayoutSubmission): Promise<void>;
  queryPayout(payoutId: string): Promise<ProviderPayoutState>;
}
