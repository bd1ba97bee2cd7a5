import { accountIdParams } from '../http/common-schemas.ts';
import { looksLikeCuid } from '../shared/ids.ts';
import { cursorParam, limitParam } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';

const day = z.iso.date({ error: (issue) => (issue.input === undefined ? 'required, as YYYY-MM-DD' : 'must be a real date as YYYY-MM-DD') });

export const statementQuery = z
  .object({
    startDate: day.openapi({ description: 'YYYY-MM-DD, inclusive, UTC' }),
    endDate: day.openapi({ description: 'YYYY-MM-DD, inclusive, UTC' }),
    limit: limitParam,
    cursor: cursorParam,
  })
  .refine((q) => q.endDate >= q.startDate, { path: ['endDate'], message: 'endDate must not be before startDate' });

export const payoutParams = accountIdParams.extend({
  payoutId: z.string().refine(looksLikeCuid, 'payoutId must be a cuid').openapi({ description: 'payout.payoutId of the creating operation; a TEV\'s tevId' }),
});

/** Counterparts of a movement; which fields are present depends on the channel and the direction (section 2.6). */
const Party = z
  .object({
    ispb: z.string().optional(),
    name: z.string().nullable().optional(),
    branch: z.string(),
    account: z.string(),
    document: z.string().nullable().optional(),
    institution: z.string().optional(),
    pixKey: z.string().optional(),
    pixKeyType: z.string().optional(),
    accountType: z.string().optional(),
    branchDigit: z.string().nullable().optional(),
    accountModel: z.string().optional(),
  })
  .openapi('MovementParty');

const movementMetadata = {
  date: z.string().openapi({ description: 'ISO 8601 UTC' }),
  endToEndId: z.string().nullable(),
  paymentDate: z.string().optional().openapi({ description: 'YYYY-MM-DD HH:mm:ss-03:00; present once settled' }),
  payer: Party,
  beneficiary: Party,
  pixAccountId: z.string().optional(),
};

const StatementEntry = z
  .object({
    id: z.string(),
    kind: z.enum(['PRIMARY', 'FEE', 'REVERSAL']),
    amount: z.number().openapi({ description: 'reais, signed' }),
    balanceAfter: z.number().openapi({ description: 'reais' }),
    createdAt: z.string(),
  })
  .openapi('StatementLedgerEntry');

export const StatementTransaction = z
  .object({
    id: z.uuid(),
    amount: z.number().openapi({ description: 'reais, always positive' }),
    credit: z.boolean(),
    description: z.string(),
    type: z.enum(['PIX', 'TEF']),
    status: z.enum(['DONE', 'PENDING', 'FAILED']),
    statusExternal: z.string(),
    createdAt: z.string(),
    balanceAfterTransaction: z.number().openapi({ description: 'reais, after every entry of the transaction' }),
    endToEndId: z.string().nullable(),
    statementMetadata: z.object(movementMetadata).openapi('StatementMetadata'),
    ledgerEntries: z.array(StatementEntry),
  })
  .openapi('StatementTransaction');

export const StatementPage = z
  .object({
    transactions: z.array(StatementTransaction),
    pagination: z.object({ limit: z.number().int(), nextCursor: z.string().nullable(), hasMore: z.boolean() }),
  })
  .openapi('Statement');

export const Payout = z
  .object({
    id: z.string().openapi({ description: 'the movement id; the payoutId while nothing is posted' }),
    type: z.enum(['DEBIT', 'CREDIT']),
    status: z.enum(['PENDING', 'PROCESSING', 'POSTED', 'FAILED', 'CANCELLED', 'REFUNDED']),
    source: z.enum(['PIX_OUT', 'TEF_OUT', 'QR_CODE_OUT']),
    description: z.string(),
    externalRef: z.string().nullable(),
    feeAmount: z.string().nullable().openapi({ description: 'cents; null when no fee' }),
    reversesMovementId: z.string().nullable(),
    createdAt: z.string(),
    entries: z.array(
      z
        .object({
          id: z.string(),
          accountId: z.string(),
          amount: z.string().openapi({ description: 'cents, negative for debits' }),
          balanceAfter: z.string().openapi({ description: 'cents' }),
          kind: z.enum(['PRIMARY', 'FEE', 'REVERSAL']),
          createdAt: z.string(),
        })
        .openapi('PayoutEntry'),
    ),
    metadata: z.object(movementMetadata).openapi('PayoutMetadata'),
  })
  .openapi('Payout');
