import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import { insertHandOffs } from '../handoff/store.ts';
import { startPollLoop, type PollLoop } from '../shared/poll-loop.ts';
import { webhookEndpointWake } from '../../workflows/contracts/webhook-endpoint.ts';

const BATCH = 500;
/** Committed events wait at most this long: a look is one index range scan past the cursor. */
const SWEEP_MS = 100;

export type Relay = PollLoop;

/**
 * Moves committed events from the outbox to deliveries: one delivery row per (event, subscribed endpoint), due at
 * once, and in the same transaction one wake per endpoint touched (the hand-off of a signal-with-start to the
 * endpoint's workflow), which this worker's reconciler sends at once. It follows
 * the event log with a cursor (migration 1100), which one relay at a time holds, so several workers may run it. It
 * polls: a NOTIFY from every posting would serialise all committing transactions on one lock.
 */
export function startOutboxRelay(orm: Orm, config: Config, logger: Logger, startsRecorded: () => void): Relay {

  async function fanOut(): Promise<number> {
    const relayed = await orm.em.fork().transactional(async (em) => {
      // One relay moves the cursor at a time; the others find it locked and wait for their next look.
      const [cursor] = await em.execute<{ txid: string; seq: string }[]>(
        `select txid::text, seq::text from event_relay_cursor where relay = 'webhooks' for update skip locked`,
      );
      if (!cursor) return 0;
      // Ordered by the columns, not by their text (named alike in the select list): 100000 sorts before 99999 as text.
      const events = await em.execute<{ id: string; txid: string; seq: string }[]>(
        `select e.id, e.txid::text as txid, e.seq::text as seq from event_outbox e
          where (e.txid, e.seq) > (?::xid8, ?::bigint) and e.txid < pg_snapshot_xmin(pg_current_snapshot())
          order by e.txid, e.seq limit ?`,
        [cursor.txid, cursor.seq, BATCH],
      );
      if (events.length === 0) return 0;
      // Subscribers when the event was created: an endpoint registered later does not receive it.
      const endpoints = await em.execute<{ endpoint_id: string; tenant_id: string; account_id: string }[]>(
        `with created as (
           insert into webhook_delivery (id, event_id, endpoint_id, status, next_attempt_at)
           select gen_random_uuid()::text, ev.id, e.id, 'PENDING', now()
             from event_outbox ev
             join webhook_endpoint e on e.account_id = ev.account_id and e.enabled and ev.type = any(e.events) and e.created_at <= ev.created_at
            where ev.id in (?)
           on conflict (event_id, endpoint_id) do nothing
           returning endpoint_id)
         select distinct c.endpoint_id, e.tenant_id, e.account_id from created c join webhook_endpoint e on e.id = c.endpoint_id`,
        [events.map((e) => e.id)],
      );
      // One wake per endpoint and batch of events, not one per event.
      await insertHandOffs(
        em,
        config.TEMPORAL_TASK_QUEUE,
        endpoints.map((e) => webhookEndpointWake({ endpointId: e.endpoint_id, tenantId: e.tenant_id, accountId: e.account_id })),
        { dueNow: true },
      );
      const last = events[events.length - 1]!;
      await em.execute(`update event_relay_cursor set txid = ?::xid8, seq = ?::bigint, moved_at = now() where relay = 'webhooks'`, [last.txid, last.seq]);
      return events.length;
    });
    if (relayed > 0) startsRecorded();
    return relayed;
  }

  return startPollLoop(SWEEP_MS, async () => (await fanOut()) > 0, (err) => logger.error({ err }, 'outbox relay failed; retrying'));
}
