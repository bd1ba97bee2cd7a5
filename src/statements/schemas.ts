import { accountIdParams, cuid, paginated, paymentDate, signedCents, utcDateTime, uuid } from '../http/common-schemas.ts';
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
    ispb: z.string().regex(/^\d{8}$/).optional().openapi({ example: '00000000' }),
    name: z.string().nullable().optional().openapi({ example: 'João Souza' }),
    branch: z.string().openapi({ example: '0001' }),
    account: z.string().openapi({ example: '1000024' }),
    document: z.string().nullable().optional().openapi({ description: "CPF or CNPJ, digits only, except an outgoing Pix's receiver's CPF: masked as `***.456.789-**` (4th to 9th digits kept)", example: '11144477735' }),
    institution: z.string().optional(),
    pixKey: z.string().optional(),
    pixKeyType: z.string().optional(),
    accountType: z.string().optional().openapi({ example: 'CACC' }),
    branchDigit: z.string().nullable().optional(),
    accountModel: z.string().optional(),
  })
  .openapi('MovementParty');

const movementMetadata = {
  date: utcDateTime().openapi({ description: 'When the payment was submitted (UTC)' }),
  endToEndId: z.string().nullable().openapi({ description: 'A TEV: its UUID; a Pix: its 32-character end-to-end id; null until settled', example: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40' }),
  paymentDate: paymentDate().optional().openapi({ description: 'YYYY-MM-DD HH:mm:ss-03:00; present once settled' }),
  payer: Party,
  beneficiary: Party,
  pixAccountId: cuid('pk4m9q2x7v1c8n3b6z0w5r2t').optional().openapi({ description: "The sending account's Pix account id (outgoing payments)" }),
};

const metadataExample = {
  date: '2026-11-22T13:45:07.123Z',
  endToEndId: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40',
  paymentDate: '2026-11-22 10:45:07-03:00',
  payer: { branch: '0001', account: '1000023' },
  beneficiary: { ispb: '00000000', name: 'João Souza', branch: '0001', account: '1000024', document: '11144477735', accountType: 'CACC', branchDigit: null, accountModel: 'INTERNAL' },
  pixAccountId: 'pk4m9q2x7v1c8n3b6z0w5r2t',
};

const StatementEntry = z
  .object({
    id: cuid('e5n8q2w7x1c4v9b3m6k0z7r2'),
    kind: z.enum(['PRIMARY', 'FEE', 'REVERSAL']),
    amount: z.number().openapi({ description: 'reais, signed', example: -10.5 }),
    balanceAfter: z.number().openapi({ description: 'reais', example: 89.5 }),
    createdAt: utcDateTime(),
  })
  .openapi('StatementLedgerEntry');

export const StatementTransaction = z
  .object({
    id: uuid('c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f'),
    amount: z.number().openapi({ description: 'reais, always positive', example: 10.5 }),
    credit: z.boolean(),
    description: z.string().openapi({ example: 'Transferência para João Souza' }),
    type: z.enum(['PIX', 'TEF']),
    status: z.enum(['DONE', 'PENDING', 'FAILED']),
    statusExternal: z.string().openapi({ example: 'SUCCESS' }),
    createdAt: utcDateTime(),
    balanceAfterTransaction: z.number().openapi({ description: 'reais, after every entry of the transaction', example: 89.5 }),
    endToEndId: z.string().nullable().openapi({ example: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40' }),
    statementMetadata: z.object(movementMetadata).openapi('StatementMetadata'),
    ledgerEntries: z.array(StatementEntry),
  })
  .openapi('StatementTransaction');

export const StatementPage = paginated('transactions', StatementTransaction).openapi('Statement');

export const statementExample = {
  transactions: [
    {
      id: 'c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
      amount: 10.5,
      credit: false,
      description: 'Transferência para João Souza',
      type: 'TEF' as const,
      status: 'DONE' as const,
      statusExternal: 'SUCCESS',
      createdAt: '2026-11-22T13:45:07.123Z',
      balanceAfterTransaction: 89.5,
      endToEndId: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40',
      statementMetadata: metadataExample,
      ledgerEntries: [{ id: 'e5n8q2w7x1c4v9b3m6k0z7r2', kind: 'PRIMARY' as const, amount: -10.5, balanceAfter: 89.5, createdAt: '2026-11-22T13:45:07.123Z' }],
    },
  ],
  pagination: { limit: 20, nextCursor: null, hasMore: false },
};

export const Payout = z
  .object({
    id: cuid('m3v8c1x6z9b2n7q4w0k5r8t1').openapi({ description: 'the movement id; the payoutId while nothing is posted' }),
    type: z.enum(['DEBIT', 'CREDIT']),
    status: z.enum(['PENDING', 'PROCESSING', 'POSTED', 'FAILED', 'CANCELLED', 'REFUNDED']),
    source: z.enum(['PIX_OUT', 'TEF_OUT', 'QR_CODE_OUT']),
    description: z.string().openapi({ example: 'Transferência para João Souza' }),
    externalRef: z.string().nullable(),
    feeAmount: z.string().regex(/^\d+$/).nullable().openapi({ description: 'cents; null when no fee', example: null }),
    reversesMovementId: cuid().nullable().openapi({ example: null }),
    createdAt: utcDateTime(),
    entries: z.array(
      z
        .object({
          id: cuid('e5n8q2w7x1c4v9b3m6k0z7r2'),
          accountId: cuid('co8n2m5q1w7x4z0b3v6c9k2r').openapi({ description: "The internal id (`coreAccountId`) of the account the entry is posted to" }),
          amount: signedCents('-1050').openapi({ description: 'cents, negative for debits' }),
          balanceAfter: signedCents('8950').openapi({ description: 'cents' }),
          kind: z.enum(['PRIMARY', 'FEE', 'REVERSAL']),
          createdAt: utcDateTime(),
        })
        .openapi('PayoutEntry'),
    ),
    metadata: z.object(movementMetadata).openapi('PayoutMetadata'),
  })
  .openapi('Payout');

export const payoutExample = {
  id: 'm3v8c1x6z9b2n7q4w0k5r8t1',
  type: 'DEBIT' as const,
  status: 'POSTED' as const,
  source: 'TEF_OUT' as const,
  description: 'Transferência para João Souza',
  externalRef: null,
  feeAmount: null,
  reversesMovementId: null,
  createdAt: '2026-11-22T13:45:07.123Z',
  entries: [
    { id: 'e5n8q2w7x1c4v9b3m6k0z7r2', accountId: 'co8n2m5q1w7x4z0b3v6c9k2r', amount: '-1050', balanceAfter: '8950', kind: 'PRIMARY' as const, createdAt: '2026-11-22T13:45:07.123Z' },
  ],
  metadata: metadataExample,
};

export const balanceQuery = z.object({
  at: z.iso
    .datetime({ offset: true, error: 'at must be an ISO 8601 date and time with its offset, e.g. 2026-11-22T10:45:07.123-03:00 or 2026-11-22T13:45:07Z' })
    .optional()
    .openapi({ description: 'The instant, to the millisecond (a finer fraction is cut to it); now when absent', example: '2026-11-22T10:45:07.123-03:00' }),
});

export const BalanceAt = z
  .object({
    accountId: uuid(),
    at: utcDateTime().nullable().openapi({ description: 'The instant asked for, in UTC; null for the current balance' }),
    balance: z.number().openapi({ description: 'reais, like the account\'s `balance`: the sum of every entry of the account up to `at`', example: 89.5 }),
    lastTransactionId: uuid('c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f')
      .nullable()
      .openapi({ description: "The statement `id` of the last movement the balance includes; null when none (before the account's first)" }),
  })
  .openapi('BalanceAt');

export const balanceAtExample = { accountId: '5b7e3c1a-9d2f-4e8b-a6c4-1f0e2d3c4b5a', at: '2026-11-22T13:45:07.123Z', balance: 89.5, lastTransactionId: 'c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f' };

/**
 * The first day after the longest range an export takes: one year from its start (29 February's year ends on
 * 28 February). Null for a start that is not a date, which its own rule refuses: zod runs an object's refinements on
 * a value whose fields were refused too.
 */
function yearAfter(startDate: string): string | null {
  const [y, m, d] = startDate.split('-').map(Number) as [number, number, number];
  const next = new Date(Date.UTC(y + 1, m - 1, d));
  return Number.isNaN(next.getTime()) ? null : next.toISOString().slice(0, 10);
}

const isDay = (value: unknown): value is string => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);

export const exportQuery = z
  .object({
    startDate: day.openapi({ description: 'YYYY-MM-DD, inclusive, UTC' }),
    endDate: day.openapi({ description: 'YYYY-MM-DD, inclusive, UTC; less than one year after startDate' }),
  })
  .refine((q) => q.endDate >= q.startDate, { path: ['endDate'], message: 'endDate must not be before startDate' })
  .refine((q) => yearAfter(q.startDate) === null || !isDay(q.endDate) || q.endDate < yearAfter(q.startDate)!, { path: ['endDate'], message: 'an export covers at most one year: endDate must be before startDate plus one year' });

export const OFX_EXAMPLE =
  'OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:UTF-8\r\nCHARSET:NONE\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n' +
  '<OFX>\r\n…\r\n<STMTTRN>\r\n<TRNTYPE>DEBIT\r\n<DTPOSTED>20261122104507[-3:BRT]\r\n<TRNAMT>-27.00\r\n<FITID>c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f\r\n<NAME>João Souza\r\n<MEMO>Aluguel de março\r\n</STMTTRN>\r\n…\r\n</OFX>\r\n';

/** What a PDF file starts with: an example can only show that much of it. */
export const PDF_EXAMPLE = '%PDF-1.3 …';

export const CSV_EXAMPLE =
  'date,createdAt,transactionId,type,direction,description,counterpart,amount,fee,balanceAfter,endToEndId,status\r\n' +
  '2026-11-22 10:45:07,2026-11-22T13:45:07.123Z,c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f,TEF,DEBIT,Aluguel de março,João Souza,-27.00,1.50,73.00,9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40,DONE\r\n';
