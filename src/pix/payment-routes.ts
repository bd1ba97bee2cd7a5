import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { authorizeWrite, operatingAccount } from '../accounts/operating.ts';
import { holdForApproval } from '../approvals/service.ts';
import { tenantHeaders } from '../http/common-schemas.ts';
import type { Authenticator, Reply } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { pinSchema } from '../identity/pin.ts';
import type { Services } from '../services.ts';
import { AppError, validationError } from '../shared/errors.ts';
import { reaisAmountSchema } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import { confirmHandOff } from '../handoff/dispatch.ts';
import { startWithUpdate } from '../temporal/workflow-start.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { description } from '../transfers/schemas.ts';
import { payoutOpened, pixPayoutStart } from '../../workflows/contracts/pix-payout.ts';
import { parseBrCode } from './brcode.ts';
import { PIX_KEY_TYPES, validatePixKey, withPixKey, type PixKeyType } from './keys.ts';
import { pixProvider } from './provider-factory.ts';
import { recordPayout, type PayoutRequest } from './payouts.ts';

const PayoutCreated = z
  .object({ payout: z.object({ payoutId: z.string(), status: z.enum(['PROCESSING', 'PENDING']), amountCents: z.string(), feeCents: z.string().nullable(), createdAt: z.string() }) })
  .openapi('PayoutCreated');

const paymentHeaders = tenantHeaders.extend({ 'idempotency-key': idempotencyKey.optional() });

/** The key in a static BR Code does not say its type: the first type it is valid as, with its canonical form. */
function keyOf(raw: string): { pixKey: string; pixKeyType: PixKeyType } | null {
  for (const pixKeyType of PIX_KEY_TYPES) {
    const check = validatePixKey(pixKeyType, raw);
    if (check.ok) return { pixKey: check.key, pixKeyType };
  }
  return null;
}

export function registerPixPaymentRoutes(router: Router, registry: OpenAPIRegistry, services: Services, auth: Authenticator<HolderAuth>): void {
  const { config, temporal, orm } = services;
  const provider = pixProvider(config, orm);

  /** Records the payout, then debits it in its settlement workflow (Update-with-Start) and answers once decided. */
  async function pay(a: HolderAuth, r: Omit<PayoutRequest, 'beneficiary' | 'tenantId'>, pin: string | undefined): Promise<Reply> {
    const beneficiary = await provider.resolveKey(r.pixKeyType, r.pixKey);
    if (!beneficiary) throw new AppError(422, 'PIX_KEY_NOT_FOUND', 'No account answers for this Pix key');
    await authorizeWrite(a, config, pin);
    if (r.account.approverHolderId) {
      const { account, idempotencyKey, ...held } = r;
      const payment = { kind: 'PIX' as const, ...held, amountCents: held.amountCents.toString(), beneficiary };
      return { status: 202, body: await holdForApproval(services, { tenantId: a.holder.tenantId, source: account, requesterHolderId: a.holder.id, idempotencyKey, payment }) };
    }
    const start = (payoutId: string) => pixPayoutStart({ payoutId, tenantId: a.holder.tenantId, accountId: r.account.id, pollMs: config.PIX_POLL_MS, refundWatchMs: config.PIX_REFUND_WATCH_MS });
    const { payoutId, opening: stored, handOff } = await recordPayout(a.em, config.KEY_PEPPER, { ...r, tenantId: a.holder.tenantId, beneficiary }, { taskQueue: config.TEMPORAL_TASK_QUEUE, start });
    const opening = stored ?? (await startWithUpdate(temporal.client, config.TEMPORAL_TASK_QUEUE, start(payoutId), payoutOpened, config.TEV_RESPONSE_DEADLINE_MS));
    // The debit was decided by the run: Temporal has it. Otherwise the hand-off's reconciler starts (or joins) it.
    if (opening && handOff) await confirmHandOff(a.em, handOff);
    if (!opening) {
      // Accepted, not debited yet: the workflow debits (or refuses) as soon as a worker runs it.
      return { status: 202, body: { payout: { payoutId, status: 'PENDING', amountCents: r.amountCents.toString(), feeCents: null, createdAt: new Date().toISOString() } } };
    }
    if (opening.status === 'REJECTED') {
      throw new AppError(422, opening.reason ?? 'REJECTED', opening.reason === 'INSUFFICIENT_BALANCE' ? 'The balance does not cover the amount and the fee' : 'The account cannot send Pix');
    }
    const { payoutId: id, status, amountCents, feeCents, createdAt } = opening;
    return { status: 201, body: { payout: { payoutId: id, status, amountCents, feeCents, createdAt } } };
  }

  const responses = {
    201: { description: 'Debited; the payout is PROCESSING until the provider settles it (GET /accounts/:accountId/payouts/:payoutId)', schema: PayoutCreated },
    202: { description: 'Accepted; the debit is not decided yet (payout PENDING), or held for dual approval ({ approvalRequestId, status, expiresAt })', schema: PayoutCreated },
    403: { description: 'ONBOARDING_INCOMPLETE, ACCOUNT_NOT_APPROVED, INVALID_PIN' },
    409: { description: 'IDEMPOTENCY_KEY_REUSED' },
    422: { description: 'INSUFFICIENT_BALANCE (nothing moved), PIX_KEY_NOT_FOUND' },
  };

  defineRoute(router, registry, {
    method: 'post',
    path: '/pix/payment',
    tags: ['Pix'],
    summary: 'Pay a Pix key (CPF, CNPJ, EMAIL, PHONE in E.164, EVP); amount in reais',
    headers: paymentHeaders,
    auth,
    body: withPixKey({ accountId: z.uuid(), amount: reaisAmountSchema.openapi({ type: 'number', example: 25.9 }), pin: pinSchema.optional(), description: description.optional() }).openapi('PixPayment'),
    responses,
    async handler({ auth: a, headers, body }) {
      const account = await operatingAccount(a, body.accountId);
      return pay(
        a,
        { account, channel: 'PIX_OUT', amountCents: body.amount, pixKey: body.pixKey, pixKeyType: body.pixKeyType, qr: null, description: body.description ?? 'Pix enviado', idempotencyKey: headers['idempotency-key'] ?? randomUUID() },
        body.pin,
      );
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/pix/qrcode/payment',
    tags: ['Pix'],
    summary: 'Pay a static Pix BR Code (EMV); `amount` only when the code has none',
    description: 'The code is parsed and its CRC16 checked; a bad code is 400 naming the problem. Dynamic codes (location URL) need the provider to fetch their payload: 422 DYNAMIC_QR_NOT_SUPPORTED.',
    headers: paymentHeaders,
    auth,
    body: z
      .object({ accountId: z.uuid(), qrCode: z.string().min(1).max(1024), amount: reaisAmountSchema.optional().openapi({ type: 'number' }), pin: pinSchema.optional() })
      .openapi('QrCodePayment'),
    responses,
    async handler({ auth: a, headers, body }) {
      const account = await operatingAccount(a, body.accountId);
      const code = parseBrCode(body.qrCode);
      if (!code.pixKey) throw new AppError(422, 'DYNAMIC_QR_NOT_SUPPORTED', 'This provider cannot fetch the payload of a dynamic BR Code');
      if (code.amountCents !== null && body.amount !== undefined && body.amount !== code.amountCents) {
        throw validationError('The code fixes the amount', [{ path: 'body.amount', message: `must be omitted or equal ${code.amountCents} cents` }]);
      }
      const amountCents = code.amountCents ?? body.amount;
      if (amountCents === undefined) throw validationError('The code has no amount', [{ path: 'body.amount', message: 'required: the code has no amount' }]);
      const key = keyOf(code.pixKey);
      if (!key) throw validationError('Invalid Pix BR Code: field 26-01 is not a valid Pix key', [{ path: 'body.qrCode', message: 'the key is not a CPF, CNPJ, e-mail, phone or EVP key' }]);
      return pay(
        a,
        {
          account,
          channel: 'QR_CODE_OUT',
          amountCents,
          ...key,
          qr: { txid: code.txid, merchantName: code.merchantName, merchantCity: code.merchantCity },
          description: `Pagamento QR Code ${code.merchantName}`,
          idempotencyKey: headers['idempotency-key'] ?? randomUUID(),
        },
        body.pin,
      );
    },
  });
}
