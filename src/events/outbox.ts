import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared } from '../persistence/prepared.ts';
import { newUuid } from '../shared/ids.ts';
import type { TypedEvent } from './catalog.ts';

/** An event and whom it belongs to; its type and data are one of the catalog's pairs. */
export type OutboxEvent = TypedEvent & {
  tenantId: string;
  /** The account the event belongs to; its Pix account's webhooks receive it. */
  accountId: string;
  pixAccountId: string;
};

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

/** A relay's position in the outbox: the last event it moved, in commit order. */
export interface OutboxPosition {
  txid: string;
  seq: string;
}

/** The relay's cursor, locked for this transaction; null while another instance of the relay holds it. */
export async function lockRelayCursor(em: EntityManager, relay: string): Promise<OutboxPosition | null> {
  const [cursor] = await em.execute<OutboxPosition[]>(`select txid::text, seq::text from event_relay_cursor where relay = ? for update skip locked`, [relay]);
  return cursor ?? null;
}

/**
 * An event `e` past a position and of a transaction every snapshot sees as committed (below the oldest running one): an
 * event of a transaction still running cannot be passed over by the cursor.
 */
const committedPast = (txid: string, seq: string) => `(e.txid, e.seq) > (${txid}, ${seq}) and e.txid < pg_snapshot_xmin(pg_current_snapshot())`;

/** Events after `cursor` that may be moved (`committedPast`), in commit order. */
export async function committedEventsAfter(em: EntityManager, cursor: OutboxPosition, limit: number): Promise<(OutboxPosition & { id: string })[]> {
  // Ordered by the columns, not by their text (named alike in the select list): 100000 sorts before 99999 as text.
  return em.execute<(OutboxPosition & { id: string })[]>(
    `select e.id, e.txid::text as txid, e.seq::text as seq from event_outbox e
      where ${committedPast('?::xid8', '?::bigint')}
      order by e.txid, e.seq limit ?`,
    [cursor.txid, cursor.seq, limit],
  );
}

/**
 * Whether a relay's look would find an event to move: one statement outside any transaction, without the cursor's lock
 * (the look that follows takes it and reads again). An idle relay asks only this, where a look is a transaction of four
 * statements.
 */
export async function hasCommittedEventsAfterCursor(em: EntityManager, relay: string): Promise<boolean> {
  const [row] = await queryPrepared<{ pending: boolean }>(
    em,
    'outbox-pending',
    `select exists (select 1 from event_relay_cursor c
                     cross join lateral (select 1 from event_outbox e where ${committedPast('c.txid', 'c.seq')}
                                          order by e.txid, e.seq limit 1) e
                    where c.relay = $1) as pending`,
    [relay],
  );
  return row?.pending ?? false;
}

export async function moveRelayCursor(em: EntityManager, relay: string, to: OutboxPosition): Promise<void> {
  await em.execute(`update event_relay_cursor set txid = ?::xid8, seq = ?::bigint, moved_at = now() where relay = ?`, [to.txid, to.seq, relay]);
}
