import { cuid, paymentDate, uuid } from '../http/common-schemas.ts';
import { accountIdParams } from '../http/common-schemas.ts';
import { z } from '../shared/zod.ts';

export const receiptParams = accountIdParams.extend({ transactionId: z.uuid({ error: 'transactionId must be a UUID: a statement transaction id' }) });

export const verifyParams = z.object({
  code: z
    .string()
    .regex(/^[0-9A-Za-z-]{16,24}$/, 'code must be a receipt authentication code, e.g. 7K2M-9QXD-4HB8-T3VW')
    .openapi({ description: 'As printed on the receipt; case and dashes do not matter', example: '7K2M-9QXD-4HB8-T3VW' }),
});

const Party = z
  .object({
    name: z.string().nullable().openapi({ example: 'Maria da Silva' }),
    document: z.string().nullable().openapi({ description: 'A CPF masked as banks show it (4th to 9th digits kept); a CNPJ whole', example: '***.456.789-**' }),
    institution: z.string().nullable().openapi({ example: 'Banco Azul' }),
    ispb: z.string().nullable().openapi({ example: '00000000' }),
    branch: z.string().nullable().openapi({ example: '0001' }),
    account: z.string().nullable().openapi({ example: '1000023' }),
  })
  .openapi('ReceiptParty');

export const Receipt = z
  .object({
    kind: z.enum(['PIX_SENT', 'PIX_STATIC_QR_SENT', 'PIX_DYNAMIC_QR_SENT', 'TEV_SENT', 'TEV_RECEIVED', 'PIX_RECEIVED', 'PIX_CHARGE_RECEIVED']).openapi({
      description: 'PIX_SENT: a Pix by key; PIX_STATIC_QR_SENT / PIX_DYNAMIC_QR_SENT: a BR Code paid; PIX_CHARGE_RECEIVED: a charge of the account paid',
    }),
    status: z.enum(['COMPLETED', 'RETURNED']).openapi({ description: 'RETURNED: the payment was returned to its payer since (in part or whole: returnedAmount)' }),
    issuer: z.string().openapi({ description: "The tenant's brand name (tenant:set-brand)", example: 'Banco Azul' }),
    amount: z.number().openapi({ description: 'reais', example: 25.5 }),
    fee: z.number().openapi({ description: 'reais: the fee this side paid', example: 1.5 }),
    returnedAmount: z.number().nullable().openapi({ description: 'reais returned; null unless RETURNED', example: null }),
    dateTime: paymentDate().openapi({ description: 'Brasília time: `YYYY-MM-DD HH:mm:ss-03:00`' }),
    payer: Party,
    receiver: Party,
    description: z.string().openapi({ example: 'Aluguel de março' }),
    endToEndId: z.string().nullable().openapi({ example: 'E00000000202611221345aB3dE5fG7hJ' }),
    transactionId: uuid('c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f').openapi({ description: "The statement transaction's id" }),
    payoutId: cuid().nullable().openapi({ description: 'A payment sent: its payoutId (a TEV: its tevId); null for one received' }),
    authenticationCode: z.string().regex(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/).openapi({ description: 'Keyed MAC of the fields above; verify it at GET /receipts/{code}', example: '7K2M-9QXD-4HB8-T3VW' }),
  })
  .openapi('Receipt');

export const receiptExample = {
  kind: 'TEV_SENT' as const,
  status: 'COMPLETED' as const,
  issuer: 'Banco Azul',
  amount: 25.5,
  fee: 1.5,
  returnedAmount: null,
  dateTime: '2026-11-22 10:45:07-03:00',
  payer: { name: 'Maria da Silva', document: '***.982.247-**', institution: 'Banco Azul', ispb: '00000000', branch: '0001', account: '1000023' },
  receiver: { name: 'Padaria Pão Quente LTDA', document: '11222333000181', institution: 'Banco Azul', ispb: '00000000', branch: '0001', account: '1000024' },
  description: 'Aluguel de março',
  endToEndId: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40',
  transactionId: 'c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
  payoutId: 'm3v8c1x6z9b2n7q4w0k5r8t1',
  authenticationCode: '7K2M-9QXD-4HB8-T3VW',
};

export const ReceiptPdf = z.string().openapi({ format: 'binary', description: 'The receipt as a PDF (Accept: application/pdf)' });

export const Verification = z
  .union([
    z.object({ genuine: z.literal(false) }).openapi({ title: 'NotGenuine' }),
    z.object({ genuine: z.literal(true), receipt: Receipt }).openapi({ title: 'Genuine' }),
  ])
  .openapi('ReceiptVerification');
