import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { z } from '../shared/zod.ts';
import { actingAccount, pixAccountHeader, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { TevRead, tevReadExample } from './schemas.ts';
import { tevSeenBy } from './visibility.ts';
import { tevReadView } from './responses.ts';

export function registerIntegrationTevRoutes(router: Router, registry: OpenAPIRegistry, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/tev/:id',
    operationId: 'getTev',
    tags: ['TEV'],
    summary: 'Read a transfer from the side of the calling account (direction, fee and counterpart of that side)',
    headers: pixAccountHeader,
    auth,
    params: z.object({ id: z.string().min(1).max(64) }),
    responses: { 200: { description: 'The transfer', schema: TevRead, example: tevReadExample } },
    raises: [actingAccount, tevSeenBy],
    async handler({ auth: a, headers, params }) {
      const account = await actingAccount(a, headers['x-pix-account-id']);
      const tev = await tevSeenBy(a.em, account, params.id);
      return { status: 200, body: tevReadView(tev, account.id) };
    },
  });
}
