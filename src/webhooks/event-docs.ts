import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { accountNumber, branch, cents, cuid, documentNumber, paymentDate, pixEndToEndId, tevEndToEndId, utcDateTime } from '../http/common-schemas.ts';
import type { EventType } from '../events/outbox.ts';
import { z } from '../shared/zod.ts';

/*
 * The top-level `webhooks` of the integration API's document: what a registered endpoint receives for each event type
 * (section 6), with the delivery headers. Written from what the platform enqueues (src/pix, the settle_tev function);
 * the test suites check the deliveries they receive against it.
 */

const payoutId = () => cuid('p6c1v8x3z0b5n2m9q4w7k1r6');
const movementId = () => cuid('m3v8c1x6z9b2n7q4w0k5r8t1');
const chargeId = () => cuid('ch5v2n8m1q7w4x0z3b6k9r2t');
const txid = () => z.string().regex(/^[A-Za-z0-9]{26,35}$/).openapi({ example: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9' });
const tag = () => z.string().nullable().openapi({ description: "The charge's tag", example: 'order-8841' });
const refundEndToEndId = () => pixEndToEndId('D99999999202611221402aB3dE5fG7hJ');

const pixInReceived = z.object({
  payerName: z.string().openapi({ example: 'Pagador Sandbox' }),
  endToEndId: pixEndToEndId(),
  movementId: movementId(),
  receivedAt: utcDateTime(),
  amountCents: cents('10000'),
  payerBranch: z.string().openapi({ example: '0001' }),
  paymentDate: paymentDate(),
  payerAccount: z.string().openapi({ example: '9999999' }),
  pixAccountId: cuid('pk4m9q2x7v1c8n3b6z0w5r2t'),
  coreAccountId: cuid('co8n2m5q1w7x4z0b3v6c9k2r'),
  payerDocument: documentNumber('11144477735'),
  payerInstitution: z.string().openapi({ example: 'Banco Sandbox S.A.' }),
});

const payoutCommon = {
  payoutId: payoutId(),
  movementId: movementId(),
  endToEndId: pixEndToEndId(),
  amountCents: cents('2590'),
  occurredAt: utcDateTime(),
};

const pixPayoutSucceeded = z.object({
  ...payoutCommon,
  payerBranch: branch(),
  payerAccount: accountNumber(),
  beneficiaryName: z.string().openapi({ example: 'João Souza' }),
  beneficiaryBranch: z.string().openapi({ example: '0001' }),
  beneficiaryPixKey: z.string().openapi({ example: 'joao@example.com' }),
  beneficiaryAccount: z.string().openapi({ example: '12345678' }),
  beneficiaryDocument: z
    .string()
    .regex(/^(\*{3}\.\d{3}\.\d{3}-\*{2}|\d{14})$/)
    .openapi({ description: "The receiver's CNPJ, or its CPF masked as the payer is shown it (4th to 9th digits)", example: '***.444.777-**' }),
  beneficiaryPixKeyType: z.enum(['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP']),
  beneficiaryAccountType: z.string().nullable().openapi({ example: 'CACC' }),
  beneficiaryInstitution: z.string().openapi({ example: 'Banco Sandbox S.A.' }),
});

const pixPayoutFailed = z.object({ ...payoutCommon, reason: z.string().openapi({ example: 'Conta do recebedor encerrada' }) });
const pixPayoutCancelled = z.object({ ...payoutCommon, reason: z.string().nullable().openapi({ example: null }) });
const pixPayoutRefunded = z.object({
  ...payoutCommon,
  movementId: movementId().openapi({ description: 'The movement that credits the returned money' }),
  refundEndToEndId: refundEndToEndId(),
  refundAmountCents: cents('1295').openapi({ description: 'Less than amountCents: a partial return; equal: total' }),
});

const pixChargePaid = z.object({
  tag: tag(),
  txid: txid(),
  chargeId: chargeId(),
  payerName: z.string().openapi({ example: 'Pagador Sandbox' }),
  endToEndId: pixEndToEndId(),
  movementId: movementId(),
  occurredAt: utcDateTime(),
  amountCents: cents('5000'),
  paymentDate: utcDateTime().openapi({ description: 'ISO 8601 UTC (unlike pix.in.received)' }),
  payerDocument: documentNumber('11144477735'),
  payerInstitution: z.string().openapi({ example: 'Banco Sandbox S.A.' }),
  refundEndToEndId: z.null(),
  payerInstitutionIspb: z.string().regex(/^\d{8}$/).openapi({ example: '99999999' }),
});

const pixChargeExpired = z.object({ tag: tag(), txid: txid(), chargeId: chargeId(), occurredAt: utcDateTime(), amountCents: cents('5000') });

const pixChargeRefunded = z.object({
  tag: tag(),
  txid: txid(),
  chargeId: chargeId(),
  movementId: movementId().openapi({ description: 'The movement that debits the returned money' }),
  endToEndId: pixEndToEndId(),
  refundEndToEndId: refundEndToEndId(),
  amountCents: cents('5000'),
  occurredAt: utcDateTime(),
  refundAmountCents: cents('2000'),
});

const tevCommon = {
  tevTransferId: cuid('t2k7m4q9x1v8c3n6b0z5w7r4'),
  movementId: movementId().nullable().openapi({ description: "The movement of the side that receives the event; null when nothing moved" }),
  endToEndId: tevEndToEndId(),
  amountCents: cents('1050'),
  feeCents: cents('0').openapi({ description: 'The fee of the side that receives the event' }),
  externalRef: z.string().nullable().openapi({ example: 'order-8841' }),
  description: z.string().nullable().openapi({ example: 'Transferência para João Souza' }),
  payerAccount: accountNumber('1000023'),
  payerBranch: branch(),
  beneficiaryAccount: accountNumber('1000024'),
  beneficiaryBranch: branch(),
  occurredAt: utcDateTime(),
};
const tevSettled = z.object(tevCommon);
const tevFailed = z.object({ ...tevCommon, reason: z.string().openapi({ example: 'INSUFFICIENT_BALANCE' }) });

const at = '2026-11-22T13:45:07.123Z';
const payoutExample = { payoutId: 'p6c1v8x3z0b5n2m9q4w7k1r6', movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1', endToEndId: 'E99999999202611221345aB3dE5fG7hJ', amountCents: '2590', occurredAt: at };
const chargeExample = { tag: 'order-8841', txid: 'Kq3v9x0k2m8w4r7y1b5n6c2zA4s7d1f9', chargeId: 'ch5v2n8m1q7w4x0z3b6k9r2t' };
const tevExample = {
  tevTransferId: 't2k7m4q9x1v8c3n6b0z5w7r4',
  movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1',
  endToEndId: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40',
  amountCents: '1050',
  feeCents: '0',
  externalRef: 'order-8841',
  description: 'Transferência para João Souza',
  payerAccount: '1000023',
  payerBranch: '0001',
  beneficiaryAccount: '1000024',
  beneficiaryBranch: '0001',
  occurredAt: at,
};

const EVENTS: Record<EventType, { summary: string; data: z.ZodObject; example: Record<string, unknown> }> = {
  'pix.in.received': {
    summary: 'A Pix was received',
    data: pixInReceived,
    example: {
      payerName: 'Pagador Sandbox',
      endToEndId: 'E99999999202611221345aB3dE5fG7hJ',
      movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1',
      receivedAt: at,
      amountCents: '10000',
      payerBranch: '0001',
      paymentDate: '2026-11-22 10:45:07-03:00',
      payerAccount: '9999999',
      pixAccountId: 'pk4m9q2x7v1c8n3b6z0w5r2t',
      coreAccountId: 'co8n2m5q1w7x4z0b3v6c9k2r',
      payerDocument: '11144477735',
      payerInstitution: 'Banco Sandbox S.A.',
    },
  },
  'pix.payout.succeeded': {
    summary: 'A sent Pix settled',
    data: pixPayoutSucceeded,
    example: {
      ...payoutExample,
      payerBranch: '0001',
      payerAccount: '1000023',
      beneficiaryName: 'João Souza',
      beneficiaryBranch: '0001',
      beneficiaryPixKey: 'joao@example.com',
      beneficiaryAccount: '12345678',
      beneficiaryDocument: '***.444.777-**',
      beneficiaryPixKeyType: 'EMAIL',
      beneficiaryAccountType: 'CACC',
      beneficiaryInstitution: 'Banco Sandbox S.A.',
    },
  },
  'pix.payout.failed': { summary: 'A sent Pix failed; amount and fee are back on the balance', data: pixPayoutFailed, example: { ...payoutExample, reason: 'Conta do recebedor encerrada' } },
  'pix.payout.cancelled': { summary: 'A sent Pix was cancelled; amount and fee are back on the balance', data: pixPayoutCancelled, example: { ...payoutExample, reason: null } },
  'pix.payout.refunded': {
    summary: 'A sent Pix was returned, partially or totally',
    data: pixPayoutRefunded,
    example: { ...payoutExample, refundEndToEndId: 'D99999999202611221402aB3dE5fG7hJ', refundAmountCents: '1295' },
  },
  'pix.charge.paid': {
    summary: 'A charge was paid',
    data: pixChargePaid,
    example: {
      ...chargeExample,
      payerName: 'Pagador Sandbox',
      endToEndId: 'E99999999202611221345aB3dE5fG7hJ',
      movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1',
      occurredAt: at,
      amountCents: '5000',
      paymentDate: at,
      payerDocument: '11144477735',
      payerInstitution: 'Banco Sandbox S.A.',
      refundEndToEndId: null,
      payerInstitutionIspb: '99999999',
    },
  },
  'pix.charge.expired': { summary: 'A charge expired unpaid', data: pixChargeExpired, example: { ...chargeExample, occurredAt: at, amountCents: '5000' } },
  'pix.charge.refunded': {
    summary: 'A charge was returned to its payer, partially or totally',
    data: pixChargeRefunded,
    example: {
      ...chargeExample,
      movementId: 'm3v8c1x6z9b2n7q4w0k5r8t1',
      endToEndId: 'E99999999202611221345aB3dE5fG7hJ',
      refundEndToEndId: 'D99999999202611221402aB3dE5fG7hJ',
      amountCents: '5000',
      occurredAt: at,
      refundAmountCents: '2000',
    },
  },
  'tev.in.received': { summary: 'A TEV was credited to the account', data: tevSettled, example: tevExample },
  'tev.out.succeeded': { summary: 'A TEV sent by the account settled (also after submitted_unknown)', data: tevSettled, example: tevExample },
  'tev.out.failed': {
    summary: 'A TEV sent by the account was refused; nothing moved',
    data: tevFailed,
    example: { ...tevExample, movementId: null, reason: 'INSUFFICIENT_BALANCE' },
  },
};

/** Pascal case of an event type, for component names: `pix.in.received` → `PixInReceived`. */
const pascal = (type: string) => type.replace(/(^|\.)(\w)/g, (_m, _dot: string, c: string) => c.toUpperCase());

const deliveryHeaders = z.object({
  authorization: z.string().openapi({ description: 'Exactly the authToken given at registration, without `Bearer`. Compare it in constant time.' }),
  'webhook-id': z.uuid().openapi({ description: 'The event id: the same on every retry and redelivery of one event; dedupe on it', example: '0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d' }),
  'webhook-timestamp': z.string().regex(/^\d+$/).openapi({ description: 'Unix seconds of this attempt; refuse old ones to stop replays', example: '1795441507' }),
  'webhook-signature': z
    .string()
    .regex(/^v1,[A-Za-z0-9+/]+=*$/)
    .openapi({
      description: '`v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the authToken bytes (Standard Webhooks; verify with signingSecret)',
      example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    }),
});

/** Registers the eleven events under the document's top-level `webhooks`, each a POST of `{ event, data }`. */
export function documentWebhookEvents(registry: OpenAPIRegistry): void {
  for (const [type, { summary, data, example }] of Object.entries(EVENTS) as [EventType, (typeof EVENTS)[EventType]][]) {
    const body = z.object({ event: z.literal(type), data }).openapi(`${pascal(type)}Event`);
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `on${pascal(type)}`,
      summary,
      description:
        'Sent to every enabled endpoint of the Pix account subscribed to this event. Answer 2xx within 10 s; otherwise the delivery is retried ' +
        '(5 s doubling to 1 h, for 24 h). Delivery is at least once: dedupe by webhook-id.',
      tags: ['Events'],
      security: [],
      request: { headers: deliveryHeaders, body: { content: { 'application/json': { schema: body, example: { event: type, data: example } } }, required: true } },
      responses: {
        200: { description: 'Received: any 2xx ends the delivery' },
        500: { description: 'Any other answer, or none within 10 s: the delivery is retried' },
      },
    });
  }
}
