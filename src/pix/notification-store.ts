import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared } from '../persistence/prepared.ts';
import type { PixPayoutState } from './payout-store.ts';
import { postingIds } from './pix-postings.ts';

/**
 * The `pix_provider_notification` table, through the functions of src/pix/sql/provider_notifications.sql: a payout's
 * notification applied whole in one statement, an incoming Pix's recorded and finished around the api's transaction.
 */

export type NotificationType = 'payout.settled' | 'payout.failed' | 'payout.cancelled' | 'payout.returned' | 'pix.received';

/** What a notification received before did, answered again to the same notification. */
export interface SeenNotification {
  code: 'RECORDED' | 'DUPLICATE' | 'NOTIFICATION_ID_REUSED';
  seen_type: NotificationType | null;
  result: unknown;
}

/** A notification recorded by its id in the caller's transaction, or what the one recorded under that id did. */
export async function recordNotification(tx: EntityManager, id: string, type: NotificationType, endToEndId: string, bodyHash: string): Promise<SeenNotification> {
  const [row] = await queryPrepared<SeenNotification>(tx, 'record_provider_notification', 'select code, seen_type, result from record_provider_notification($1, $2, $3, $4)', [
    id,
    type,
    endToEndId,
    bodyHash,
  ]);
  return row!;
}

/** What applying the recorded notification did, in the same transaction. */
export async function finishNotification(tx: EntityManager, id: string, result: unknown): Promise<void> {
  await queryPrepared(tx, 'finish_provider_notification', 'select finish_provider_notification($1, $2::jsonb)', [id, JSON.stringify(result)]);
}

export interface PayoutNotificationCall {
  id: string;
  type: Exclude<NotificationType, 'pix.received'>;
  bodyHash: string;
  payoutId: string;
  endToEndId: string;
  /** payout.settled; payout.returned: when the payout settled, if the platform has not seen it settle. */
  settledAt: string | null;
  reason: string | null;
  returned: { endToEndId: string; amountCents: bigint; returnedAt: string } | null;
}

export interface PayoutNotificationRow {
  code: 'APPLIED' | 'DUPLICATE' | 'NOTIFICATION_ID_REUSED' | 'PAYOUT_NOT_FOUND' | 'END_TO_END_ID_MISMATCH' | 'PAYOUT_NOT_RETURNABLE' | 'RETURN_EXCEEDS_PAYOUT';
  seen_type: NotificationType | null;
  result: unknown;
  tenant_id: string | null;
  account_id: string | null;
  payout_status: PixPayoutState | null;
  expected_end_to_end_id: string | null;
  left_cents: string | null;
}

/**
 * A payout's notification in one statement, its own transaction (`apply_pix_payout_notification`): a named prepared
 * statement on the pool, as the request path's are.
 */
export async function applyPayoutNotificationRow(em: EntityManager, n: PayoutNotificationCall): Promise<PayoutNotificationRow> {
  const [row] = await queryPrepared<PayoutNotificationRow>(
    em,
    'apply_pix_payout_notification',
    `select code, seen_type, result, tenant_id, account_id, payout_status, expected_end_to_end_id, left_cents::text as left_cents
       from apply_pix_payout_notification($1, $2, $3, $4, $5, $6::timestamptz, $7, $8, $9::bigint, $10, $11::text[])`,
    [
      n.id,
      n.type,
      n.bodyHash,
      n.payoutId,
      n.endToEndId,
      n.settledAt,
      n.reason,
      n.returned?.endToEndId ?? null,
      n.returned?.amountCents.toString() ?? null,
      n.returned?.returnedAt ?? null,
      // The ids of a reversal's or a return's posting.
      postingIds(),
    ],
  );
  return row!;
}
