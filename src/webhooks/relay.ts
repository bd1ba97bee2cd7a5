import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import { insertHandOffs } from '../handoff/store.ts';
import { deliveryStart, type DeliveryInput } from '../../workflows/contracts/webhook-delivery.ts';

const BATCH = 500;
const SWEEP_MS = 1000;

export interface Relay {
  stop(): Promise<void>;
}

export const retrySchedule = (config: Config): DeliveryInput['retry'] => ({
  initialMs: config.WEBHOOK_RETRY_INITIAL_MS,
  maxMs: config.WEBHOOK_RETRY_MAX_MS,
  windowMs: config.WEBHOOK_RETRY_WINDOW_MS,
});

/**
 * Moves committed events from the outbox to deliveries: one delivery row per (event, subscribed endpoint) and, in the
 * same transaction, the hand-off of its delivery workflow, which this worker's reconciler starts at once (`wake`).
 * Rows are claimed with SKIP LOCKED and ids are deterministic, so several workers may relay at once.
 * Woken by NOTIFY on insert; sweeps every second.
 */
export function startOutboxRelay(orm: Orm, config: Config, logger: Logger, startsRecorded: () => void): Relay {
  let stopped = false;
  let wake: (() => void) | undefined;
  let running: Promise<void> = Promise.resolve();
  const listener = new pg.Client({ connectionString: config.DATABASE_URL });

  async function fanOut(): Promise<number> {
    const relayed = await orm.em.fork().transactional(async (em) => {
      const events = await em.execute<{ id: string }[]>(
        'select id from event_outbox where dispatched_at is null order by created_at limit ? for update skip locked',
        [BATCH],
      );
      if (events.length === 0) return 0;
      const ids = events.map((e) => e.id);
      // Subscribers when the event was created: an endpoint registered later does not receive it.
      const deliveries = await em.execute<{ id: string; event_id: string; endpoint_id: string; tenant_id: string; account_id: string }[]>(
        `with created as (
           insert into webhook_delivery (id, event_id, endpoint_id, status)
           select gen_random_uuid()::text, ev.id, e.id, 'PENDING'
             from event_outbox ev
             join webhook_endpoint e on e.account_id = ev.account_id and e.enabled and ev.type = any(e.events) and e.created_at <= ev.created_at
            where ev.id in (?)
           on conflict (event_id, endpoint_id) do nothing
           returning id, event_id, endpoint_id)
         select c.id, c.event_id, c.endpoint_id, e.tenant_id, e.account_id from created c join webhook_endpoint e on e.id = c.endpoint_id`,
        [ids],
      );
      const retry = retrySchedule(config);
      await insertHandOffs(
        em,
        config.TEMPORAL_TASK_QUEUE,
        deliveries.map((d) => deliveryStart({ deliveryId: d.id, eventId: d.event_id, endpointId: d.endpoint_id, retry, tenantId: d.tenant_id, accountId: d.account_id })),
        { dueNow: true },
      );
      await em.execute('update event_outbox set dispatched_at = now() where id in (?)', [ids]);
      return ids.length;
    });
    if (relayed > 0) startsRecorded();
    return relayed;
  }

  async function loop() {
    while (!stopped) {
      try {
        let busy = true;
        while (busy && !stopped) busy = (await fanOut()) > 0;
      } catch (err) {
        logger.error({ err }, 'outbox relay failed; retrying');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SWEEP_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  listener.on('notification', () => wake?.());
  listener.on('error', (err) => logger.warn({ err }, 'outbox listener lost; sweeping only'));
  void listener
    .connect()
    .then(() => listener.query('listen event_outbox'))
    .catch((err: unknown) => logger.warn({ err }, 'outbox listener unavailable; sweeping only'));
  running = loop();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await running;
      await listener.end().catch(() => undefined);
    },
  };
}
