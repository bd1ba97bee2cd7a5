import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute } from '../http/route.ts';
import type { Services } from '../services.ts';
import { documentSchema } from '../shared/documents.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { freeText, z } from '../shared/zod.ts';
import { receivePix } from './incoming.ts';

/** The simulated payer bank of sandbox incoming Pix. */
export const SANDBOX_PAYER = { ispb: '99999999', institution: 'Banco Sandbox S.A.', branch: '0001', account: '9999999' };

export function registerPixSandboxRoutes(router: Router, registry: OpenAPIRegistry, { orm }: Services): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/sandbox/pix/incoming',
    tags: ['Sandbox'],
    summary: 'Sandbox: credit an account with an incoming Pix (same ledger path and pix.in.received event as production)',
    headers: tenantHeaders,
    body: z
      .object({
        accountId: z.uuid(),
        amountCents: centsAmountSchema.openapi({ example: '10000' }),
        payerName: freeText().trim().min(1).max(140),
        payerDocument: documentSchema,
      })
      .openapi('SandboxIncomingPix'),
    responses: {
      201: {
        description: 'Credited',
        schema: z.object({ movementId: z.string(), endToEndId: z.string(), amountCents: z.string(), feeCents: z.string(), balanceAfterCents: z.string() }),
      },
      404: { description: 'No such account in this tenant' },
      422: { description: 'ACCOUNT_NOT_APPROVED or AMOUNT_BELOW_RECEIVE_FEE' },
    },
    async handler({ headers, body }) {
      const received = await receivePix(orm.em.fork(), {
        tenantId: headers['x-tenant-id'],
        accountId: body.accountId,
        amountCents: body.amountCents,
        payer: { ...SANDBOX_PAYER, name: body.payerName, document: body.payerDocument },
      });
      return { status: 201, body: received };
    },
  });
}
