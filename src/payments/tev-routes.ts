import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { accountIdParams, tenantHeaders } from '../http/common-schemas.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { payingAccount } from '../identity/operating-account.ts';
import { pinSchema } from '../identity/pin.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { centsAmountSchema, reaisAmountSchema } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import { actingAccountId, pixAccountHeader, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { description, externalRef, TevDone, tevExamples, TevRejected, TevSubmittedUnknown } from '../transfers/schemas.ts';
import { holderTevReply, integrationTevReply } from '../transfers/responses.ts';
import { ApprovalPending, approvalPendingExample } from './approval-routes.ts';
import type { PaymentContext } from './context.ts';
import { payTev, payTevAsHolder } from './tev.ts';

/** Step 2 of a holder's TEV: pay an account of the same tenant (after the beneficiary lookup of transfers/). */
export function registerHolderTevPaymentRoutes(router: Router, registry: OpenAPIRegistry, ctx: PaymentContext, auth: Authenticator<HolderAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/accounts/:accountId/tev/payment',
    operationId: 'payTev',
    tags: ['TEV'],
    summary: 'Step 2 of TEV: pay an account of the same tenant (amount in reais)',
    description:
      'Settles synchronously: 200 done, 422 rejected (nothing moved; see tev.reason), 502 submitted_unknown (resolved by the platform; never resend under another key). ' +
      'Idempotency-Key is optional; the same key returns the original result.',
    headers: tenantHeaders.extend({ 'idempotency-key': idempotencyKey.optional() }),
    auth,
    params: accountIdParams,
    body: z
      .object({
        accountNumber: z.string().regex(/^\d{1,20}$/, 'digits only'),
        amount: reaisAmountSchema.openapi({ type: 'number', example: 10.5, description: 'reais, at most 2 decimal places' }),
        pin: pinSchema.optional().openapi({ description: '4 digits; not needed for client tokens of PIN-exempt tenants' }),
        description: description.optional(),
      })
      .openapi('TevPayment'),
    bodyExample: { accountNumber: '1000024', amount: 10.5, pin: '2580', description: 'Aluguel de novembro' },
    responses: {
      200: { description: 'done: settled', schema: z.object({ tev: TevDone }).openapi('HolderTevDone'), example: { tev: tevExamples.done } },
      202: { description: 'Dual approval: held until the approver decides', schema: ApprovalPending, example: approvalPendingExample },
      422: { description: 'rejected: nothing moved; see tev.reason', schema: z.object({ tev: TevRejected }).openapi('HolderTevRejected'), example: { tev: tevExamples.rejected } },
      502: {
        description: 'submitted_unknown: the platform resolves it by itself',
        schema: z.object({ tev: TevSubmittedUnknown }).openapi('HolderTevSubmittedUnknown'),
        example: { tev: tevExamples.submittedUnknown },
      },
    },
    raises: [payingAccount, payTevAsHolder],
    async handler({ auth: a, params, body, headers }) {
      const source = await payingAccount(a, params.accountId);
      const outcome = await payTevAsHolder(ctx, a, body.pin, {
        tenantId: a.holder.tenantId,
        sourceAccountId: source.id,
        destination: { branch: source.agency, account: body.accountNumber },
        amountCents: body.amount,
        description: body.description ?? null,
        externalRef: null,
        idempotencyKey: headers['idempotency-key'] ?? randomUUID(),
        origin: 'HOLDER_API',
      });
      return 'held' in outcome ? { status: 202, body: outcome.held } : holderTevReply(outcome.result);
    },
  });
}

/** An integrator's TEV, in one step. */
export function registerIntegrationTevPaymentRoutes(router: Router, registry: OpenAPIRegistry, ctx: PaymentContext, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/tev',
    operationId: 'createTev',
    tags: ['TEV'],
    summary: 'Single-step internal transfer by branch and account number',
    description:
      'Settles synchronously: 200 done, 422 rejected (nothing moved; `reason`), 502 submitted_unknown (resolved by the platform: follow GET /v1/tev/:id ' +
      'or the tev.out.* events; never resend under another Idempotency-Key).',
    headers: pixAccountHeader.extend({ 'idempotency-key': idempotencyKey }),
    auth,
    body: z
      .object({
        destinationBranch: z.string().regex(/^\d{1,4}$/, 'digits only, with or without leading zeros'),
        destinationAccount: z.string().regex(/^\d{1,20}$/, 'digits only, with or without leading zeros'),
        amountCents: centsAmountSchema.openapi({ description: 'cents: a string of digits or a JSON integer' }),
        description: description.optional(),
        externalRef: externalRef.optional(),
      })
      .openapi('TevRequest'),
    bodyExample: { destinationBranch: '0001', destinationAccount: '1000024', amountCents: '1050', description: 'Pedido 8841', externalRef: 'order-8841' },
    responses: {
      200: { description: 'done: settled', schema: TevDone, example: tevExamples.done },
      202: { description: 'Dual approval: held until the approver decides', schema: ApprovalPending, example: approvalPendingExample },
      422: { description: 'rejected: nothing moved; see reason', schema: TevRejected, example: { ...tevExamples.rejected, providerStatusCode: 422 as const } },
      502: { description: 'submitted_unknown: the platform resolves it by itself', schema: TevSubmittedUnknown, example: tevExamples.submittedUnknown },
    },
    raises: [actingAccountId, payTev],
    async handler({ auth: a, headers, body }) {
      const sourceAccountId = await actingAccountId(a, headers['x-pix-account-id']);
      const outcome = await payTev(ctx, {
        tenantId: a.principal.tenantId,
        sourceAccountId,
        destination: { branch: body.destinationBranch, account: body.destinationAccount },
        amountCents: body.amountCents,
        description: body.description ?? null,
        externalRef: body.externalRef ?? null,
        idempotencyKey: headers['idempotency-key'],
        origin: 'INTEGRATION_API',
      });
      return 'held' in outcome ? { status: 202, body: outcome.held } : integrationTevReply(outcome.result);
    },
  });
}
