import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Account } from '../accounts/entities.ts';
import { enqueueEvents } from '../events/outbox.ts';
import { idempotencyConflict } from '../shared/idempotency.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import type { WorkflowStart } from '../temporal/workflow-start.ts';
import { PLATFORM_ISPB } from '../shared/institution.ts';
import { chargePaid, pixChargeRefundStart, pixChargeStart } from '../../workflows/contracts/pix-charge.ts';
import { findRefundByKey, findRefundReturn, lockChargeByTxid, lockChargeOfAccount, markChargePaid, type ChargeRefund } from './charge-store.ts';
import { pixEndToEndId } from './end-to-end.ts';
import { creditIncomingPix } from './incoming.ts';
import { callRefundPixCharge } from './pix-postings.ts';
import type { PixParty, PixProvider } from './provider.ts';

/**
 * The money of a charge: its payment (like an incoming Pix: the amount from the settlement account, the receive fee
 * to the tenant's revenue) and its refunds (back to the settlement account, then on to the payer through the
 * provider). Each is one database transaction that locks the charge first and the accounts after, so a payment, a
 * refund and the expiry of one charge queue behind each other, and its event is written in the same transaction.
 */

export interface ChargePayment {
  tenantId: string;
  txid: string;
  /** What the payer sends; must be the charge's amount. Omitted: the charge's amount. */
  amountCents?: bigint | undefined;
  payer: PixParty;
  /** The end-to-end id the payer's institution gave the Pix; omitted, one is made for the payer's ISPB. */
  endToEndId?: string;
}

/**
 * Pays an ACTIVE charge in full: credits its account, marks it PAID and writes `pix.charge.paid`, with the hand-off
 * that wakes the charge's workflow (so it ends now instead of at the expiry) in the same transaction. Every payment of
 * a charge comes here: the sandbox's and a holder's scan of its BR Code alike.
 */
export async function payCharge(em: EntityManager, taskQueue: string, payment: ChargePayment) {
  return em.transactional(async (tx) => {
    const charge = await lockChargeByTxid(tx, payment.tenantId, payment.txid);
    if (!charge) throw notFound('Charge');
    if (charge.status === 'PAID') throw new DomainError('CHARGE_ALREADY_PAID');
    // Past its expiry the charge is dead even if its timer has not marked it yet.
    if (charge.status === 'EXPIRED' || charge.lapsed) throw new DomainError('CHARGE_EXPIRED');
    const amount = charge.amountCents;
    if (payment.amountCents !== undefined && payment.amountCents !== amount) {
      throw new DomainError('CHARGE_AMOUNT_MISMATCH', { amountCents: amount });
    }

    const { movementId, balanceAfterCents, account, endToEndId, fee, at: paidAt } = await creditIncomingPix(tx, {
      tenantId: payment.tenantId,
      accountId: charge.accountId,
      amountCents: amount,
      payer: payment.payer,
      ...(payment.endToEndId ? { endToEndId: payment.endToEndId } : {}),
      description: `Pix recebido de ${payment.payer.name} (cobrança)`,
      // The statement shows the charge it paid.
      extraMetadata: { txid: charge.txid, chargeId: charge.id },
    });
    await markChargePaid(tx, charge.id, { payer: payment.payer, endToEndId, movementId, paidAt });
    await enqueueEvents(tx, [
      {
        tenantId: payment.tenantId,
        accountId: account.id,
        pixAccountId: account.pixAccountId,
        type: 'pix.charge.paid',
        data: {
          tag: charge.tag,
          txid: charge.txid,
          chargeId: charge.id,
          payerName: payment.payer.name,
          endToEndId,
          movementId,
          occurredAt: paidAt.toISOString(),
          amountCents: amount.toString(),
          // interface.md section 6: ISO 8601 UTC here (unlike pix.in.received's "space and offset" text).
          paymentDate: paidAt.toISOString(),
          payerDocument: payment.payer.document,
          payerInstitution: payment.payer.institution,
          refundEndToEndId: null,
          payerInstitutionIspb: payment.payer.ispb,
        },
      },
    ]);
    const wake: WorkflowStart = {
      ...pixChargeStart({ chargeId: charge.id, tenantId: charge.tenantId, accountId: charge.accountId, expiresAt: charge.expiresAt }),
      signal: { name: chargePaid.name, args: [] },
    };
    const handOff = await insertHandOff(tx, taskQueue, wake);
    const paid = {
      chargeId: charge.id,
      txid: charge.txid,
      status: 'PAID' as const,
      movementId,
      endToEndId,
      amountCents: amount.toString(),
      feeCents: fee.toString(),
      balanceAfterCents: balanceAfterCents.toString(),
      paidAt: paidAt.toISOString(),
    };
    return { paid, handOff };
  });
}
payCharge.raises = refusals('NOT_FOUND', 'CHARGE_ALREADY_PAID', 'CHARGE_EXPIRED', 'CHARGE_AMOUNT_MISMATCH', creditIncomingPix);

/** The sandbox's payment of a charge: paid (`payCharge`), then the charge's workflow woken to end once that committed (or by the reconciler). */
export async function payChargeAndWake(em: EntityManager, client: Client, taskQueue: string, payment: ChargePayment) {
  const { paid, handOff } = await payCharge(em, taskQueue, payment);
  await dispatchHandOff(client, em, handOff);
  return paid;
}
payChargeAndWake.raises = refusals(payCharge);

export const refundView = (r: ChargeRefund) => ({
  refundId: r.id,
  chargeId: r.chargeId,
  amountCents: r.amountCents.toString(),
  refundEndToEndId: r.refundEndToEndId,
  createdAt: r.createdAt,
});

/** A devolution's id: like an end-to-end id, with `D` and the ISPB of the institution returning the money (this one). */
const refundEndToEndId = (at: Date) => `D${pixEndToEndId(PLATFORM_ISPB, at).slice(1)}`;

/** The refund workflow's step: a refund's devolução sent to the payer's institution; the provider takes each return once. */
export async function sendChargeRefund(em: EntityManager, provider: Pick<PixProvider, 'returnPix'>, refundId: string): Promise<void> {
  const sent = await findRefundReturn(em, refundId);
  if (!sent) throw new Error(`unknown charge refund ${refundId}`);
  await provider.returnPix(sent);
}

/**
 * Returns part or all of what a PAID charge received to its payer: debits the account (the receive fee is not
 * returned), credits the settlement account, and writes `pix.charge.refunded`; the hand-off of the workflow that sends
 * the devolução on to the payer through the provider is recorded in the same transaction. The Idempotency-Key (per
 * charge) returns the original refund on a retry with the same amount; another amount under that key is 409.
 */
export async function refundCharge(em: EntityManager, taskQueue: string, account: Account, chargeId: string, idempotencyKey: string, amountCents: bigint) {
  return em.transactional(async (tx) => {
    const charge = await lockChargeOfAccount(tx, account.id, chargeId);
    if (!charge) throw notFound('Charge');
    const previous = await findRefundByKey(tx, charge.id, idempotencyKey);
    if (previous) {
      if (previous.amountCents !== amountCents) throw idempotencyConflict();
      return { refund: refundView(previous), handOff: null };
    }
    if (charge.status !== 'PAID') throw new DomainError('CHARGE_NOT_PAID');
    const refundableCents = charge.paidCents - charge.refundedCents;
    if (amountCents > refundableCents) throw new DomainError('REFUND_EXCEEDS_PAID', { refundableCents });

    // The posting, the refund's record and the charge's refunded total, in one call (`refund_pix_charge`).
    const refundId = newCuid();
    const e2e = refundEndToEndId(new Date());
    const posted = await callRefundPixCharge(tx, { tenantId: account.tenantId, accountId: account.id, chargeId: charge.id, refundId, amountCents, endToEndId: e2e, idempotencyKey });
    if (posted.code === 'INSUFFICIENT_BALANCE') throw new DomainError('REFUND_NOT_COVERED');
    const refund: ChargeRefund = { id: refundId, chargeId: charge.id, amountCents, refundEndToEndId: e2e, createdAt: posted.created_at };
    await enqueueEvents(tx, [
      {
        tenantId: account.tenantId,
        accountId: account.id,
        pixAccountId: account.pixAccountId,
        type: 'pix.charge.refunded',
        data: {
          tag: charge.tag,
          txid: charge.txid,
          chargeId: charge.id,
          movementId: posted.movement_id,
          // PAID: its payment's end-to-end id was recorded with it (markChargePaid).
          endToEndId: charge.endToEndId!,
          refundEndToEndId: e2e,
          amountCents: charge.amountCents.toString(),
          occurredAt: refund.createdAt,
          refundAmountCents: amountCents.toString(),
        },
      },
    ]);
    const handOff = await insertHandOff(tx, taskQueue, pixChargeRefundStart({ refundId, chargeId: charge.id, tenantId: account.tenantId, accountId: account.id }));
    return { refund: refundView(refund), handOff };
  });
}
refundCharge.raises = refusals('NOT_FOUND', 'IDEMPOTENCY_KEY_REUSED', 'CHARGE_NOT_PAID', 'REFUND_EXCEEDS_PAID', 'REFUND_NOT_COVERED');

/** The integrator's refund: recorded (`refundCharge`), then the workflow that sends the devolução started once that committed (or by the reconciler). */
export async function refundChargeToPayer(em: EntityManager, client: Client, taskQueue: string, account: Account, chargeId: string, idempotencyKey: string, amountCents: bigint) {
  const { refund, handOff } = await refundCharge(em, taskQueue, account, chargeId, idempotencyKey, amountCents);
  if (handOff) await dispatchHandOff(client, em, handOff);
  return refund;
}
refundChargeToPayer.raises = refusals(refundCharge);
