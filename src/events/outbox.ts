import type { EntityManager } from '@mikro-orm/postgresql';
import { newUuid } from '../shared/ids.ts';

/** The eleven event types of section 6. */
export const EVENT_TYPES = [
  'pix.in.received',
  'pix.payout.succeeded',
  'pix.payout.failed',
  'pix.payout.cancelled',
  'pix.payout.refunded',
  'pix.charge.paid',
  'pix.charge.expired',
  'pix.charge.refunded',
  'tev.in.received',
  'tev.out.succeeded',
  'tev.out.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface OutboxEvent {
  tenantId: string;
  /** The account the event belongs to; its Pix account's webhooks receive it. */
  accountId: string;
  pixAccountId: string;
  type: EventType;
  data: Record<string, unknown>;
}

/** Writes events in the caller's transaction: an event exists exactly when the change that caused it committed. */
export async function enqueueEvents(em: EntityManager, events: OutboxEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newUuid());
  await em.execute(
    `insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
     values ${events.map(() => '(?, ?, ?, ?, ?, ?::jsonb)').join(', ')}`,
    events.flatMap((e, i) => [ids[i], e.tenantId, e.accountId, e.pixAccountId, e.type, JSON.stringify(e.data)]),
  );
  return ids;
}
