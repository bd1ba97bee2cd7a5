import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Router } from 'express';
import type { Account } from '../accounts/entities.ts';
import { pixAccountParams } from '../fees/routes.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { Services } from '../services.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { decodeCursor, pageOf, pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { deliveryLog } from './delivery-store.ts';
import { redeliver } from './delivery.ts';

const Attempt = z
  .object({
    attempt: z.number().int().openapi({ description: 'The attempt number within the delivery (all rounds)' }),
    round: z.number().int().openapi({ description: '1, then one more for each redelivery' }),
    attemptedAt: z.string().openapi({ format: 'date-time' }),
    statusCode: z.number().int().nullable().openapi({ description: "The receiver's HTTP status; null when it did not answer" }),
    durationMs: z.number().int(),
    error: z.string().nullable().openapi({ description: 'Why the attempt failed; null for a 2xx' }),
  })
  .openapi('WebhookAttempt');

const Delivery = z
  .object({
    eventId: z.uuid().openapi({ description: 'The `webhook-id` header of every attempt' }),
    eventType: z.string(),
    status: z.enum(['PENDING', 'DELIVERED', 'FAILED', 'CANCELLED']),
    round: z.number().int(),
    createdAt: z.string().openapi({ format: 'date-time' }),
    finishedAt: z.string().nullable().openapi({ format: 'date-time' }),
    attempts: z.array(Attempt),
  })
  .openapi('WebhookDelivery');

const deliveryParams = pixAccountParams.extend({ webhookId: z.string().min(1).max(64) });

/** An endpoint of the account the key acts for; any other is 404, whether or not it exists. */
async function endpointOf(em: EntityManager, account: Account, webhookId: string): Promise<{ id: string; enabled: boolean }> {
  const [row] = await em.execute<{ id: string; enabled: boolean }[]>('select id, enabled from webhook_endpoint where id = ? and account_id = ?', [webhookId, account.id]);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/** The integrator's delivery log: every delivery of an endpoint with its attempts, and redelivery of one event. */
export function registerWebhookDeliveryRoutes(router: Router, registry: OpenAPIRegistry, { config, temporal }: Services, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/webhooks/:webhookId/deliveries',
    tags: ['Webhooks'],
    summary: "An endpoint's deliveries, newest first, each with every attempt (time, status code, duration, error)",
    auth,
    params: deliveryParams,
    query: pageQuery,
    responses: {
      200: { description: 'Deliveries', schema: z.object({ deliveries: z.array(Delivery), pagination: z.object({ limit: z.number(), nextCursor: z.string().nullable(), hasMore: z.boolean() }) }) },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' },
      404: { description: 'No such endpoint on this account' },
    },
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      const endpoint = await endpointOf(a.em, account, params.webhookId);
      const scope = `deliveries:${endpoint.id}`;
      const after = query.cursor === undefined ? null : decodeCursor(config.KEY_PEPPER, scope, query.cursor);
      const rows = await deliveryLog(a.em, { endpointId: endpoint.id }, query.limit + 1, after);
      const { items, pagination } = pageOf(rows, query.limit, config.KEY_PEPPER, scope);
      const deliveries = items.map((d) => ({
        eventId: d.event_id,
        eventType: d.event_type,
        status: d.status,
        round: d.round,
        createdAt: d.created_at,
        finishedAt: d.finished_at,
        attempts: d.attempt_log,
      }));
      return { status: 200, body: { deliveries, pagination } };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/webhooks/:webhookId/deliveries/:eventId/redeliver',
    tags: ['Webhooks'],
    summary: 'Deliver one event to the endpoint again: a new round of attempts with the same webhook-id',
    auth,
    params: deliveryParams.extend({ eventId: z.uuid() }),
    responses: {
      202: { description: 'Redelivery scheduled', schema: z.object({ eventId: z.uuid(), status: z.literal('PENDING'), round: z.number().int() }) },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' },
      404: { description: 'No such endpoint on this account, or no delivery of this event to it' },
      409: { description: 'WEBHOOK_DISABLED: the endpoint is deleted' },
    },
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      const endpoint = await endpointOf(a.em, account, params.webhookId);
      if (!endpoint.enabled) throw new AppError(409, 'WEBHOOK_DISABLED', 'The endpoint is deleted; register it again to receive events');
      const done = await redeliver(a.em, temporal.client, config, { id: endpoint.id, tenantId: account.tenantId, accountId: account.id }, params.eventId);
      return { status: 202, body: { eventId: done.eventId, status: done.status, round: done.round } };
    },
  });
}
