import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { applyProviderNotification, type NotificationOutcome, type ProviderNotification } from '../../../src/pix/provider-notifications.ts';

/** A notification of the provider applied as the api applies a verified one (its body as the provider sent it), under `id` (a new one by default). */
export function applyNotification(em: EntityManager, notification: ProviderNotification, id = `msg_${randomUUID()}`): Promise<NotificationOutcome> {
  return applyProviderNotification(em, 'domain-tests', id, Buffer.from(JSON.stringify(notification, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))), notification);
}

/** The provider's `payout.returned`: a return (devolução) of `amountCents`, the payout settled at `settledAt` if not seen settled. */
export const payoutReturned = (payoutId: string, r: { endToEndId: string; settledAt: string; returnEndToEndId: string; amountCents: bigint; returnedAt?: string }): ProviderNotification => ({
  type: 'payout.returned',
  data: { payoutId, endToEndId: r.endToEndId, returnEndToEndId: r.returnEndToEndId, amountCents: r.amountCents, returnedAt: r.returnedAt ?? new Date().toISOString(), settledAt: r.settledAt },
});
