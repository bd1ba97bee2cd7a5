import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { EVENT_TYPES } from '../events/outbox.ts';
import { pixAccountParams } from '../fees/routes.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { Services } from '../services.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { disableEndpoint, listEndpoints, registerEndpoint } from './registry.ts';

const eventType = z.string().refine((e): e is (typeof EVENT_TYPES)[number] => (EVENT_TYPES as readonly string[]).includes(e), {
  error: (issue) => `unknown event type "${String(issue.input)}"; allowed: ${EVENT_TYPES.join(', ')}`,
});

const WebhookRecord = z
  .object({
    id: z.string(),
    pixAccountId: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    coreEndpointId: z.string().nullable(),
    enabled: z.boolean(),
    createdAt: z.string().openapi({ description: 'ISO 8601 with the -03:00 offset' }),
  })
  .openapi('Webhook');

export function registerWebhookRoutes(router: Router, registry: OpenAPIRegistry, { config, temporal }: Services, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/webhooks',
    tags: ['Webhooks'],
    summary: 'Register an HTTPS endpoint for events of a Pix account (the event list is fixed at registration)',
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: pixAccountParams,
    body: z
      .object({
        url: z
          .url({ protocol: /^https$/, error: 'must be an https:// URL' })
          .max(2048),
        events: z.array(eventType).min(1, 'subscribe to at least one event type').transform((e) => [...new Set(e)]),
        authToken: z.string().min(1, 'the authToken is required').max(512).openapi({ description: 'Your secret, at least 32 characters recommended; sent back as Authorization on every delivery' }),
      })
      .openapi('WebhookRegistration'),
    responses: {
      201: { description: 'Registered (a retry with the same Idempotency-Key and body returns the original record)', schema: WebhookRecord.extend({ authToken: z.string() }) },
      400: { description: 'VALIDATION_ERROR (http URL, unknown event, missing authToken) or WEBHOOK_URL_NOT_ALLOWED' },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' },
      409: { description: 'IDEMPOTENCY_KEY_REUSED' },
    },
    async handler({ auth: a, params, headers, body }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 201, body: await registerEndpoint(a.em, config, account, headers['idempotency-key'], body) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/webhooks',
    tags: ['Webhooks'],
    summary: "List a Pix account's webhook endpoints, newest first (no authToken)",
    auth,
    params: pixAccountParams,
    query: pageQuery,
    responses: {
      200: {
        description: 'Endpoints, including deleted ones (enabled false)',
        schema: z.object({ webhooks: z.array(WebhookRecord), pagination: z.object({ limit: z.number(), nextCursor: z.string().nullable(), hasMore: z.boolean() }) }),
      },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' },
    },
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await listEndpoints(a.em, config.KEY_PEPPER, account, query.limit, query.cursor) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: '/v1/pix-accounts/:accountId/webhooks/:webhookId',
    tags: ['Webhooks'],
    summary: 'Delete (disable) an endpoint: delivery stops at once, retries included; the record stays listed',
    auth,
    params: pixAccountParams.extend({ webhookId: z.string().min(1).max(64) }),
    responses: { 200: { description: 'Disabled', schema: z.object({ id: z.string(), enabled: z.literal(false) }) }, 403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' } },
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await disableEndpoint(a.em, temporal.client, account, params.webhookId) };
    },
  });
}
