import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute } from '../http/route.ts';
import type { Services } from '../services.ts';
import { documentSchema } from '../shared/documents.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { freeText, z } from '../shared/zod.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { payCharge } from './charge-settlement.ts';
import { SANDBOX_PAYER } from './sandbox-routes.ts';

/** Sandbox only: an external payer (the simulated bank of SANDBOX_PAYER) pays a charge by its txid. */
export function registerPixChargeSandboxRoutes(router: Router, registry: OpenAPIRegistry, { orm, temporal, config }: Services): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/sandbox/pix/charges/:txid/pay',
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
    responses: {
      201: {
        description: 'Paid',
        schema: z.object({
          chargeId: z.string(),
          txid: z.string(),
          status: z.literal('PAID'),
          movementId: z.string(),
          endToEndId: z.string(),
          amountCents: z.string(),
          feeCents: z.string(),
          balanceAfterCents: z.string(),
          paidAt: z.string(),
        }),
      },
      404: { description: 'No charge with this txid in this tenant' },
      409: { description: 'CHARGE_ALREADY_PAID or CHARGE_EXPIRED' },
      422: { description: 'CHARGE_AMOUNT_MISMATCH, ACCOUNT_NOT_APPROVED or AMOUNT_BELOW_RECEIVE_FEE' },
    },
    async handler({ headers, params, body }) {
      const em = orm.em.fork();
      const { paid, handOff } = await payCharge(em, config.TEMPORAL_TASK_QUEUE, {
        tenantId: headers['x-tenant-id'],
        txid: params.txid,
        amountCents: body.amountCents,
        payer: { ...SANDBOX_PAYER, name: body.payerName, document: body.payerDocument },
      });
      // Ends the charge's timer now; what is not done here, the worker's reconciler does.
      await dispatchHandOff(temporal.client, em, handOff);
      return { status: 201, body: paid };
    },
  });
}
