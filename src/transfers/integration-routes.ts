import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { Services } from '../services.ts';
import { notFound } from '../shared/errors.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import { actingAccount, actingAccountId, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { ApprovalPending, approvalPendingExample } from '../approvals/routes.ts';
import { submitTevOrHold } from '../approvals/service.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { description, externalRef, TevDone, tevExamples, TevRead, tevReadExample, TevRejected, TevSubmittedUnknown } from './schemas.ts';
import { tevSeenBy } from './visibility.ts';
import { integrationTevReply, tevReadView } from './responses.ts';

export const pixAccountHeader = z.object({
  'x-pix-account-id': z.string().min(1).max(64).optional().openapi({ description: 'Selects the account when the key reaches several' }),
});

export function registerIntegrationTevRoutes(router: Router, registry: OpenAPIRegistry, services: Services, auth: Authenticator<IntegrationAuth>): void {
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
    errors: {
      400: ['DESTINATION_NOT_FOUND', 'SAME_ACCOUNT'],
      401: ['HOLDER_BLOCKED'],
      403: ['ACCOUNT_NOT_IN_KEY_SCOPE', 'ONBOARDING_INCOMPLETE', 'ACCOUNT_NOT_APPROVED'],
      404: ['NOT_FOUND'],
      409: ['IDEMPOTENCY_KEY_REUSED', 'EXTERNAL_REF_TAKEN'],
    },
    async handler({ auth: a, headers, body }) {
      const sourceAccountId = await actingAccountId(a, headers['x-pix-account-id']);
      const outcome = await submitTevOrHold(services, {
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
    errors: { 403: ['ACCOUNT_NOT_IN_KEY_SCOPE'], 404: ['NOT_FOUND'] },
    async handler({ auth: a, headers, params }) {
      const account = await actingAccount(a, headers['x-pix-account-id']);
      const tev = await tevSeenBy(a.em, account, params.id);
      if (!tev) throw notFound('Transfer');
      return { status: 200, body: tevReadView(tev, account.id) };
    },
  });
}
