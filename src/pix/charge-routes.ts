import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { operatingPixAccount } from '../identity/operating-account.ts';
import { pixAccountParams } from '../fees/routes.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { PlatformContext } from '../platform-context.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { pageQuery } from '../shared/pagination.ts';
import { freeText, z } from '../shared/zod.ts';
import { cents, cuid, paginated, pixEndToEndId, utcDateTime } from '../http/common-schemas.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { CHARGE_STATUSES } from '../../workflows/contracts/pix-charge.ts';
import { refundChargeToPayer } from './charge-settlement.ts';
import {
  chargeOfAccount,
  chargeView,
  DEFAULT_EXPIRY_SECONDS,
  issueCharge,
  listCharges,
  MAX_EXPIRY_SECONDS,
  MAX_TAG_LENGTH,
  MIN_EXPIRY_SECONDS,
} from './charges.ts';

const centsInput = (description: string) => centsAmountSchema.openapi({ description });

const chargeId = () => cuid('ch5v2n8m1q7w4x0z3b6k9r2t');

const Charge = z
  .object({
    chargeId: chargeId(),
    txid: z.string().regex(/^[A-Za-z0-9]{26,35}$/).openapi({ description: '32 letters and digits (the Banco Central allows 26 to 35)', example: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9' }),
    brCode: z.string().openapi({
      description: 'Dynamic Pix BR Code ("copia e cola") with the amount; its location URL ends with `/pix/cob/<txid>`',
      example: '00020101021226770014br.gov.bcb.pix2555127.0.0.1:3000/pix/cob/Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9520400005303986540550.005802BR5914MARIA DA SILVA6009SAO PAULO62070503***6304E7AA',
    }),
    amountCents: cents('5000'),
    tag: z.string().nullable().openapi({ example: 'order-8841' }),
    status: z.enum(CHARGE_STATUSES),
    expiresAt: utcDateTime('2026-11-23T13:45:07.123Z'),
    createdAt: utcDateTime(),
    paidAt: utcDateTime().nullable().openapi({ example: null }),
    paidCents: cents('0').openapi({ description: '0 until paid, then amountCents' }),
    refundedCents: cents('0').openapi({ description: 'sum of the refunds; never above paidCents' }),
  })
  .openapi('PixCharge');

const chargeExample = {
  chargeId: 'ch5v2n8m1q7w4x0z3b6k9r2t',
  txid: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9',
  brCode: '00020101021226770014br.gov.bcb.pix2555127.0.0.1:3000/pix/cob/Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9520400005303986540550.005802BR5914MARIA DA SILVA6009SAO PAULO62070503***6304E7AA',
  amountCents: '5000',
  tag: 'order-8841',
  status: 'ACTIVE' as const,
  expiresAt: '2026-11-23T13:45:07.123Z',
  createdAt: '2026-11-22T13:45:07.123Z',
  paidAt: null,
  paidCents: '0',
  refundedCents: '0',
};

const ChargeRefund = z
  .object({
    refundId: cuid('rf7b2n9m4q1w6x3z0v8k5c2t'),
    chargeId: chargeId(),
    amountCents: cents('2000'),
    refundEndToEndId: pixEndToEndId('D99999999202611221402aB3dE5fG7hJ'),
    createdAt: utcDateTime(),
  })
  .openapi('PixChargeRefund');

const chargeParams = pixAccountParams.extend({ chargeId: z.string().min(1).max(64) });

export function registerPixChargeRoutes(router: Router, registry: OpenAPIRegistry, { config, temporal }: PlatformContext, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/charges',
    operationId: 'createCharge',
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
        amountCents: centsInput('cents (a string of digits or a JSON integer); what the payer must pay, exactly'),
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
    bodyExample: { amountCents: '5000', expiresInSeconds: 86400, tag: 'order-8841' },
    responses: { 201: { description: 'Created (or the original charge of this Idempotency-Key)', schema: Charge, example: chargeExample } },
    raises: [operatingPixAccount, issueCharge],
    async handler({ auth: a, params, headers, body }) {
      const { account, holder } = await operatingPixAccount(a, params.accountId);
      const charge = await issueCharge(a.em, temporal.client, config, account, holder.name, headers['idempotency-key'], {
        amountCents: body.amountCents,
        expiresInSeconds: body.expiresInSeconds,
        tag: body.tag ?? null,
      });
      return { status: 201, body: chargeView(charge) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/charges/:chargeId',
    operationId: 'getCharge',
    tags: ['Pix charges'],
    summary: 'Read a charge of the Pix account',
    auth,
    params: chargeParams,
    responses: { 200: { description: 'The charge', schema: Charge, example: chargeExample } },
    raises: [scopedAccount, chargeOfAccount],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: chargeView(await chargeOfAccount(a.em, account.id, params.chargeId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/charges',
    operationId: 'listCharges',
    tags: ['Pix charges'],
    summary: "List the Pix account's charges, newest first",
    auth,
    params: pixAccountParams,
    query: pageQuery.extend({ status: z.enum(CHARGE_STATUSES).optional().openapi({ description: 'Only charges in this status' }) }),
    responses: {
      200: { description: 'Charges', schema: paginated('charges', Charge), example: { charges: [chargeExample], pagination: { limit: 20, nextCursor: null, hasMore: false } } },
    },
    raises: [scopedAccount],
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await listCharges(a.em, config.KEY_PEPPER, account.id, query.status, query.limit, query.cursor) };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/charges/:chargeId/refunds',
    operationId: 'refundCharge',
    tags: ['Pix charges'],
    summary: 'Return part or all of what a paid charge received to its payer (event pix.charge.refunded)',
    description:
      'Debits the account by amountCents (the receive fee is not returned) and sends the money back to the payer through the Pix provider ' +
      '(a payer who is a holder of the platform is credited within seconds). The refunds of a charge never add up to more than it received. ' +
      'A retry with the same Idempotency-Key and amount returns the original refund.',
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: chargeParams,
    body: z.object({ amountCents: centsInput('cents to return (a string of digits or a JSON integer)') }).openapi('PixChargeRefundRequest'),
    bodyExample: { amountCents: '2000' },
    responses: {
      201: {
        description: 'Refunded (or the original refund of this Idempotency-Key)',
        schema: ChargeRefund,
        example: { refundId: 'rf7b2n9m4q1w6x3z0v8k5c2t', chargeId: 'ch5v2n8m1q7w4x0z3b6k9r2t', amountCents: '2000', refundEndToEndId: 'D99999999202611221402aB3dE5fG7hJ', createdAt: '2026-11-22T14:02:51.480Z' },
      },
    },
    raises: [operatingPixAccount, refundChargeToPayer],
    async handler({ auth: a, params, headers, body }) {
      const { account } = await operatingPixAccount(a, params.accountId);
      const refund = await refundChargeToPayer(a.em, temporal.client, config.TEMPORAL_TASK_QUEUE, account, params.chargeId, headers['idempotency-key'], body.amountCents);
      return { status: 201, body: refund };
    },
  });
}
