import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { EVENT_DATA, EVENT_TYPES, type EventData, type EventType } from '../events/catalog.ts';
import { z } from '../shared/zod.ts';

/*
 * The top-level `webhooks` of the integration API's document: what a registered endpoint receives for each event type
 * (section 6), with the delivery headers. Each event's `data` is its definition in the event catalog
 * (src/events/catalog.ts), the one its producers are typed by; here only its summary and example are added. The test
 * suites check the deliveries they receive against the document.
 */

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

const scheduledExample = {
  scheduleId: '7b1e4c2a-9d3f-4a8e-b6c5-0f2d1e3a4b5c',
  occurrenceDate: '2026-12-05',
  dueAt: '2026-12-05T09:00:00.000Z',
  startedAt: '2026-12-05T09:00:00.412Z',
  late: false,
  attempts: 1,
  kind: 'PIX_KEY' as const,
  amountCents: '15000',
  occurredAt: '2026-12-05T09:00:00.731Z',
};

/** Each event's summary and example; the example is typed by its definition, so it cannot drift from it. */
const EVENTS: { [T in EventType]: { summary: string; example: EventData<T> } } = {
  'pix.in.received': {
    summary: 'A Pix was received',
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
  'pix.payout.failed': { summary: 'A sent Pix failed; amount and fee are back on the balance', example: { ...payoutExample, reason: 'Conta do recebedor encerrada' } },
  'pix.payout.cancelled': { summary: 'A sent Pix was cancelled; amount and fee are back on the balance', example: { ...payoutExample, reason: null } },
  'pix.payout.refunded': {
    summary: 'A sent Pix was returned, partially or totally',
    example: { ...payoutExample, refundEndToEndId: 'D99999999202611221402aB3dE5fG7hJ', refundAmountCents: '1295' },
  },
  'pix.charge.paid': {
    summary: 'A charge was paid',
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
  'pix.charge.expired': { summary: 'A charge expired unpaid', example: { ...chargeExample, occurredAt: at, amountCents: '5000' } },
  'pix.charge.refunded': {
    summary: 'A charge was returned to its payer, partially or totally',
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
  'tev.in.received': { summary: 'A TEV was credited to the account', example: tevExample },
  'tev.out.succeeded': { summary: 'A TEV sent by the account settled (also after submitted_unknown)', example: tevExample },
  'tev.out.failed': {
    summary: 'A TEV sent by the account was refused; nothing moved',
    example: { ...tevExample, movementId: null, reason: 'INSUFFICIENT_BALANCE' },
  },
  'payment.scheduled.executed': {
    summary: "A scheduled payment's occurrence ran: paid (the TEV settled, the Pix debited) or held for the account's approver",
    example: { ...scheduledExample, status: 'PAID', tevTransferId: null, payoutId: 'p6c1v8x3z0b5n2m9q4w7k1r6', approvalRequestId: null },
  },
  'payment.scheduled.failed': {
    summary: "A scheduled payment's occurrence was refused (after its retries, for insufficient balance); the schedule goes on",
    example: { ...scheduledExample, attempts: 4, reason: 'INSUFFICIENT_BALANCE' },
  },
  'payment.batch.finished': {
    summary: 'A batch payout ended: every item paid, failed, invalid or cancelled (opt-in: list it at registration)',
    example: {
      batchId: 'b8k2m5q1w7x4z0v3c6n9r2t4',
      status: 'FINISHED',
      reason: null,
      counts: { total: 3, invalid: 1, pending: 0, processing: 0, paid: 2, failed: 0, cancelled: 0 },
      paidCents: '250000',
      occurredAt: at,
    },
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

/** Registers the events (the eleven of section 6, then the platform's own) under the document's top-level `webhooks`, each a POST of `{ event, data }`. */
export function documentWebhookEvents(registry: OpenAPIRegistry): void {
  for (const type of EVENT_TYPES) {
    const { summary, example } = EVENTS[type];
    const body = z.object({ event: z.literal(type), data: EVENT_DATA[type] }).openapi(`${pascal(type)}Event`);
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
