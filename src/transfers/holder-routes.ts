import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { Account } from '../accounts/entities.ts';
import { ApprovalPending } from '../approvals/routes.ts';
import { submitTevOrHold } from '../approvals/service.ts';
import { authorizeWrite, operatingAccount } from '../accounts/operating.ts';
import { accountIdParams, tenantHeaders } from '../http/common-schemas.ts';
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
import { description, TevCreated } from './schemas.ts';
import { holderTevReply } from './views.ts';

const Beneficiary = z
  .object({
    beneficiary: z.object({
      name: z.string(),
      document: z.string(),
      accounts: z.array(z.object({ id: z.uuid(), accountNumber: z.string(), agency: z.string(), bank: z.string() })),
    }),
  })
  .openapi('Beneficiary');

export function registerHolderTevRoutes(router: Router, registry: OpenAPIRegistry, services: Services, auth: Authenticator<HolderAuth>): void {
  const { config } = services;

  defineRoute(router, registry, {
    method: 'post',
    path: '/accounts/:accountId/tev/beneficiary',
    tags: ['TEV'],
    summary: 'Step 1 of TEV: find beneficiaries of the same tenant by document',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    body: z.object({ document: digitsDocument }).openapi('BeneficiaryLookup'),
    responses: {
      200: { description: 'The beneficiary and its accounts able to receive', schema: Beneficiary },
      403: { description: 'ONBOARDING_INCOMPLETE or ACCOUNT_NOT_APPROVED' },
      404: { description: 'BENEFICIARY_NOT_FOUND' },
    },
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
    responses: {
      200: { description: 'done', schema: z.object({ tev: TevCreated }) },
      202: { description: 'Dual approval: held until the approver decides', schema: ApprovalPending },
      400: { description: 'Invalid input, unknown destination (DESTINATION_NOT_FOUND) or SAME_ACCOUNT' },
      403: { description: 'ONBOARDING_INCOMPLETE, ACCOUNT_NOT_APPROVED, INVALID_PIN, PIN_NOT_SET' },
      409: { description: 'IDEMPOTENCY_KEY_REUSED with a different body' },
      422: { description: 'rejected', schema: z.object({ tev: TevCreated }) },
      423: { description: 'PIN_LOCKED' },
      502: { description: 'submitted_unknown', schema: z.object({ tev: TevCreated }) },
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
