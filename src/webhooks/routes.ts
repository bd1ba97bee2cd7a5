import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { EVENT_TYPES } from '../events/catalog.ts';
import { pixAccountParams } from '../fees/routes.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { cuid, offsetDateTime, paginated } from '../http/common-schemas.ts';
import type { PlatformContext } from '../platform-context.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { disableEndpoint, listEndpoints, registerEndpoint, signingSecret } from './registry.ts';

const eventType = z.string().refine((e): e is (typeof EVENT_TYPES)[number] => (EVENT_TYPES as readonly string[]).includes(e), {
  error: (issue) => `unknown event type "${String(issue.input)}"; allowed: ${EVENT_TYPES.join(', ')}`,
}).openapi({ enum: [...EVENT_TYPES] });

/**
 * The endpoint URL, read strictly: `https://` and a host, written out in full (a WHATWG parser forgives `https:host`,
 * `https:///host` and a backslash for `/`, each of which other parsers read differently), and no credentials (they would be
 * stored and listed in clear; the receiver authenticates us with authToken). What is stored and returned is the
 * parser's canonical form, which must parse back to itself.
 */
const webhookUrl = z
  .string()
  .max(2048)
  .transform((raw, ctx) => {
    const refuse = (message: string) => {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    };
    const written = /^https:\/\/([^/?#]+)/i.exec(raw);
    if (!written || /[\\\s\u0000-\u001F\u007F]/.test(raw)) {
      return refuse('must be an https:// URL written out in full: https://, a host, then an optional path (no blanks, control characters or backslashes)');
    }
    if (written[1]!.includes('@')) return refuse('must not carry credentials (user:password@); the receiver checks authToken instead');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refuse('must be a valid https:// URL');
    }
    if (url.protocol !== 'https:' || url.hostname === '' || new URL(url.href).href !== url.href) return refuse('must be a valid https:// URL');
    return url.href;
  })
  .openapi({ type: 'string', format: 'uri', example: 'https://example.com/hooks/pix' });

/** Sent back as the `Authorization` header of every delivery: a header value, so visible ASCII (inner spaces allowed) only. */
const authToken = z
  .string({ error: 'the authToken is required' })
  .min(16, 'at least 16 characters (32 or more recommended)')
  .max(512)
  .regex(/^[\x21-\x7E](?:[\x20-\x7E]*[\x21-\x7E])?$/, 'visible ASCII characters only (inner spaces allowed): no control characters, line breaks or outer blanks')
  .openapi({ description: 'Your secret, 16 to 512 visible ASCII characters (32 or more recommended); sent back as Authorization on every delivery' });

const WebhookRecord = z
  .object({
    id: cuid('wh3k8v1n6m2q9x4z7b0c5r1t'),
    pixAccountId: cuid('pk4m9q2x7v1c8n3b6z0w5r2t'),
    url: z.url().openapi({ description: 'The canonical form of the registered URL', example: 'https://example.com/hooks/pix' }),
    events: z.array(z.enum(EVENT_TYPES)).openapi({ example: ['pix.in.received', 'tev.in.received'] }),
    coreEndpointId: z.string().nullable().openapi({ description: 'The endpoint in the core, when mirrored', example: null }),
    enabled: z.boolean().openapi({ description: 'false once deleted' }),
    createdAt: offsetDateTime().openapi({ description: 'ISO 8601 with the -03:00 offset' }),
  })
  .openapi('Webhook');

const webhookExample = {
  id: 'wh3k8v1n6m2q9x4z7b0c5r1t',
  pixAccountId: 'pk4m9q2x7v1c8n3b6z0w5r2t',
  url: 'https://example.com/hooks/pix',
  events: ['pix.in.received' as const, 'tev.in.received' as const],
  coreEndpointId: null,
  enabled: true,
  createdAt: '2026-11-22T10:45:07.123-03:00',
};
const AUTH_TOKEN_EXAMPLE = 'whsec-test-token-with-at-least-32-characters';

export function registerWebhookRoutes(router: Router, registry: OpenAPIRegistry, { config, temporal }: PlatformContext, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/webhooks',
    operationId: 'registerWebhook',
    tags: ['Webhooks'],
    summary: 'Register an HTTPS endpoint for events of a Pix account (the event list is fixed at registration)',
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: pixAccountParams,
    body: z
      .object({
        url: webhookUrl,
        events: z.array(eventType).min(1, 'subscribe to at least one event type').transform((e) => [...new Set(e)]),
        authToken,
      })
      .openapi('WebhookRegistration'),
    bodyExample: { url: 'https://example.com/hooks/pix', events: ['pix.in.received', 'tev.in.received'], authToken: AUTH_TOKEN_EXAMPLE },
    responses: {
      201: {
        description: 'Registered (a retry with the same Idempotency-Key and body returns the original record)',
        schema: WebhookRecord.extend({
          authToken: z.string().openapi({ description: 'Echoed once, here', example: AUTH_TOKEN_EXAMPLE }),
          signingSecret: z
            .string()
            .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
            .openapi({
              description: 'The signature key in the Standard Webhooks form: `whsec_` + base64 of the authToken bytes. Give it to a Standard Webhooks library (e.g. `new Webhook(signingSecret)`) to verify deliveries.',
              example: signingSecret(AUTH_TOKEN_EXAMPLE),
            }),
        }).openapi('WebhookCreated'),
        example: { ...webhookExample, authToken: AUTH_TOKEN_EXAMPLE, signingSecret: signingSecret(AUTH_TOKEN_EXAMPLE) },
      },
    },
    raises: [scopedAccount, registerEndpoint],
    async handler({ auth: a, params, headers, body }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 201, body: await registerEndpoint(a.em, config, account, headers['idempotency-key'], body) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/webhooks',
    operationId: 'listWebhooks',
    tags: ['Webhooks'],
    summary: "List a Pix account's webhook endpoints, newest first (no authToken)",
    auth,
    params: pixAccountParams,
    query: pageQuery,
    responses: {
      200: {
        description: 'Endpoints, including deleted ones (enabled false)',
        schema: paginated('webhooks', WebhookRecord),
        example: { webhooks: [webhookExample], pagination: { limit: 20, nextCursor: null, hasMore: false } },
      },
    },
    raises: [scopedAccount],
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await listEndpoints(a.em, config.KEY_PEPPER, account, query.limit, query.cursor) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: '/v1/pix-accounts/:accountId/webhooks/:webhookId',
    operationId: 'deleteWebhook',
    tags: ['Webhooks'],
    summary: 'Delete (disable) an endpoint: delivery stops at once, retries included; the record stays listed',
    auth,
    params: pixAccountParams.extend({ webhookId: z.string().min(1).max(64) }),
    responses: {
      200: {
        description: 'Disabled; no attempt of it is in flight any more',
        schema: z.object({ id: cuid('wh3k8v1n6m2q9x4z7b0c5r1t'), enabled: z.literal(false) }).openapi('WebhookDeleted'),
        example: { id: 'wh3k8v1n6m2q9x4z7b0c5r1t', enabled: false },
      },
    },
    raises: [scopedAccount, disableEndpoint],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await disableEndpoint(a.em, temporal.client, config, account, params.webhookId) };
    },
  });
}
