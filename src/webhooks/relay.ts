import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import { SearchAttributes } from '../temporal/search-attributes.ts';
import { deliveryWorkflowId, webhookDeliveryWorkflow, type DeliveryInput } from '../../workflows/webhook-delivery.ts';

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
 * Moves committed events from the outbox to delivery workflows: one delivery row per (event, subscribed endpoint),
 * then one workflow per delivery with a deterministic id, so an event is never enqueued twice even when several
 * workers relay at once (rows are claimed with SKIP LOCKED). Woken by NOTIFY on insert; sweeps every second.
 */
export function startOutboxRelay(orm: Orm, client: Client, config: Config, logger: Logger): Relay {
  let stopped = false;
  let wake: (() => void) | undefined;
  let running: Promise<void> = Promise.resolve();
  const listener = new pg.Client({ connectionString: config.DATABASE_URL });

  async function fanOut(): Promise<number> {
    return orm.em.fork().transactional(async (em) => {
      const events = await em.execute<{ id: string }[]>(
        'select id from event_outbox where dispatched_at is null order by created_at limit ? for update skip locked',
        [BATCH],
      );
      if (events.length === 0) return 0;
      const ids = events.map((e) => e.id);
      // Subscribers when the event was created: an endpoint registered later does not receive it.
      await em.execute(
        `insert into webhook_delivery (id, event_id, endpoint_id, status)
         select gen_random_uuid()::text, ev.id, e.id, 'PENDING'
           from event_outbox ev
           join webhook_endpoint e on e.account_id = ev.account_id and e.enabled and ev.type = any(e.events) and e.created_at <= ev.created_at
          where ev.id in (?)
         on conflict (event_id, endpoint_id) do nothing`,
        [ids],
      );
      await em.execute('update event_outbox set dispatched_at = now() where id in (?)', [ids]);
      return ids.length;
    });
  }

  async function startDeliveries(): Promise<number> {
    const em = orm.em.fork();
    const pending = await em.execute<{ id: string; event_id: string; endpoint_id: string; tenant_id: string; account_id: string }[]>(
      `select d.id, d.event_id, d.endpoint_id, e.tenant_id, e.account_id
         from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id
        where d.workflow_started_at is null and d.status = 'PENDING'
        order by d.created_at limit ?`,
      [BATCH],
    );
    await Promise.all(
      pending.map(async (d) => {
        try {
          await client.workflow.start(webhookDeliveryWorkflow, {
            workflowId: deliveryWorkflowId(d.event_id, d.endpoint_id),
            taskQueue: config.TEMPORAL_TASK_QUEUE,
            args: [{ deliveryId: d.id, eventId: d.event_id, endpointId: d.endpoint_id, retry: retrySchedule(config) }],
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            typedSearchAttributes: [
              { key: SearchAttributes.TenantId, value: d.tenant_id },
              { key: SearchAttributes.AccountId, value: d.account_id },
              { key: SearchAttributes.EventId, value: d.event_id },
              { key: SearchAttributes.WebhookId, value: d.endpoint_id },
            ],
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
      }),
    );
    if (pending.length > 0) await em.execute('update webhook_delivery set workflow_started_at = now() where id in (?)', [pending.map((d) => d.id)]);
    return pending.length;
  }

  async function loop() {
    while (!stopped) {
      try {
        let busy = true;
        while (busy && !stopped) busy = (await fanOut()) + (await startDeliveries()) > 0;
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
