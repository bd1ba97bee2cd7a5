import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { cents, cuid, tenantHeaders, utcDateTime } from '../http/common-schemas.ts';
import type { Authenticator, Reply } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { pinSchema } from '../identity/pin.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { reaisAmountSchema } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import { description } from '../transfers/schemas.ts';
import { buildBrCode } from '../pix/brcode.ts';
import { withPixKey } from '../pix/keys.ts';
import { ApprovalPending } from './approval-routes.ts';
import type { PaymentContext } from './context.ts';
import { payPixKey, payQrCode, type PaymentAnswer } from './pix.ts';

const PayoutCreated = z
  .object({
    payout: z.object({
      payoutId: cuid('p6c1v8x3z0b5n2m9q4w7k1r6').openapi({ description: 'Read it with GET /accounts/{accountId}/payouts/{payoutId}' }),
      status: z.enum(['PROCESSING', 'PENDING']),
      amountCents: cents('2590'),
      feeCents: cents('0').nullable().openapi({ description: 'null while PENDING' }),
      createdAt: utcDateTime(),
      trustedContact: z.boolean().nullable().openapi({
        description:
          'The receiver (its key, or its account at this platform) is a trusted contact of the paying account, added at least 24 h ago: exempt from its night limit, not from the monthly one. null while PENDING when the debit has not answered yet',
      }),
    }),
  })
  .openapi('PayoutCreated');

const processing = {
  payout: { payoutId: 'p6c1v8x3z0b5n2m9q4w7k1r6', status: 'PROCESSING' as const, amountCents: '2590', feeCents: '0', createdAt: '2026-11-22T13:45:07.123Z', trustedContact: false },
};

const paymentHeaders = tenantHeaders.extend({ 'idempotency-key': idempotencyKey.optional() });

/** 201 once debited; 202 while the debit is not decided, or when held for the account's approver. */
function reply(answer: PaymentAnswer): Reply {
  if (answer.kind === 'held') return { status: 202, body: answer.held };
  return { status: answer.kind === 'debited' ? 201 : 202, body: { payout: answer.payout } };
}

export function registerPixPaymentRoutes(router: Router, registry: OpenAPIRegistry, ctx: PaymentContext, auth: Authenticator<HolderAuth>): void {
  const responses = {
    201: { description: 'Debited; the payout is PROCESSING until the provider settles it (GET /accounts/{accountId}/payouts/{payoutId})', schema: PayoutCreated, example: processing },
    202: {
      description: 'Accepted; the debit is not decided yet (payout PENDING), or held for dual approval ({ approvalRequestId, status, expiresAt })',
      schema: z.union([PayoutCreated, ApprovalPending]),
      example: { payout: { ...processing.payout, status: 'PENDING' as const, feeCents: null } },
    },
  };
  defineRoute(router, registry, {
    method: 'post',
    path: '/pix/payment',
    operationId: 'payPixKey',
    tags: ['Pix'],
    summary: 'Pay a Pix key (CPF, CNPJ, EMAIL, PHONE in E.164, EVP); amount in reais',
    headers: paymentHeaders,
    auth,
    body: withPixKey({ accountId: z.uuid(), amount: reaisAmountSchema.openapi({ type: 'number', example: 25.9 }), pin: pinSchema.optional(), description: description.optional() }).openapi('PixPayment'),
    bodyExample: { accountId: '8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65', pixKey: 'joao@example.com', pixKeyType: 'EMAIL', amount: 25.9, pin: '2580', description: 'Almoço' },
    responses,
    raises: [payPixKey],
    async handler({ auth: a, headers, body }) {
      const answer = await payPixKey(ctx, {
        auth: a,
        accountId: body.accountId,
        pin: body.pin,
        idempotencyKey: headers['idempotency-key'] ?? randomUUID(),
        amountCents: body.amount,
        pixKey: body.pixKey,
        pixKeyType: body.pixKeyType,
        description: body.description ?? 'Pix enviado',
      });
      return reply(answer);
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/pix/qrcode/payment',
    operationId: 'payPixQrCode',
    tags: ['Pix'],
    summary: 'Pay a Pix BR Code (EMV), static or dynamic; `amount` only when the code has none',
    description:
      'The code is parsed and its CRC16 checked; a bad code is 400 naming the problem. A dynamic code (location URL) pays the charge served ' +
      "there: its payload is fetched, its signature checked against the receiver's key set (jku, on the location's host), and its status, " +
      'expiry and amount checked before anything moves (422 QR_LOCATION_UNAVAILABLE, QR_LOCATION_INVALID, QR_CHARGE_NOT_FOUND, QR_PAYLOAD_INVALID, ' +
      'QR_SIGNATURE_INVALID, QR_AMOUNT_CHANGE_NOT_SUPPORTED, CHARGE_AMOUNT_MISMATCH; 409 CHARGE_ALREADY_PAID, CHARGE_EXPIRED, CHARGE_REMOVED).',
    headers: paymentHeaders,
    auth,
    body: z
      .object({ accountId: z.uuid(), qrCode: z.string().min(1).max(1024), amount: reaisAmountSchema.optional().openapi({ type: 'number' }), pin: pinSchema.optional() })
      .openapi('QrCodePayment'),
    bodyExample: {
      accountId: '8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65',
      qrCode: buildBrCode({ pixKey: '+5511912345678', merchantName: 'Padaria Azul', merchantCity: 'Natal', amountCents: 2590n, txid: null }),
      pin: '2580',
    },
    responses,
    raises: [payQrCode],
    async handler({ auth: a, headers, body }) {
      const answer = await payQrCode(ctx, { auth: a, accountId: body.accountId, pin: body.pin, idempotencyKey: headers['idempotency-key'] ?? randomUUID(), qrCode: body.qrCode, amountCents: body.amount });
      return reply(answer);
    },
  });
}
