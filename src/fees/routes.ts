import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { cents, cuid } from '../http/common-schemas.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { feeScheduleOf, feesView } from './service.ts';

export const pixAccountParams = z.object({
  accountId: z.string().min(1).max(64).openapi({ description: "The Pix account id (`pixAccountId` of the holder's accounts)", example: 'pk4m9q2x7v1c8n3b6z0w5r2t' }),
});

export function registerFeeRoutes(router: Router, registry: OpenAPIRegistry, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/fees',
    operationId: 'getFees',
    tags: ['Fees'],
    summary: 'The fee schedule in force for a Pix account (cents as strings)',
    auth,
    params: pixAccountParams,
    responses: {
      200: {
        description: 'Fees',
        schema: z
          .object({
            pixAccountId: cuid('pk4m9q2x7v1c8n3b6z0w5r2t'),
            tevOutFeeCents: cents('0').openapi({ description: 'Paid by the source of a TEV' }),
            tevInFeeCents: cents('0').openapi({ description: 'Paid by the destination of a TEV' }),
            pixOutFeeCents: cents('150').openapi({ description: 'A Pix payment by key' }),
            pixInFeeCents: cents('0').openapi({ description: 'An incoming Pix or a paid charge' }),
            qrCodeOutFeeCents: cents('150').openapi({ description: 'A Pix payment by QR Code' }),
          })
          .openapi('Fees'),
        example: { pixAccountId: 'pk4m9q2x7v1c8n3b6z0w5r2t', tevOutFeeCents: '0', tevInFeeCents: '0', pixOutFeeCents: '150', pixInFeeCents: '0', qrCodeOutFeeCents: '150' },
      },
    },
    raises: [scopedAccount, feeScheduleOf],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: feesView(account.pixAccountId, await feeScheduleOf(a.em, account.id)) };
    },
  });
}
