import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { Account } from '../accounts/entities.ts';
import { assertAccountOperational } from '../accounts/service.ts';
import { pixAccountParams } from '../fees/routes.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { Holder } from '../identity/entities.ts';
import { assertOnboarded } from '../identity/service.ts';
import type { Services } from '../services.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { pageQuery } from '../shared/pagination.ts';
import { freeText, z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { CHARGE_STATUSES } from '../../workflows/contracts/pix-charge.ts';
import { refundCharge } from './charge-settlement.ts';
import {
  chargeOfAccount,
  chargeView,
  createCharge,
  DEFAULT_EXPIRY_SECONDS,
  listCharges,
  MAX_EXPIRY_SECONDS,
  MAX_TAG_LENGTH,
  MIN_EXPIRY_SECONDS,
} from './charges.ts';

const cents = (description: string) => centsAmountSchema.openapi({ description });

export const Charge = z
  .object({
    chargeId: z.string().openapi({ description: 'cuid2' }),
    txid: z.string().openapi({ description: '32 letters and digits (the Banco Central allows 26 to 35)' }),
    brCode: z.string().openapi({ description: 'Dynamic Pix BR Code ("copia e cola") with the amount; its location URL ends with /pix/cob/<txid>' }),
    amountCents: z.string(),
    tag: z.string().nullable(),
    status: z.enum(CHARGE_STATUSES),
    expiresAt: z.string().openapi({ description: 'ISO 8601 UTC' }),
    createdAt: z.string().openapi({ description: 'ISO 8601 UTC' }),
    paidAt: z.string().nullable(),
    paidCents: z.string().openapi({ description: '0 until paid, then amountCents' }),
    refundedCents: z.string().openapi({ description: 'sum of the refunds; never above paidCents' }),
  })
  .openapi('PixCharge');

export const ChargeRefund = z
  .object({ refundId: z.string(), chargeId: z.string(), amountCents: z.string(), refundEndToEndId: z.string(), createdAt: z.string() })
  .openapi('PixChargeRefund');

const chargeParams = pixAccountParams.extend({ chargeId: z.string().min(1).max(64) });

/** A charge operation moves the account's money: the holder must be through KYC and the account approved (403). */
async function operableAccount(a: IntegrationAuth, pixAccountId: string): Promise<{ account: Account; holder: Holder }> {
  const account = await scopedAccount(a, pixAccountId);
  const holder = await a.em.findOneOrFail(Holder, { id: account.holderId! });
  assertOnboarded(holder);
  assertAccountOperational(account);
  return { account, holder };
}

export function registerPixChargeRoutes(router: Router, registry: OpenAPIRegistry, { config, temporal }: Services, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/charges',
    tags: ['Pix charges'],
    summary: 'Create a Pix charge (cobrança): a txid and a dynamic BR Code the payer pays once, before it expires',
    description:
      'The charge is ACTIVE until paid (PAID, event pix.charge.paid, the amount minus the Pix receive fee is credited) or until ' +
      'expiresAt passes (EXPIRED, event pix.charge.expired). A retry with the same Idempotency-Key and body returns the original charge.',
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: pixAccountParams,
    body: z
      .object({
        amountCents: cents('cents (a string of digits or a JSON integer); what the payer must pay, exactly'),
        expiresInSeconds: z
          .number()
          .int('must be a whole number of seconds')
          .min(MIN_EXPIRY_SECONDS, `must be at least ${MIN_EXPIRY_SECONDS}`)
          .max(MAX_EXPIRY_SECONDS, `must be at most ${MAX_EXPIRY_SECONDS} (30 days)`)
          .default(DEFAULT_EXPIRY_SECONDS)
          .openapi({ description: `The charge expires after this many seconds, at least ${MIN_EXPIRY_SECONDS}; default ${DEFAULT_EXPIRY_SECONDS} (24 h)` }),
        tag: freeText()
          .trim()
          .min(1, 'must not be blank')
          .max(MAX_TAG_LENGTH, `at most ${MAX_TAG_LENGTH} characters`)
          .optional()
          .openapi({ description: 'Your reference, echoed in the charge and its events' }),
      })
      .openapi('PixChargeRequest'),
    responses: {
      201: { description: 'Created (or the original charge of this Idempotency-Key)', schema: Charge },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE, ONBOARDING_INCOMPLETE, ACCOUNT_NOT_APPROVED' },
      409: { description: 'IDEMPOTENCY_KEY_REUSED' },
      422: { description: 'AMOUNT_BELOW_RECEIVE_FEE' },
    },
    async handler({ auth: a, params, headers, body }) {
      const { account, holder } = await operableAccount(a, params.accountId);
      const { charge, handOff } = await createCharge(a.em, config.TEMPORAL_TASK_QUEUE, account, holder.name, config.publicBaseUrl, headers['idempotency-key'], {
        amountCents: body.amountCents,
        expiresInSeconds: body.expiresInSeconds,
        tag: body.tag ?? null,
      });
      if (handOff) await dispatchHandOff(temporal.client, a.em, handOff);
      return { status: 201, body: chargeView(charge) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/charges/:chargeId',
    tags: ['Pix charges'],
    summary: 'Read a charge of the Pix account',
    auth,
    params: chargeParams,
    responses: { 200: { description: 'The charge', schema: Charge }, 403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' }, 404: { description: 'No such charge on this account' } },
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: chargeView(await chargeOfAccount(a.em, account.id, params.chargeId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/charges',
    tags: ['Pix charges'],
    summary: "List the Pix account's charges, newest first",
    auth,
    params: pixAccountParams,
    query: pageQuery.extend({ status: z.enum(CHARGE_STATUSES).optional().openapi({ description: 'Only charges in this status' }) }),
    responses: {
      200: {
        description: 'Charges',
        schema: z.object({ charges: z.array(Charge), pagination: z.object({ limit: z.number(), nextCursor: z.string().nullable(), hasMore: z.boolean() }) }),
      },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE' },
    },
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await listCharges(a.em, config.KEY_PEPPER, account.id, query.status, query.limit, query.cursor) };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/charges/:chargeId/refunds',
    tags: ['Pix charges'],
    summary: 'Return part or all of what a paid charge received to its payer (event pix.charge.refunded)',
    description:
      'Debits the account by amountCents (the receive fee is not returned). The refunds of a charge never add up to more than it received. ' +
      'A retry with the same Idempotency-Key and amount returns the original refund.',
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: chargeParams,
    body: z.object({ amountCents: cents('cents to return (a string of digits or a JSON integer)') }).openapi('PixChargeRefundRequest'),
    responses: {
      201: { description: 'Refunded (or the original refund of this Idempotency-Key)', schema: ChargeRefund },
      403: { description: 'ACCOUNT_NOT_IN_KEY_SCOPE, ONBOARDING_INCOMPLETE, ACCOUNT_NOT_APPROVED' },
      404: { description: 'No such charge on this account' },
      409: { description: 'IDEMPOTENCY_KEY_REUSED or CHARGE_NOT_PAID' },
      422: { description: 'REFUND_EXCEEDS_PAID or INSUFFICIENT_BALANCE' },
    },
    async handler({ auth: a, params, headers, body }) {
      const { account } = await operableAccount(a, params.accountId);
      return { status: 201, body: await refundCharge(a.em, account, params.chargeId, headers['idempotency-key'], body.amountCents) };
    },
  });
}
