import { accountNumber, branch, cents, cuid, utcDateTime } from '../http/common-schemas.ts';
import { freeText, z } from '../shared/zod.ts';

/** A payment's description, on both statements: TEV (both hosts) and Pix. */
export const description = freeText().max(140, 'at most 140 characters');

/** The integrator's own reference of a TEV, unique per source account. */
export const externalRef = freeText().min(1).max(128, 'at most 128 characters');

/** Why a TEV was refused with nothing moved (`tev.out.failed` carries the same `reason`). */
export const TEV_REJECTION_REASONS = [
  'INSUFFICIENT_BALANCE',
  'SOURCE_NOT_ACTIVE',
  'DESTINATION_NOT_ACTIVE',
  'AMOUNT_ABOVE_LIMIT',
  'AMOUNT_BELOW_RECEIVE_FEE',
  'APPROVAL_REQUIRED',
  'LIMIT_EXCEEDED',
  'SANDBOX_FAILURE',
] as const;

const tevId = () => cuid('t2k7m4q9x1v8c3n6b0z5w7r4').openapi({ description: 'The transfer; a TEV\'s payoutId' });

export const TevDone = z
  .object({
    kind: z.literal('done'),
    tevId: tevId(),
    status: z.literal('DONE'),
    amountCents: cents('1050'),
    feeCents: cents('0').openapi({ description: 'The send fee debited from the source' }),
  })
  .openapi('TevDone');

export const TevRejected = z
  .object({
    kind: z.literal('rejected'),
    tevId: tevId(),
    status: z.literal('FAILED'),
    reason: z.enum(TEV_REJECTION_REASONS),
    providerStatusCode: z.literal(422).optional().openapi({ description: 'Integration API only: the HTTP status of the refusal' }),
  })
  .openapi('TevRejected');

export const TevSubmittedUnknown = z
  .object({
    kind: z.literal('submitted_unknown'),
    tevId: tevId(),
    status: z.literal('SUBMITTED_UNKNOWN'),
    reason: z.string().openapi({ description: 'What to do meanwhile; never resend under another Idempotency-Key' }),
  })
  .openapi('TevSubmittedUnknown');

export const tevExamples = {
  done: { kind: 'done' as const, tevId: 't2k7m4q9x1v8c3n6b0z5w7r4', status: 'DONE' as const, amountCents: '1050', feeCents: '0' },
  rejected: { kind: 'rejected' as const, tevId: 't2k7m4q9x1v8c3n6b0z5w7r4', status: 'FAILED' as const, reason: 'INSUFFICIENT_BALANCE' as const },
  submittedUnknown: {
    kind: 'submitted_unknown' as const,
    tevId: 't2k7m4q9x1v8c3n6b0z5w7r4',
    status: 'SUBMITTED_UNKNOWN' as const,
    reason: 'The outcome is not known yet; the platform resolves it by itself. Follow GET /v1/tev/:id or the tev.out.* events.',
  },
};

const counterpart = z.object({ branch: branch(), account: accountNumber() }).openapi('TevCounterpart');

export const TevRead = z
  .object({
    id: tevId(),
    status: z.enum(['DONE', 'FAILED', 'SUBMITTED_UNKNOWN']),
    direction: z.enum(['out', 'in']),
    amountCents: cents(),
    feeCents: cents('0').openapi({ description: 'The fee of the querying side: the send fee for out, the receive fee for in' }),
    description: z.string().nullable().openapi({ example: 'Transferência para João Souza' }),
    externalRef: z.string().nullable().openapi({ example: 'order-8841' }),
    destination: counterpart.optional().openapi({ description: 'Only when direction is out' }),
    origin: counterpart.optional().openapi({ description: 'Only when direction is in' }),
    createdAt: utcDateTime(),
    resolvedAt: utcDateTime().nullable().openapi({ description: 'When it settled or failed; null while SUBMITTED_UNKNOWN' }),
  })
  .openapi('Tev');

export const tevReadExample = {
  id: 't2k7m4q9x1v8c3n6b0z5w7r4',
  status: 'DONE' as const,
  direction: 'out' as const,
  amountCents: '1050',
  feeCents: '0',
  description: 'Transferência para João Souza',
  externalRef: 'order-8841',
  destination: { branch: '0001', account: '1000024' },
  createdAt: '2026-11-22T13:45:07.123Z',
  resolvedAt: '2026-11-22T13:45:07.131Z',
};
