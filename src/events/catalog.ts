import { accountNumber, branch, cents, cuid, documentNumber, paymentDate, pixEndToEndId, tevEndToEndId, utcDateTime } from '../shared/formats.ts';
import { z } from '../shared/zod.ts';

/*
 * The events of interface.md section 6, and the platform's own after them: the `data` of each type, defined once. The TypeScript producers are typed by it
 * (`enqueueEvents` takes an `OutboxEvent`), the OpenAPI `webhooks` document it (src/webhooks/event-docs.ts), and
 * test/domain/events.test.ts parses every event the producers write with it, those of the SQL posting functions
 * (src/ledger/sql/settle_tev.sql, settle_pix_payout.sql, return_pix_payout.sql) included. Nothing parses payloads at run time: the request
 * path pays nothing for them.
 */

/** The event types, in the order of section 6, then the platform's own. */
export const EVENT_TYPES = [
  'pix.in.received',
  'pix.payout.succeeded',
  'pix.payout.failed',
  'pix.payout.cancelled',
  'pix.payout.refunded',
  'pix.charge.paid',
  'pix.charge.expired',
  'pix.charge.refunded',
  'tev.in.received',
  'tev.out.succeeded',
  'tev.out.failed',
  // Beyond section 6, opt-in at registration: the occurrences of scheduled payments, and a batch payout's end.
  'payment.scheduled.executed',
  'payment.scheduled.failed',
  'payment.batch.finished',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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

const scheduledOccurrence = {
  scheduleId: z.uuid().openapi({ example: '7b1e4c2a-9d3f-4a8e-b6c5-0f2d1e3a4b5c' }),
  occurrenceDate: z.iso.date().openapi({ description: 'The São Paulo date of the occurrence', example: '2026-12-05' }),
  dueAt: utcDateTime('2026-12-05T09:00:00.000Z'),
  startedAt: utcDateTime('2026-12-05T09:00:00.412Z').openapi({ description: 'When its first attempt started' }),
  late: z.boolean().openapi({ description: 'It started later than its due time allows (the platform was away): it ran as soon as it could' }),
  attempts: z.number().int().min(1).openapi({ description: 'Attempts made: retries follow refusals for insufficient balance', example: 1 }),
  kind: z.enum(['PIX_KEY', 'TEV']),
  amountCents: cents('15000'),
  occurredAt: utcDateTime('2026-12-05T09:00:00.731Z'),
};
const scheduledExecuted = z.object({
  ...scheduledOccurrence,
  status: z.enum(['PAID', 'HELD_FOR_APPROVAL']).openapi({ description: 'PAID: the TEV settled or the Pix was debited; HELD_FOR_APPROVAL: the approver decides' }),
  tevTransferId: cuid('t2k7m4q9x1v8c3n6b0z5w7r4').nullable(),
  payoutId: payoutId().nullable().openapi({ description: "The Pix payout; its pix.payout.* events follow as any payout's" }),
  approvalRequestId: z.uuid().nullable().openapi({ example: null }),
});
const scheduledFailed = z.object({
  ...scheduledOccurrence,
  reason: z.string().openapi({ description: "The refusal's code (INSUFFICIENT_BALANCE after the retries, LIMIT_EXCEEDED, …)", example: 'INSUFFICIENT_BALANCE' }),
});

/** A batch payout's items by state: at the end none is PENDING or PROCESSING. */
export const batchCounts = z
  .object({
    total: z.number().int().openapi({ example: 3 }),
    invalid: z.number().int().openapi({ description: 'Refused by the validation: never paid', example: 1 }),
    pending: z.number().int().openapi({ example: 0 }),
    processing: z.number().int().openapi({ description: 'Pix debited, waiting for the provider', example: 0 }),
    paid: z.number().int().openapi({ example: 2 }),
    failed: z.number().int().openapi({ description: 'Refused when paid (INSUFFICIENT_BALANCE, LIMIT_EXCEEDED, …), or a Pix failed or cancelled at the provider', example: 0 }),
    cancelled: z.number().int().openapi({ description: 'Not paid: the batch was cancelled, rejected or refused first', example: 0 }),
  })
  .openapi('PaymentBatchCounts');

const paymentBatchFinished = z.object({
  batchId: cuid('b8k2m5q1w7x4z0v3c6n9r2t4'),
  status: z.enum(['FINISHED', 'CANCELLED', 'REJECTED', 'REFUSED']).openapi({
    description: 'FINISHED: every valid item was paid or failed (or cancelled mid-batch); CANCELLED before it started; REJECTED: its approval was rejected, expired or cancelled; REFUSED: its total with fees was not available when it started',
  }),
  reason: z.string().nullable().openapi({ description: 'Why a batch ended without paying: APPROVAL_REJECTED, APPROVAL_EXPIRED, DUAL_APPROVAL_DISABLED, INSUFFICIENT_BALANCE, CANCELLED', example: null }),
  counts: batchCounts,
  paidCents: cents('250000').openapi({ description: 'What the paid items sent, fees not included' }),
  occurredAt: utcDateTime(),
});

/** The `data` of each event type. */
export const EVENT_DATA = {
  'pix.in.received': pixInReceived,
  'pix.payout.succeeded': pixPayoutSucceeded,
  'pix.payout.failed': pixPayoutFailed,
  'pix.payout.cancelled': pixPayoutCancelled,
  'pix.payout.refunded': pixPayoutRefunded,
  'pix.charge.paid': pixChargePaid,
  'pix.charge.expired': pixChargeExpired,
  'pix.charge.refunded': pixChargeRefunded,
  'tev.in.received': tevSettled,
  'tev.out.succeeded': tevSettled,
  'tev.out.failed': tevFailed,
  'payment.scheduled.executed': scheduledExecuted,
  'payment.scheduled.failed': scheduledFailed,
  'payment.batch.finished': paymentBatchFinished,
} satisfies Record<EventType, z.ZodObject>;

export type EventData<T extends EventType> = z.infer<(typeof EVENT_DATA)[T]>;

/** An event as its producer writes it: a type and the data of that type, so a producer cannot mix them up. */
export type TypedEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
