import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { cents, cuid, pixEndToEndId, tenantHeaders, utcDateTime } from '../http/common-schemas.ts';
import { defineRoute } from '../http/route.ts';
import { payChargeAndWake } from '../pix/charge-settlement.ts';
import type { PlatformContext } from '../platform-context.ts';
import { documentSchema } from '../shared/documents.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { freeText, z } from '../shared/zod.ts';
import { SANDBOX_PAYER } from './payer-bank.ts';

/** An external payer (the simulated bank of SANDBOX_PAYER) pays a charge by its txid, through the same `payCharge` as every payment of a charge (`payChargeAndWake`). */
export function registerChargePayerRoutes(router: Router, registry: OpenAPIRegistry, { orm, temporal, config }: PlatformContext): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/sandbox/pix/charges/:txid/pay',
    operationId: 'sandboxPayCharge',
    tags: ['Sandbox'],
    summary: 'Sandbox: pay an ACTIVE charge as an external payer (same ledger path as an incoming Pix; event pix.charge.paid)',
    headers: tenantHeaders,
    params: z.object({ txid: z.string().regex(/^[A-Za-z0-9]{26,35}$/, 'txid is 26 to 35 letters and digits') }),
    body: z
      .object({
        payerName: freeText().trim().min(1).max(140),
        payerDocument: documentSchema,
        amountCents: centsAmountSchema
          .optional()
          .openapi({ description: "What the payer sends; default the charge's amount. Any other amount is refused (422)" }),
      })
      .openapi('SandboxChargePayment'),
    bodyExample: { payerName: 'Pagador Sandbox', payerDocument: '11144477735' },
    responses: {
      201: {
        description: 'Paid',
        schema: z
          .object({
            chargeId: cuid('ch5v2n8m1q7w4x0z3b6k9r2t'),
            txid: z.string().regex(/^[A-Za-z0-9]{26,35}$/).openapi({ example: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9' }),
            status: z.literal('PAID'),
            movementId: cuid('m3v8c1x6z9b2n7q4w0k5r8t1'),
            endToEndId: pixEndToEndId(),
            amountCents: cents('5000'),
            feeCents: cents('0').openapi({ description: 'The Pix receive fee' }),
            balanceAfterCents: cents('15000'),
            paidAt: utcDateTime(),
          })
          .openapi('SandboxChargePaid'),
        example: {
          chargeId: 'ch5v2n8m1q7w4x0z3b6k9r2t',
          txid: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9',
          status: 'PAID' as const,
          movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1',
          endToEndId: 'E99999999202611221345aB3dE5fG7hJ',
          amountCents: '5000',
          feeCents: '0',
          balanceAfterCents: '15000',
          paidAt: '2026-11-22T13:45:07.123Z',
        },
      },
    },
    raises: [payChargeAndWake],
    async handler({ headers, params, body }) {
      const paid = await payChargeAndWake(orm.em.fork(), temporal.client, config.TEMPORAL_TASK_QUEUE, {
        tenantId: headers['x-tenant-id'],
        txid: params.txid,
        amountCents: body.amountCents,
        payer: { ...SANDBOX_PAYER, name: body.payerName, document: body.payerDocument },
      });
      return { status: 201, body: paid };
    },
  });
}
