import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { cents, cuid, pixEndToEndId, tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute } from '../http/route.ts';
import { receivePix } from '../pix/incoming.ts';
import type { PlatformContext } from '../platform-context.ts';
import { documentSchema } from '../shared/documents.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { freeText, z } from '../shared/zod.ts';
import { SANDBOX_PAYER } from './payer-bank.ts';

/** A payer at another bank sends an account a Pix: what the Pix provider's `pix.received` notification does in production. */
export function registerIncomingPixRoutes(router: Router, registry: OpenAPIRegistry, { orm }: PlatformContext): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/sandbox/pix/incoming',
    operationId: 'sandboxIncomingPix',
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
    bodyExample: { accountId: '8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65', amountCents: '10000', payerName: 'Pagador Sandbox', payerDocument: '11144477735' },
    responses: {
      201: {
        description: 'Credited',
        schema: z
          .object({
            movementId: cuid('m3v8c1x6z9b2n7q4w0k5r8t1'),
            endToEndId: pixEndToEndId(),
            amountCents: cents('10000'),
            feeCents: cents('0').openapi({ description: 'The Pix receive fee' }),
            balanceAfterCents: cents('10000'),
          })
          .openapi('SandboxPixCredited'),
        example: { movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1', endToEndId: 'E99999999202611221345aB3dE5fG7hJ', amountCents: '10000', feeCents: '0', balanceAfterCents: '10000' },
      },
    },
    raises: [receivePix],
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
