import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { payCharge } from './charge-settlement.ts';
import { findChargeByTxid } from './charge-store.ts';
import { receivePix } from './incoming.ts';
import { applyPayoutNotificationRow, finishNotification, recordNotification } from './notification-store.ts';
import type { PixPayoutState } from './payout-store.ts';
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
  payout: { id: string; tenantId: string; accountId: string; state: PixPayoutState } | null;
}

const bodyHash = (raw: Buffer) => createHash('sha256').update(raw).digest('hex');

/**
 * Applies a verified notification once per id; `raw` is the body it was signed over. `taskQueue` is where the wake of
 * a charge a `pix.received` pays is handed off.
 */
export async function applyProviderNotification(em: EntityManager, taskQueue: string, id: string, raw: Buffer, notification: ProviderNotification): Promise<NotificationOutcome> {
  const hash = bodyHash(raw);
  if (notification.type === 'pix.received') return applyIncomingNotification(em, taskQueue, id, hash, notification.data);
  return applyPayoutNotification(em, id, hash, notification);
}

/** The same notification again: what it did the first time; another body under its id is refused. */
function answerSeen(id: string, seen: { code: string; seen_type: ProviderNotification['type'] | null; result: unknown }): NotificationOutcome {
  if (seen.code === 'NOTIFICATION_ID_REUSED') throw new DomainError('NOTIFICATION_ID_REUSED');
  return { answer: { status: 'duplicate', notificationId: id, type: seen.seen_type!, result: seen.result as NotificationResult }, payout: null };
}
answerSeen.raises = refusals('NOTIFICATION_ID_REUSED');

/**
 * A payout's outcome, in one statement (`apply_pix_payout_notification`, src/pix/sql/): settled, failed or cancelled,
 * or a return (devolução) credited, a payout not seen settled settling first. One already final (settled by the
 * fallback query, say) is left as it is and answered as it stands. A payout never submitted, another end-to-end id
 * than the one it settled under, a return of a failed or cancelled payout, or one past what is left, is refused with
 * nothing written.
 */
async function applyPayoutNotification(em: EntityManager, id: string, hash: string, notification: Exclude<ProviderNotification, { type: 'pix.received' }>): Promise<NotificationOutcome> {
  const { data } = notification;
  const returned = notification.type === 'payout.returned' ? notification.data : null;
  const row = await applyPayoutNotificationRow(em, {
    id,
    type: notification.type,
    bodyHash: hash,
    payoutId: data.payoutId,
    endToEndId: data.endToEndId,
    settledAt: notification.type === 'payout.settled' ? notification.data.settledAt : returned ? (returned.settledAt ?? returned.returnedAt) : null,
    reason: notification.type === 'payout.failed' || notification.type === 'payout.cancelled' ? notification.data.reason : null,
    returned: returned && { endToEndId: returned.returnEndToEndId, amountCents: returned.amountCents, returnedAt: new Date(returned.returnedAt).toISOString() },
  });
  switch (row.code) {
    case 'PAYOUT_NOT_FOUND':
      throw new DomainError('PAYOUT_NOT_FOUND');
    case 'END_TO_END_ID_MISMATCH':
      throw new DomainError('END_TO_END_ID_MISMATCH', { endToEndId: row.expected_end_to_end_id! });
    case 'PAYOUT_NOT_RETURNABLE':
      throw new DomainError('PAYOUT_NOT_RETURNABLE', { state: row.payout_status! });
    case 'RETURN_EXCEEDS_PAYOUT':
      throw new DomainError('RETURN_EXCEEDS_PAYOUT', { payoutId: data.payoutId, amountCents: returned!.amountCents, leftCents: row.left_cents! });
    case 'DUPLICATE':
    case 'NOTIFICATION_ID_REUSED':
      return answerSeen(id, row);
    case 'APPLIED':
      return {
        answer: { status: 'applied', notificationId: id, type: notification.type, result: row.result as NotificationResult },
        payout: { id: data.payoutId, tenantId: row.tenant_id!, accountId: row.account_id!, state: row.payout_status! },
      };
  }
}
applyPayoutNotification.raises = refusals('PAYOUT_NOT_FOUND', 'END_TO_END_ID_MISMATCH', 'PAYOUT_NOT_RETURNABLE', 'RETURN_EXCEEDS_PAYOUT', answerSeen);

/** An incoming Pix's notification, recorded by its id in the transaction that credits it. */
async function applyIncomingNotification(em: EntityManager, taskQueue: string, id: string, hash: string, pix: Extract<ProviderNotification, { type: 'pix.received' }>['data']): Promise<NotificationOutcome> {
  return em.transactional(async (tx) => {
    const seen = await recordNotification(tx, id, 'pix.received', pix.endToEndId, hash);
    if (seen.code !== 'RECORDED') return answerSeen(id, seen);
    const result = await applyIncomingPix(tx, taskQueue, pix);
    await finishNotification(tx, id, result);
    return { answer: { status: 'applied', notificationId: id, type: 'pix.received', result }, payout: null };
  });
}

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

// Declared last: they name the steps above.
applyIncomingNotification.raises = refusals(answerSeen, applyIncomingPix);
applyProviderNotification.raises = refusals(applyPayoutNotification, applyIncomingNotification);
