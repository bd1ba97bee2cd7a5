import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { Account } from '../accounts/entities.ts';
import { ApprovalPending, approvalPendingExample } from '../approvals/routes.ts';
import { submitTevOrHold } from '../approvals/service.ts';
import { authorizeWrite, operatingAccount } from '../accounts/operating.ts';
import { accountIdParams, accountNumber, branch, documentNumber, tenantHeaders, uuid } from '../http/common-schemas.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import type { Authenticator } from '../http/route.ts';
import { Holder } from '../identity/entities.ts';
import { pinSchema } from '../identity/pin.ts';
import { digitsDocument } from '../identity/schemas.ts';
import type { Services } from '../services.ts';
import { AppError } from '../shared/errors.ts';
import { reaisAmountSchema } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { description, TevDone, tevExamples, TevRejected, TevSubmittedUnknown } from './schemas.ts';
import { holderTevReply } from './responses.ts';

const Beneficiary = z
  .object({
    beneficiary: z.object({
      name: z.string().openapi({ example: 'João Souza' }),
      document: documentNumber('11144477735').openapi({ description: 'Unmasked' }),
      accounts: z.array(
        z.object({
          id: uuid('1e2d3c4b-5a69-4788-9c0d-e1f2a3b4c5d6'),
          accountNumber: accountNumber('1000024').openapi({ description: 'What to pay, as accountNumber of the payment' }),
          agency: branch(),
          bank: z.string().regex(/^\d{3}$/).openapi({ example: '000' }),
        }),
      ),
    }),
  })
  .openapi('Beneficiary');

export function registerHolderTevRoutes(router: Router, registry: OpenAPIRegistry, services: Services, auth: Authenticator<HolderAuth>): void {
  const { config } = services;

  defineRoute(router, registry, {
    method: 'post',
    path: '/accounts/:accountId/tev/beneficiary',
    operationId: 'findTevBeneficiary',
    tags: ['TEV'],
    summary: 'Step 1 of TEV: find beneficiaries of the same tenant by document',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    body: z.object({ document: digitsDocument }).openapi('BeneficiaryLookup'),
    bodyExample: { document: '11144477735' },
    responses: {
      200: {
        description: 'The beneficiary and its accounts able to receive',
        schema: Beneficiary,
        example: {
          beneficiary: {
            name: 'João Souza',
            document: '11144477735',
            accounts: [{ id: '1e2d3c4b-5a69-4788-9c0d-e1f2a3b4c5d6', accountNumber: '1000024', agency: '0001', bank: '000' }],
          },
        },
      },
    },
    errors: { 403: ['ONBOARDING_INCOMPLETE', 'ACCOUNT_NOT_APPROVED'], 404: ['NOT_FOUND', 'BENEFICIARY_NOT_FOUND'] },
    async handler({ auth: a, params, body }) {
      await operatingAccount(a, params.accountId);
      const holder = await a.em.findOne(Holder, { tenantId: a.holder.tenantId, document: body.document, status: 'ACTIVE' });
      const accounts = holder ? await a.em.find(Account, { holderId: holder.id, kind: 'HOLDER', status: 'APPROVED' }, { orderBy: { createdAt: 'asc' } }) : [];
      if (!holder || accounts.length === 0) throw new AppError(404, 'BENEFICIARY_NOT_FOUND', 'No holder of this tenant with this document can receive transfers');
      return {
        status: 200,
        body: {
          beneficiary: {
            name: holder.name,
            document: holder.document,
            accounts: accounts.map((x) => ({ id: x.id, accountNumber: x.number, agency: x.agency, bank: x.bank })),
          },
        },
      };
    },
  });

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
    errors: {
      400: ['DESTINATION_NOT_FOUND', 'SAME_ACCOUNT'],
      401: ['HOLDER_BLOCKED'],
      403: ['ONBOARDING_INCOMPLETE', 'ACCOUNT_NOT_APPROVED', 'PIN_NOT_SET', 'INVALID_PIN'],
      404: ['NOT_FOUND'],
      409: ['IDEMPOTENCY_KEY_REUSED'],
      423: ['PIN_LOCKED'],
      429: ['RATE_LIMITED'],
    },
    async handler({ auth: a, params, body, headers }) {
      const source = await operatingAccount(a, params.accountId);
      await authorizeWrite(a, config, body.pin);
      const outcome = await submitTevOrHold(services, {
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
