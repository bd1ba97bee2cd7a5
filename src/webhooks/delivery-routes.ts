import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { pixAccountParams } from '../fees/routes.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { paginated, utcDateTime, uuid } from '../http/common-schemas.ts';
import { EVENT_TYPES } from '../events/catalog.ts';
import type { PlatformContext } from '../platform-context.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { deliveryLogPage, redeliverForApiKey } from './delivery.ts';

const Attempt = z
  .object({
    attempt: z.number().int().min(1).openapi({ description: 'The attempt number within the delivery (all rounds)', example: 1 }),
    round: z.number().int().min(1).openapi({ description: '1, then one more for each redelivery', example: 1 }),
    attemptedAt: utcDateTime(),
    statusCode: z.number().int().nullable().openapi({ description: "The receiver's HTTP status; null when it did not answer", example: 200 }),
    durationMs: z.number().int().min(0).openapi({ example: 42 }),
    error: z.string().nullable().openapi({ description: 'Why the attempt failed; null for a 2xx', example: null }),
  })
  .openapi('WebhookAttempt');

const Delivery = z
  .object({
    eventId: uuid('0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d').openapi({ description: 'The `webhook-id` header of every attempt' }),
    eventType: z.enum(EVENT_TYPES),
    status: z.enum(['PENDING', 'DELIVERED', 'FAILED', 'CANCELLED']),
    round: z.number().int().min(1).openapi({ example: 1 }),
    createdAt: utcDateTime(),
    finishedAt: utcDateTime().nullable(),
    attempts: z.array(Attempt),
  })
  .openapi('WebhookDelivery');

const deliveryExample = {
  eventId: '0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d',
  eventType: 'pix.in.received' as const,
  status: 'DELIVERED' as const,
  round: 1,
  createdAt: '2026-11-22T13:45:07.123Z',
  finishedAt: '2026-11-22T13:45:07.180Z',
  attempts: [{ attempt: 1, round: 1, attemptedAt: '2026-11-22T13:45:07.138Z', statusCode: 200, durationMs: 42, error: null }],
};

const deliveryParams = pixAccountParams.extend({ webhookId: z.string().min(1).max(64) });

/** The integrator's delivery log: every delivery of an endpoint with its attempts, and redelivery of one event. */
export function registerWebhookDeliveryRoutes(router: Router, registry: OpenAPIRegistry, { config, temporal }: PlatformContext, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/webhooks/:webhookId/deliveries',
    operationId: 'listWebhookDeliveries',
    tags: ['Webhooks'],
    summary: "An endpoint's deliveries, newest first, each with every attempt (time, status code, duration, error)",
    auth,
    params: deliveryParams,
    query: pageQuery,
    responses: {
      200: {
        description: 'Deliveries',
        schema: paginated('deliveries', Delivery),
        example: { deliveries: [deliveryExample], pagination: { limit: 20, nextCursor: null, hasMore: false } },
      },
    },
    raises: [scopedAccount, deliveryLogPage],
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await deliveryLogPage(a.em, config.KEY_PEPPER, account, params.webhookId, query) };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/webhooks/:webhookId/deliveries/:eventId/redeliver',
    operationId: 'redeliverWebhookEvent',
    tags: ['Webhooks'],
    summary: 'Deliver one event to the endpoint again: a new round of attempts with the same webhook-id',
    description:
      'Starts a new round only when the delivery is not PENDING: while a round is still pending (its attempts go on), ' +
      'the call answers that round and starts nothing, so repeating it is harmless. Calls are limited per API key and ' +
      'endpoint (`WEBHOOK_REDELIVER_MAX_PER_MINUTE`, 60 a minute by default); more are 429 `RATE_LIMITED`.',
    auth,
    params: deliveryParams.extend({ eventId: z.uuid() }),
    responses: {
      202: {
        description: 'Redelivery scheduled, or the round still pending',
        schema: z
          .object({
            eventId: uuid('0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d'),
            status: z.literal('PENDING'),
            round: z.number().int().min(1).openapi({ description: 'The new round, or the pending one', example: 2 }),
          })
          .openapi('RedeliveryScheduled'),
        example: { eventId: '0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d', status: 'PENDING', round: 2 },
      },
    },
    raises: [scopedAccount, redeliverForApiKey],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      const done = await redeliverForApiKey(a.em, temporal.client, config, { apiKeyId: a.principal.apiKeyId, accountId: account.id }, params.webhookId, params.eventId);
      return { status: 202, body: { eventId: done.eventId, status: done.status, round: done.round } };
    },
  });
}
