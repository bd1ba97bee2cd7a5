import type { EntityManager } from '@mikro-orm/postgresql';
import { callPostingFunction } from '../ledger/store.ts';
import { newCuid } from '../shared/ids.ts';
import { isoUtc } from '../shared/pagination.ts';
import type { PixPayoutState } from './payout-store.ts';
import type { PixParty } from './provider.ts';

/**
 * The calls of the Pix posting functions besides the debit (src/ledger/sql/: `credit_incoming_pix`,
 * `refund_pix_charge`, `settle_pix_payout`, `reverse_pix_payout`, `refund_pix_payout`, `debit_recorded_pix_payout`): this passes the
 * requests and reads the answers; every rule and every write is in the functions. Each runs in the caller's
 * transaction when there is one.
 */

/** The ids of up to 3 movements and 4 entries, as an array literal (the query builder would spread an array). */
export const postingIds = (): string => `{${Array.from({ length: 7 }, newCuid).join(',')}}`;

export interface CreditRow {
  code: 'CREDITED' | 'ACCOUNT_NOT_FOUND' | 'ACCOUNT_NOT_APPROVED' | 'ACCOUNT_NOT_ACTIVE' | 'AMOUNT_BELOW_RECEIVE_FEE';
  movement_id: string;
  fee_cents: string;
  balance_after_cents: string;
  pix_account_id: string;
  core_account_id: string;
  credited_at: string;
  payment_date: string;
}

export interface IncomingCredit {
  tenantId: string;
  accountId: string;
  amountCents: bigint;
  endToEndId: string;
  description: string;
  payer: PixParty;
  extraMetadata: Record<string, unknown>;
}

export const callCreditIncomingPix = (em: EntityManager, c: IncomingCredit) =>
  callPostingFunction<CreditRow>(
    em,
    'credit_incoming_pix',
    `code, movement_id, fee_cents::text as fee_cents, balance_after_cents::text as balance_after_cents, pix_account_id, core_account_id,
     ${isoUtc('credited_at')} as credited_at, payment_date`,
    ['::uuid', '::uuid', '::bigint', '', '', '::jsonb', '::jsonb', '::text[]'],
    [c.tenantId, c.accountId, c.amountCents.toString(), c.endToEndId, c.description, JSON.stringify(c.payer), JSON.stringify(c.extraMetadata), postingIds()],
  );

export interface ChargeRefundPosting {
  tenantId: string;
  accountId: string;
  chargeId: string;
  refundId: string;
  amountCents: bigint;
  endToEndId: string;
  idempotencyKey: string;
}

export const callRefundPixCharge = (em: EntityManager, r: ChargeRefundPosting) =>
  callPostingFunction<{ code: 'REFUNDED' | 'INSUFFICIENT_BALANCE'; movement_id: string; created_at: string }>(
    em,
    'refund_pix_charge',
    `code, movement_id, ${isoUtc('created_at')} as created_at`,
    ['::uuid', '::uuid', '', '', '::bigint', '', '', '::text[]'],
    [r.tenantId, r.accountId, r.chargeId, r.refundId, r.amountCents.toString(), r.endToEndId, r.idempotencyKey, postingIds()],
  );

export const callSettlePixPayout = (em: EntityManager, payoutId: string, endToEndId: string, settledAt: string) =>
  callPostingFunction<{ code: 'SETTLED' | 'UNCHANGED' }>(em, 'settle_pix_payout', 'code', ['', '', '::timestamptz'], [payoutId, endToEndId, settledAt]);

export const callReversePixPayout = (em: EntityManager, payoutId: string, state: 'FAILED' | 'CANCELLED', endToEndId: string, reason: string) =>
  callPostingFunction<{ code: 'REVERSED' | 'UNCHANGED' }>(em, 'reverse_pix_payout', 'code', ['', '', '', '', '::text[]'], [payoutId, state, endToEndId, reason, postingIds()]);

export const callRefundPixPayout = (em: EntityManager, payoutId: string, refund: { endToEndId: string; amountCents: bigint; refundedAt: string }) =>
  callPostingFunction<{ code: 'REFUNDED' | 'UNCHANGED' | 'RETURN_EXCEEDS_PAYOUT'; left_cents: string | null }>(
    em,
    'refund_pix_payout',
    'code, left_cents::text as left_cents',
    ['', '', '::bigint', '', '::text[]'],
    [payoutId, refund.endToEndId, refund.amountCents.toString(), refund.refundedAt, postingIds()],
  );

export interface RecordedDebitRow {
  status: Exclude<PixPayoutState, 'REQUESTED'>;
  reason: string | null;
  amount_cents: string;
  fee_cents: string;
  created_at: string;
}

export const callDebitRecordedPixPayout = (em: EntityManager, payoutId: string) =>
  callPostingFunction<RecordedDebitRow>(
    em,
    'debit_recorded_pix_payout',
    `status, reason, amount_cents::text as amount_cents, fee_cents::text as fee_cents, ${isoUtc('created_at')} as created_at`,
    ['', '::text[]'],
    [payoutId, postingIds()],
  );
