import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import { idempotencyConflict, requestHash } from '../shared/idempotency.ts';
import { documentShownToPayer } from '../shared/documents.ts';
import { derivedId } from '../shared/ids.ts';
import { PLATFORM_ISPB } from '../shared/institution.ts';
import type { PayoutDebit, PayoutOpening, PayoutTiming } from '../../workflows/contracts/pix-payout.ts';
import type { PixKeyType } from './keys.ts';
import { findPayoutByKey, findPayoutWithPayer, type PayoutChannel, type PayoutQr, type PixPayout } from './payout-store.ts';
import { callDebit, outcomeOf, type DebitApproval, type DebitOutcome, type DebitRequest, type PayoutOutcome } from './payout-debits.ts';
import { callDebitRecordedPixPayout, callRefundPixPayout, callReversePixPayout, callSettlePixPayout } from './pix-postings.ts';
import type { Beneficiary, PayoutSubmission, PixProvider, ProviderPayoutState } from './provider.ts';

/**
 * The life of a Pix payout (by key or QR Code): recorded, debited at once (or refused), then settled, reversed or
 * refunded as the provider reports. Each step is one transaction that locks the payout first.
 */

export interface PayoutRequest {
  tenantId: string;
  /** The paying account: its id is what the debit needs of it (the debit reads and locks the row itself). */
  account: Pick<Account, 'id'>;
  channel: PayoutChannel;
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
  beneficiary: Beneficiary;
  qr: PayoutQr | null;
  description: string;
  idempotencyKey: string;
}

/** Like a tevId: derived from the account and the idempotency key, so a retried request names the same payout. */
export const payoutIdFor = (pepper: string, accountId: string, idempotencyKey: string): string =>
  derivedId(pepper, 'p', `pix:${accountId}:${idempotencyKey}`);

/** What the payment endpoints answer once the debit is decided; null while it is not. */
export const openingOf = (payout: PixPayout): PayoutOpening | null =>
  payout.state === 'REQUESTED'
    ? null
    : {
        payoutId: payout.id,
        status: payout.state === 'REJECTED' ? 'REJECTED' : 'PROCESSING',
        amountCents: payout.amountCents.toString(),
        feeCents: (payout.feeCents ?? 0n).toString(),
        reason: payout.reason,
        createdAt: payout.createdAt,
      };

/**
 * A dynamic QR Code's payment sent again under its Idempotency-Key: what the first request was answered (debited,
 * refused, or not decided yet) and whom it paid, or null when there was none. The same key with another location or amount is 409. It
 * is read before the code's location, because the charge a retry paid no longer reads as payable.
 */
export async function retriedQrPayout(
  em: EntityManager,
  accountId: string,
  idempotencyKey: string,
  location: string,
  amountCents: bigint | undefined,
): Promise<{ outcome: PayoutOutcome; receiver: Pick<PixPayout, 'pixKey' | 'beneficiary'> } | null> {
  const recorded = await findPayoutByKey(em, accountId, idempotencyKey);
  if (!recorded) return null;
  if (recorded.qr?.location !== location || (amountCents !== undefined && amountCents !== recorded.amountCents)) throw idempotencyConflict();
  const opening = openingOf(recorded);
  const outcome: PayoutOutcome = opening
    ? { kind: 'decided', opening, limitBreach: recorded.limitBreach, trustedContact: null }
    : { kind: 'pending', payoutId: recorded.id, amountCents: recorded.amountCents.toString(), trustedContact: null };
  return { outcome, receiver: recorded };
}
retriedQrPayout.raises = refusals('IDEMPOTENCY_KEY_REUSED');

/** What a request asks for, so that the same Idempotency-Key with another request is told apart (409). */
export const payoutRequestHash = (request: Pick<PayoutRequest, 'channel' | 'amountCents' | 'pixKey' | 'pixKeyType' | 'qr' | 'description'>): string =>
  requestHash([request.channel, request.amountCents.toString(), request.pixKey, request.pixKeyType, request.qr?.txid ?? null, request.description]);

/** How the settlement workflow waits for the provider's notification before asking the provider itself. */
export const payoutTiming = (config: Pick<Config, 'PIX_NOTIFICATION_WAIT_MS' | 'PIX_QUERY_MAX_WAIT_MS'>): PayoutTiming => ({
  notificationWaitMs: config.PIX_NOTIFICATION_WAIT_MS,
  longestWaitMs: config.PIX_QUERY_MAX_WAIT_MS,
});

/** The payment request as the debit takes it (the beneficiary's document as the payer may see it). */
export function payoutDebitOf(pepper: string, request: PayoutRequest): PayoutDebit {
  return {
    payoutId: payoutIdFor(pepper, request.account.id, request.idempotencyKey),
    tenantId: request.tenantId,
    accountId: request.account.id,
    channel: request.channel,
    amountCents: request.amountCents.toString(),
    pixKey: request.pixKey,
    pixKeyType: request.pixKeyType,
    // Stored as the payer may see it: the payout's views, statement and events all read this copy.
    beneficiary: { ...request.beneficiary, document: documentShownToPayer(request.beneficiary.document) },
    qr: request.qr,
    description: request.description,
    idempotencyKey: request.idempotencyKey,
    requestHash: payoutRequestHash(request),
  };
}

/**
 * The debit, in one round trip (`debit_pix_payout`, src/ledger/sql/): the payout is recorded under its idempotency
 * key with its outcome; when the account may move money and its balance covers the amount and the fee, they leave it
 * for the settlement and fee revenue accounts, and the hand-off of the settlement workflow is written, all in one
 * transaction. An account under dual approval gets what `approval` says (`DebitApproval`). The same request again
 * answers as the first did. `handOff` is null when the caller starts the settlement workflow itself (an approval starts
 * it as its child; a run that debits continues itself). The request path goes through `PixDebitQueue`, which batches
 * the same function under load.
 */
export async function debitPayout(em: EntityManager, debit: PayoutDebit, approval: DebitApproval, handOff: DebitRequest['handOff']): Promise<DebitOutcome> {
  return outcomeOf(debit, await callDebit(em, { debit, approval, handOff }));
}

/**
 * The settlement workflow's debit of a request the api could not confirm (handed to it with the request): the same
 * debit, idempotently. An account under dual approval has it REJECTED (`APPROVAL_REQUIRED`): a payment resolved after
 * its answer was lost never skips the approver, as a TEV's resolution does not. A payout found recorded and not
 * debited is one a version that debited in its workflow left: that debit is `openPayout`'s.
 */
export async function debitUnconfirmedPayout(em: EntityManager, debit: PayoutDebit): Promise<PayoutOpening> {
  const debited = await debitPayout(em, debit, 'REFUSE', null);
  if (debited.kind === 'approval_required') throw new Error(`payout ${debit.payoutId}: the debit asked for an approval it was told to refuse`);
  return debited.kind === 'decided' ? debited.opening : openPayout(em, debit.payoutId);
}

/**
 * The debit of a payout recorded REQUESTED, for settlement workflows started before the debit moved into the request
 * (`debit_recorded_pix_payout`, src/ledger/sql/, by the rules of `debit_pix_payout`): amount and fee leave the balance
 * (PROCESSING) with the settlement and fee revenue sides, or it is refused (REJECTED). Runs again harmlessly.
 */
export async function openPayout(em: EntityManager, payoutId: string): Promise<PayoutOpening> {
  const row = await callDebitRecordedPixPayout(em, payoutId);
  return {
    payoutId,
    status: row.status === 'REJECTED' ? 'REJECTED' : 'PROCESSING',
    amountCents: row.amount_cents,
    feeCents: row.fee_cents,
    reason: row.reason,
    createdAt: row.created_at,
  };
}

/**
 * What the provider is asked to send: the key and amount, and for a dynamic QR Code the charge it pays, with the
 * payer as the receiving institution sees them (this platform's holder).
 */
async function payoutSubmission(em: EntityManager, payoutId: string): Promise<PayoutSubmission> {
  const { payout, payer } = (await findPayoutWithPayer(em, payoutId))!;
  const location = payout.qr?.location;
  return {
    payoutId,
    amountCents: payout.amountCents,
    pixKey: payout.pixKey,
    pixKeyType: payout.pixKeyType,
    charge: location && payout.qr?.txid ? { location, txid: payout.qr.txid } : null,
    receiver: { ispb: payout.beneficiary.ispb, branch: payout.beneficiary.branch, account: payout.beneficiary.account },
    payer: { ...payer, ispb: PLATFORM_ISPB },
  };
}

/** The settlement workflow's submission of the payout to the provider (idempotent there by payout id). */
export async function submitPayout(em: EntityManager, provider: Pick<PixProvider, 'submitPayout'>, payoutId: string): Promise<void> {
  await provider.submitPayout(await payoutSubmission(em, payoutId));
}

/**
 * The provider settled (`settle_pix_payout`, src/ledger/sql/): POSTED, its movements' endToEndId and paymentDate filled,
 * `pix.payout.succeeded`, in one statement. A payout no longer PROCESSING is left as it is.
 */
export async function settlePayout(em: EntityManager, payoutId: string, state: Extract<ProviderPayoutState, { state: 'POSTED' }>): Promise<void> {
  await callSettlePixPayout(em, payoutId, state.endToEndId, state.settledAt);
}

/**
 * The provider failed or cancelled it (`reverse_pix_payout`, src/ledger/sql/): amount and fee return to the holder as
 * a reversal of the debit, which is marked with the settlement account's credit, and `pix.payout.failed|cancelled` is
 * written. A payout no longer PROCESSING is left as it is.
 */
export async function reversePayout(em: EntityManager, payoutId: string, state: Extract<ProviderPayoutState, { state: 'FAILED' | 'CANCELLED' }>): Promise<void> {
  await callReversePixPayout(em, payoutId, state.state, state.endToEndId, state.reason);
}

type ProviderRefund = NonNullable<Extract<ProviderPayoutState, { state: 'POSTED' }>['refund']>;

/**
 * A settled payout returned by the beneficiary, partially or totally (`refund_pix_payout`, src/ledger/sql/): the
 * returned amount is credited, REFUNDED, `pix.payout.refunded`. A payout may receive several returns (a charge refunded
 * in parts), each once: a return is known by its end-to-end id, and together they never exceed the amount sent.
 */
export async function refundPayout(em: EntityManager, payoutId: string, refund: ProviderRefund): Promise<void> {
  const amount = BigInt(refund.amountCents);
  const row = await callRefundPixPayout(em, payoutId, { endToEndId: refund.endToEndId, amountCents: amount, refundedAt: new Date(refund.refundedAt).toISOString() });
  if (row.code === 'RETURN_EXCEEDS_PAYOUT') {
    throw new DomainError('RETURN_EXCEEDS_PAYOUT', { payoutId, amountCents: amount, leftCents: row.left_cents! });
  }
}
refundPayout.raises = refusals('RETURN_EXCEEDS_PAYOUT');
