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

/** A relay's position in the outbox: the last event it moved, in (transaction id, sequence) order. */
export interface OutboxPosition {
  txid: string;
  seq: string;
}

/**
 * Where a relay stands: its position, and the transactions below it that were still running when it moved there. Every
 * other transaction below the position had ended then, and its events were moved.
 */
interface RelayCursor extends OutboxPosition {
  running: string[];
}

/** The relay's cursor, locked for this transaction; null while another instance of the relay holds it. */
async function lockRelayCursor(em: EntityManager, relay: string): Promise<RelayCursor | null> {
  const [cursor] = await em.execute<RelayCursor[]>(
    `select txid::text, seq::text, running::text[] as running from event_relay_cursor where relay = ? for update skip locked`,
    [relay],
  );
  return cursor ?? null;
}

interface TakenRow extends OutboxPosition {
  id: string;
  ahead: boolean;
  /** The transactions running in the statement's snapshot. */
  running: string[];
}

/**
 * Takes the events a relay has not moved yet, in its transaction, and moves its cursor past them; null while another
 * instance of the relay holds the cursor. Events of committed transactions past the cursor (at most `limit`, in
 * (txid, seq) order) and every event of the transactions it passed while they ran that have committed since. A
 * transaction still running is passed over, not waited for: its id is kept with the cursor, and its events are taken
 * once it commits (an aborted one leaves none). So one long transaction, anywhere in the server, holds back nothing but
 * its own events. Both reads and the snapshot's running transactions come from one statement, so from one snapshot:
 * a transaction that commits meanwhile is either read or kept.
 */
export async function takeCommittedEvents(em: EntityManager, relay: string, limit: number): Promise<{ id: string }[] | null> {
  const cursor = await lockRelayCursor(em, relay);
  if (!cursor) return null;
  // Ordered by the columns, not by their text (named alike in the select list): 100000 sorts before 99999 as text.
  const rows = await em.execute<TakenRow[]>(
    `select e.id, e.txid::text as txid, e.seq::text as seq, e.ahead, s.running
       from (select a.id, a.txid, a.seq, true as ahead
               from (select id, txid, seq from event_outbox where (txid, seq) > (?::xid8, ?::bigint) order by txid, seq limit ?) a
             union all
             select b.id, b.txid, b.seq, false
               from unnest(?::xid8[]) r(txid) join event_outbox b on b.txid = r.txid) e
      cross join (select array(select x::text from pg_snapshot_xip(pg_current_snapshot()) x) as running) s
      order by e.ahead, e.txid, e.seq`,
    [cursor.txid, cursor.seq, limit, `{${cursor.running.join(',')}}`],
  );
  if (rows.length === 0) return [];
  const last = rows.findLast((r) => r.ahead);
  const to = last ? { txid: last.txid, seq: last.seq } : cursor;
  const running = rows[0]!.running.filter((txid) => BigInt(txid) < BigInt(to.txid));
  await em.execute(`update event_relay_cursor set txid = ?::xid8, seq = ?::bigint, running = ?::xid8[], moved_at = now() where relay = ?`, [
    to.txid,
    to.seq,
    `{${running.join(',')}}`,
    relay,
  ]);
  return rows.map((r) => ({ id: r.id }));
}

/**
 * Whether a relay's look would find an event to move: one statement outside any transaction, without the cursor's lock
 * (the look that follows takes it and reads again). An idle relay asks only this, where a look is a transaction of four
 * statements. Written as index lookups (an ordered first row, one probe per running transaction): as plain `exists`
 * PostgreSQL scanned the whole outbox, 20 ms for 28,000 events, ten times a second.
 */
export async function hasCommittedEventsAfterCursor(em: EntityManager, relay: string): Promise<boolean> {
  const [row] = await queryPrepared<{ pending: boolean }>(
    em,
    'outbox-pending',
    `select exists (select 1 from event_relay_cursor c
                     cross join lateral (select 1 from event_outbox e where (e.txid, e.seq) > (c.txid, c.seq)
                                          order by e.txid, e.seq limit 1) e
                    where c.relay = $1)
         or exists (select 1 from event_relay_cursor c, unnest(c.running) r(txid)
                     cross join lateral (select 1 from event_outbox e where e.txid = r.txid limit 1) e
                    where c.relay = $1) as pending`,
    [relay],
  );
  return row?.pending ?? false;
}
