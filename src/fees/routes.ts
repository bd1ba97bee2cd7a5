import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { feeScheduleOf, feesView } from './service.ts';

export const pixAccountParams = z.object({ accountId: z.string().min(1).max(64).openapi({ description: 'Pix account id' }) });

export function registerFeeRoutes(router: Router, registry: OpenAPIRegistry, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/fees',
    tags: ['Fees'],
    summary: 'The fee schedule in force for a Pix account (cents as strings)',
    auth,
    params: pixAccountParams,
    responses: {
      200: {
        description: 'Fees',
        schema: z
          .object({ pixAccountId: z.string(), tevOutFeeCents: z.string(), tevInFeeCents: z.string(), pixOutFeeCents: z.string(), pixInFeeCents: z.string(), qrCodeOutFeeCents: z.string() })
          .openapi('Fees'),
      },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' },
    },
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: feesView(account.pixAccountId, await feeScheduleOf(a.em, account.id)) };
    },
  });
}
