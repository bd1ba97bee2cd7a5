import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { rawBodyOf } from '../http/app.ts';
import { accountNumber, branch, cents, cuid, pixEndToEndId } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { PlatformContext } from '../platform-context.ts';
import { documentSchema } from '../shared/documents.ts';
import { Bulkhead } from '../shared/bulkhead.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { hit, rateLimited, windowEnd } from '../shared/rate-limit.ts';
import { freeText, z } from '../shared/zod.ts';
import { isFinalPayoutState, wakePayoutWorkflow } from './payout-wake.ts';
import { applyProviderNotification } from './provider-notifications.ts';
import { REPLAY_WINDOW_SECONDS, verifyProviderSignature } from './provider-signature.ts';

export const PROVIDER_NOTIFICATIONS_PATH = '/v1/pix/provider/notifications';

const SIGNATURE_SCHEME = 'pixProviderSignature';

const headers = z.object({
  'webhook-id': z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'letters, digits and . _ : -, up to 128')
    .openapi({ description: "The notification's id, the same on every retry: a notification is applied once per id", example: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' }),
  'webhook-timestamp': z
    .string()
    .regex(/^\d{1,12}$/, 'Unix seconds')
    .transform(Number)
    .openapi({ description: `When the provider sent it, Unix seconds; refused (401) more than ${REPLAY_WINDOW_SECONDS} s away from the platform's clock`, example: '1795873507' }),
});

const reason = freeText().trim().min(1).max(200).openapi({ example: 'Conta do recebedor encerrada' });
const payoutId = cuid('p4k8m2x6z0b3n7q1w5r9t2v6').openapi({ description: 'The payout, as the platform named it when it submitted it' });
const payoutEndToEndId = pixEndToEndId('E00000000202611241200aB3dE5fG7hJ').openapi({ description: "The payout's end-to-end id, as the provider assigned it" });

const Notification = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('payout.settled'), data: z.object({ payoutId, endToEndId: payoutEndToEndId, settledAt: z.iso.datetime({ offset: true }) }) }),
    z.object({ type: z.literal('payout.failed'), data: z.object({ payoutId, endToEndId: payoutEndToEndId, reason }) }),
    z.object({ type: z.literal('payout.cancelled'), data: z.object({ payoutId, endToEndId: payoutEndToEndId, reason }) }),
    z.object({
      type: z.literal('payout.returned'),
      data: z.object({
        payoutId,
        endToEndId: payoutEndToEndId,
        returnEndToEndId: pixEndToEndId('D99999999202612241200xY1zW3vU5tQ').openapi({ description: 'The return (devolução), a `D…` id: each is credited once' }),
        amountCents: centsAmountSchema.openapi({ description: 'What this return gives back; the returns of a payout add up to at most its amount', example: '500' }),
        returnedAt: z.iso.datetime({ offset: true }),
        settledAt: z.iso.datetime({ offset: true }).optional().openapi({ description: 'When the payout settled, for a payout the platform has not seen settle yet; default returnedAt' }),
      }),
    }),
    z.object({
      type: z.literal('pix.received'),
      data: z.object({
        endToEndId: pixEndToEndId(),
        amountCents: centsAmountSchema.openapi({ example: '10000' }),
        receiver: z.object({ branch: branch(), account: accountNumber() }).openapi({ description: 'The account of the platform credited' }),
        payer: z.object({
          name: freeText().trim().min(1).max(140).openapi({ example: 'Maria da Silva' }),
          document: documentSchema,
          ispb: z.string().regex(/^\d{8}$/).openapi({ example: '99999999' }),
          institution: freeText().trim().min(1).max(140).openapi({ example: 'Banco Sandbox S.A.' }),
          branch: z.string().regex(/^\d{1,4}$/).openapi({ example: '0001' }),
          account: z.string().regex(/^\d{1,20}$/).openapi({ example: '9999999' }),
        }),
        txid: z
          .string()
          .regex(/^[A-Za-z0-9]{26,35}$/)
          .optional()
          .openapi({
            description:
              "The txid of the platform's charge this Pix pays (a payer scanned its dynamic BR Code): the charge is paid, or the Pix refused with why (404 `NOT_FOUND`, 409 `CHARGE_ALREADY_PAID` / `CHARGE_EXPIRED`, 422 `CHARGE_AMOUNT_MISMATCH`)",
            example: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9',
          }),
      }),
    }),
  ])
  .openapi('PixProviderNotification');

const PayoutResult = z
  .object({
    payoutId: cuid('p4k8m2x6z0b3n7q1w5r9t2v6'),
    payoutStatus: z.enum(['PROCESSING', 'POSTED', 'FAILED', 'CANCELLED', 'REFUNDED']).openapi({ description: 'The payout as it stands after the notification' }),
    refundedCents: cents('0').openapi({ description: 'Returned so far' }),
  })
  .openapi('PixProviderPayoutResult');
const IncomingResult = z
  .object({ movementId: cuid('m3v8c1x6z9b2n7q4w0k5r8t1'), endToEndId: pixEndToEndId(), amountCents: cents('10000'), feeCents: cents('0') })
  .openapi('PixProviderIncomingResult');

const Answer = z
  .object({
    status: z.enum(['applied', 'duplicate']).openapi({ description: '`duplicate`: this webhook-id was received before; `result` is what it did then, and nothing moved now' }),
    notificationId: z.string().openapi({ example: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' }),
    type: z.enum(['payout.settled', 'payout.failed', 'payout.cancelled', 'payout.returned', 'pix.received']),
    result: z.union([PayoutResult, IncomingResult]),
  })
  .openapi('PixProviderNotificationAnswer');

/**
 * The provider proves each notification with its signature, checked first: a genuine notification costs no database
 * work here. The refused ones (unsigned, forged, stale) are counted per client address, shared by every api, and past
 * the limit they are answered 429 until the minute ends; an api that saw an address past it refuses that address's
 * next forgeries without counting them, so a flood costs one write per api and minute. (Checking the count first cost
 * every genuine notification a read; counting genuine ones cost an upsert of one row that each waited for in turn.)
 */
function signatureAuthenticator({ config, orm }: PlatformContext): Authenticator<undefined> {
  const limit = { name: 'pix-provider-notifications', limit: config.PIX_PROVIDER_NOTIFICATIONS_MAX_PER_MINUTE, windowSeconds: 60 };
  /** Addresses seen past the limit, with the end of that window (ms); a few at most, forgotten as they end. */
  const pastLimit = new Map<string, number>();
  return {
    security: SIGNATURE_SCHEME,
    raises: refusals(hit, verifyProviderSignature),
    async authenticate(req, h) {
      const signatures = req.headers['webhook-signature'];
      try {
        verifyProviderSignature(
          config.PIX_PROVIDER_WEBHOOK_SECRET,
          { id: h['webhook-id'] as string, timestamp: h['webhook-timestamp'] as number, signatures: typeof signatures === 'string' ? signatures : undefined, raw: rawBodyOf(req) },
          Math.floor(Date.now() / 1000),
        );
      } catch (refused) {
        const address = req.ip ?? 'unknown';
        const now = Date.now();
        for (const [seen, until] of pastLimit) if (until <= now) pastLimit.delete(seen);
        if (pastLimit.has(address)) throw rateLimited(limit);
        try {
          await hit(orm.em.fork(), limit, address);
        } catch (err) {
          if (err instanceof DomainError && err.refusal === 'RATE_LIMITED') pastLimit.set(address, windowEnd(limit, now));
          throw err;
        }
        throw refused;
      }
      return undefined;
    },
  };
}

/** `POST {api_url}/v1/pix/provider/notifications`: what the Pix provider tells the platform, signed. */
export function registerPixProviderNotificationRoutes(router: Router, registry: OpenAPIRegistry, platform: PlatformContext): void {
  const turns = new Bulkhead(platform.config.PIX_PROVIDER_NOTIFICATIONS_CONCURRENCY, platform.config.PIX_PROVIDER_NOTIFICATIONS_MAX_WAITING);
  registry.registerComponent('securitySchemes', SIGNATURE_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the decoded bytes of ' +
      '`PIX_PROVIDER_WEBHOOK_SECRET` (`whsec_<base64>`); several may be given, space-separated. Missing or not matching: 401 `INVALID_SIGNATURE`.',
  });
  defineRoute(router, registry, {
    method: 'post',
    path: PROVIDER_NOTIFICATIONS_PATH,
    operationId: 'receivePixProviderNotification',
    tags: ['Pix provider'],
    summary: "The Pix provider's notification of a payout settled, failed, cancelled or returned, or of an incoming Pix",
    description:
      'Called by the PSP, never by integrators. Applied once per `webhook-id` (sent again: 200 `duplicate` with the first result); a payout ' +
      'already final is answered as it stands and nothing moves; a return is credited once per `returnEndToEndId`, an incoming Pix once per ' +
      '`endToEndId`; with a `txid`, it pays that charge of the platform, or is refused with why (the payer\'s payout then fails). Any 4xx moves nothing. ' +
      'Each api applies a few at once (`PIX_PROVIDER_NOTIFICATIONS_CONCURRENCY`) and lets a bounded number wait their turn; past that, 503 ' +
      '`TEMPORARILY_UNAVAILABLE` with nothing applied: send it again later.',
    headers,
    auth: signatureAuthenticator(platform),
    body: Notification,
    bodyExample: { type: 'payout.settled', data: { payoutId: 'p4k8m2x6z0b3n7q1w5r9t2v6', endToEndId: 'E00000000202611241200aB3dE5fG7hJ', settledAt: '2026-11-24T12:00:02.000Z' } },
    responses: {
      200: {
        description: 'Applied now, or received before (`duplicate`)',
        schema: Answer,
        example: { status: 'applied', notificationId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', type: 'payout.settled', result: { payoutId: 'p4k8m2x6z0b3n7q1w5r9t2v6', payoutStatus: 'POSTED', refundedCents: '0' } },
      },
    },
    raises: [Bulkhead, applyProviderNotification],
    async handler({ headers: h, body, req }) {
      const { answer, payout } = await turns.run(() =>
        applyProviderNotification(platform.orm.em.fork(), platform.config.TEMPORAL_TASK_QUEUE, h['webhook-id'], rawBodyOf(req), body),
      );
      if (payout && isFinalPayoutState(payout.state)) wakePayoutWorkflow(platform, payout, payout.state);
      return { status: 200, body: answer };
    },
  });
}
