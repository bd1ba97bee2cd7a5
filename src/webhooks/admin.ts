import { command } from '../admin/command.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { z } from '../shared/zod.ts';
import { startWorkflow } from '../temporal/workflow-start.ts';
import { deliveryStart } from '../../workflows/contracts/webhook-delivery.ts';
import { retrySchedule } from './relay.ts';

export const webhookCommands = {
  'webhook:deliveries': command({
    summary: 'List the deliveries of an event or of an endpoint, with every attempt (time, status code, duration, error)',
    usage: '(--event E | --webhook W) [--limit 50]',
    flags: z.object({ event: z.uuid().optional(), webhook: z.string().min(1).optional(), limit: z.coerce.number().int().min(1).max(500).default(50) }),
    async run({ em }, f) {
      if (!f.event && !f.webhook) throw new AppError(400, 'USAGE_ERROR', 'Give --event or --webhook');
      const deliveries = await em.execute<Record<string, unknown>[]>(
        `select d.id, d.event_id as "eventId", d.endpoint_id as "webhookId", ev.type as "eventType", d.status, d.attempts, d.created_at as "createdAt", d.finished_at as "finishedAt",
                coalesce((select json_agg(json_build_object('attempt', a.attempt, 'attemptedAt', a.attempted_at, 'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error) order by a.attempted_at)
                            from webhook_attempt a where a.delivery_id = d.id), '[]') as "attemptLog"
           from webhook_delivery d join event_outbox ev on ev.id = d.event_id
          where ${f.event ? 'd.event_id = ?' : 'd.endpoint_id = ?'}
          order by d.created_at desc limit ?`,
        [f.event ?? f.webhook, f.limit],
      );
      return { deliveries };
    },
  }),
  'webhook:redeliver': command({
    summary: 'Deliver one event to one endpoint again (a new delivery run with the same webhook-id)',
    usage: '--event E --webhook W',
    // The reset to PENDING must be committed before the run reads it.
    transactional: false,
    flags: z.object({ event: z.uuid(), webhook: z.string().min(1) }),
    async run({ em, config, temporal }, f) {
      const [d] = await em.execute<{ id: string; enabled: boolean; tenant_id: string; account_id: string }[]>(
        `update webhook_delivery d set status = 'PENDING', finished_at = null
           from webhook_endpoint e where e.id = d.endpoint_id and d.event_id = ? and d.endpoint_id = ?
         returning d.id, e.enabled, e.tenant_id, e.account_id`,
        [f.event, f.webhook],
      );
      if (!d) throw notFound('Delivery');
      if (!d.enabled) throw new AppError(409, 'WEBHOOK_DISABLED', 'The endpoint is deleted; register it again to receive events');
      // The same id as the first delivery, so deleting the endpoint cancels a redelivery too; its run was closed.
      const start = deliveryStart({ deliveryId: d.id, eventId: f.event, endpointId: f.webhook, retry: retrySchedule(config), tenantId: d.tenant_id, accountId: d.account_id });
      const { client } = await temporal();
      await startWorkflow(client, config.TEMPORAL_TASK_QUEUE, { ...start, reusePolicy: 'ALLOW_DUPLICATE' });
      return { deliveryId: d.id, workflowId: start.workflowId };
    },
  }),
};
