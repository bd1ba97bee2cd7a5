import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { payCharge } from './charge-settlement.ts';
import { findChargeByTxid } from './charge-store.ts';
import { receivePix } from './incoming.ts';
import { findPayoutLocked, lockPayout, type PixPayout, type PixPayoutState } from './payout-store.ts';
import { receivePayoutReturn, reversePayout, settleLockedPayout } from './payouts.ts';
import type { PixParty } from './provider.ts';

/**
 * What the platform's Pix provider (PSP) tells it, applied through the same domain steps as the payout workflow's
 * polling, so whichever comes first applies and the other finds nothing left to do. Each notification is recorded by
 * its id in the transaction that moves its money: sent again, it is answered what it did the first time.
 */

export type ProviderNotification =
  | { type: 'payout.settled'; data: { payoutId: string; endToEndId: string; settledAt: string } }
  | { type: 'payout.failed' | 'payout.cancelled'; data: { payoutId: string; endToEndId: string; reason: string } }
  | {
      type: 'payout.returned';
      data: { payoutId: string; endToEndId: string; returnEndToEndId: string; amountCents: bigint; returnedAt: string; settledAt?: string | undefined };
    }
  | {
      type: 'pix.received';
      /** `txid`: the Pix pays that charge of the platform (a dynamic BR Code one of its holders scanned). */
      data: { endToEndId: string; amountCents: bigint; receiver: { branch: string; account: string }; payer: PixParty; txid?: string | undefined };
    };

export type NotificationResult =
  | { payoutId: string; payoutStatus: PixPayoutState; refundedCents: string }
  | { movementId: string; endToEndId: string; amountCents: string; feeCents: string };

export interface NotificationAnswer {
  status: 'applied' | 'duplicate';
  notificationId: string;
  type: ProviderNotification['type'];
  result: NotificationResult;
}

/**
 * What the provider is answered, and the payout it was about as the notification left it, for the wake of its
 * settlement run (null for an incoming Pix, or a notification received before).
 */
export interface NotificationOutcome {
  answer: NotificationAnswer;
  payout: PixPayout | null;
}

const bodyHash = (raw: Buffer) => createHash('sha256').update(raw).digest('hex');

/**
 * Applies a verified notification once per id; `raw` is the body it was signed over. `taskQueue` is where the wake of
 * a charge a `pix.received` pays is handed off.
 */
export async function applyProviderNotification(em: EntityManager, taskQueue: string, id: string, raw: Buffer, notification: ProviderNotification): Promise<NotificationOutcome> {
  return em.transactional(async (tx) => {
    const hash = bodyHash(raw);
    // Inserted first: the same id sent twice at once waits here for the first one's transaction, then reads its result.
    const inserted = await tx.execute<{ id: string }[]>(
      `insert into pix_provider_notification (id, type, end_to_end_id, body_hash) values (?, ?, ?, ?) on conflict (id) do nothing returning id`,
      [id, notification.type, notification.data.endToEndId, hash],
    );
    if (inserted.length === 0) {
      const [seen] = await tx.execute<{ type: ProviderNotification['type']; body_hash: string; result: NotificationResult }[]>(
        'select type, body_hash, result from pix_provider_notification where id = ?',
        [id],
      );
      if (seen!.body_hash !== hash) throw new DomainError('NOTIFICATION_ID_REUSED');
      return { answer: { status: 'duplicate', notificationId: id, type: seen!.type, result: seen!.result }, payout: null };
    }
    let payout: PixPayout | null = null;
    let result: NotificationResult;
    if (notification.type === 'pix.received') {
      result = await applyIncomingPix(tx, taskQueue, notification.data);
    } else {
      payout = await applyPayoutNotification(tx, notification);
      result = payoutResult(payout);
    }
    await tx.execute('update pix_provider_notification set result = ?::jsonb where id = ?', [JSON.stringify(result), id]);
    return { answer: { status: 'applied', notificationId: id, type: notification.type, result }, payout };
  });
}

const payoutResult = (payout: PixPayout): NotificationResult => ({ payoutId: payout.id, payoutStatus: payout.state, refundedCents: payout.refundedCents.toString() });

/** A payout the provider was given: recorded and debited (a payout still REQUESTED or REJECTED was never submitted). */
async function lockSubmittedPayout(tx: EntityManager, payoutId: string, endToEndId: string): Promise<PixPayout> {
  const payout = await findPayoutLocked(tx, payoutId);
  if (!payout || payout.state === 'REQUESTED' || payout.state === 'REJECTED') throw new DomainError('PAYOUT_NOT_FOUND');
  if (payout.endToEndId !== null && payout.endToEndId !== endToEndId) {
    throw new DomainError('END_TO_END_ID_MISMATCH', { endToEndId: payout.endToEndId });
  }
  return payout;
}
lockSubmittedPayout.raises = refusals('PAYOUT_NOT_FOUND', 'END_TO_END_ID_MISMATCH');

/** Only a settled payout is returned; what may still be returned is `refundPayout`'s rule. */
function assertReturnable(payout: PixPayout): void {
  if (payout.state === 'FAILED' || payout.state === 'CANCELLED') {
    throw new DomainError('PAYOUT_NOT_RETURNABLE', { state: payout.state });
  }
}
assertReturnable.raises = refusals('PAYOUT_NOT_RETURNABLE');

/** A payout's outcome; one already final (settled by the fallback query, say) is left as it is and answered as it stands. */
async function applyPayoutNotification(tx: EntityManager, notification: Exclude<ProviderNotification, { type: 'pix.received' }>): Promise<PixPayout> {
  const payout = await lockSubmittedPayout(tx, notification.data.payoutId, notification.data.endToEndId);
  switch (notification.type) {
    case 'payout.settled':
      // The most frequent notification: settled on the lock taken above, and answered without reading it again.
      return settleLockedPayout(tx, payout, { state: 'POSTED', endToEndId: notification.data.endToEndId, settledAt: notification.data.settledAt, refund: null });
    case 'payout.failed':
    case 'payout.cancelled':
      await reversePayout(tx, payout.id, { state: notification.type === 'payout.failed' ? 'FAILED' : 'CANCELLED', endToEndId: notification.data.endToEndId, reason: notification.data.reason });
      break;
    case 'payout.returned':
      assertReturnable(payout);
      await receivePayoutReturn(tx, payout.id, {
        state: 'POSTED',
        endToEndId: notification.data.endToEndId,
        settledAt: notification.data.settledAt ?? notification.data.returnedAt,
        refund: { endToEndId: notification.data.returnEndToEndId, amountCents: notification.data.amountCents.toString(), refundedAt: notification.data.returnedAt },
      });
      break;
  }
  return lockPayout(tx, payout.id);
}
applyPayoutNotification.raises = refusals(lockSubmittedPayout, assertReturnable, receivePayoutReturn);

/**
 * An incoming Pix to an account of the platform, credited once by its end-to-end id: the same Pix notified again under
 * another notification id finds its credit and moves nothing. With a `txid` it pays that charge of the receiver through
 * `payCharge`, like every payment of a charge; a charge that cannot be paid refuses the Pix with why (a 4xx the PSP
 * turns into the payer's failure).
 */
async function applyIncomingPix(tx: EntityManager, taskQueue: string, pix: Extract<ProviderNotification, { type: 'pix.received' }>['data']): Promise<NotificationResult> {
  // Holder account numbers come from one sequence for the whole platform: branch and number name one account of any tenant.
  const receiver = await tx.findOne(Account, { agency: pix.receiver.branch, number: pix.receiver.account, kind: 'HOLDER' });
  if (!receiver) throw new DomainError('RECEIVER_NOT_FOUND');
  // Serializes the notifications of one Pix, so the credit's existence is decided by one of them at a time.
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`pix-in:${pix.endToEndId}`]);
  const [credited] = await tx.execute<{ id: string; amount_cents: string; fee_cents: string }[]>(
    `select id, amount_cents::text as amount_cents, fee_cents::text as fee_cents from movement where operation_id = ? and source = 'PIX_IN'`,
    [pix.endToEndId],
  );
  if (credited) return { movementId: credited.id, endToEndId: pix.endToEndId, amountCents: credited.amount_cents, feeCents: credited.fee_cents };
  if (pix.txid !== undefined) {
    const charge = await findChargeByTxid(tx, pix.txid);
    // A txid of another account is no charge of this receiver's.
    if (!charge || charge.accountId !== receiver.id) throw notFound('Charge');
    // The charge's workflow is woken by the hand-off this records, started by the worker's reconciler.
    const { paid } = await payCharge(tx, taskQueue, { tenantId: charge.tenantId, txid: charge.txid, amountCents: pix.amountCents, payer: pix.payer, endToEndId: pix.endToEndId });
    return { movementId: paid.movementId, endToEndId: paid.endToEndId, amountCents: paid.amountCents, feeCents: paid.feeCents };
  }
  const received = await receivePix(tx, { tenantId: receiver.tenantId, accountId: receiver.id, amountCents: pix.amountCents, endToEndId: pix.endToEndId, payer: pix.payer });
  return { movementId: received.movementId, endToEndId: received.endToEndId, amountCents: received.amountCents, feeCents: received.feeCents };
}
applyIncomingPix.raises = refusals('RECEIVER_NOT_FOUND', 'NOT_FOUND', receivePix, payCharge);

// Declared last: it names the steps above.
applyProviderNotification.raises = refusals('NOTIFICATION_ID_REUSED', applyPayoutNotification, applyIncomingPix);
