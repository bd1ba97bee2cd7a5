import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { getOwnAccount } from '../accounts/service.ts';
import { tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator, type Reply } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import type { PlatformContext } from '../platform-context.ts';
import { payoutParams, PDF_EXAMPLE } from '../statements/schemas.ts';
import { hit } from '../shared/rate-limit.ts';
import { brandOf } from '../tenants/service.ts';
import { receiptKey } from './authentication-code.ts';
import { writeReceiptPdf } from './pdf.ts';
import { Receipt, receiptExample, receiptParams, ReceiptPdf, Verification, verifyParams } from './schemas.ts';
import { payoutReceipt, transactionReceipt, verifyReceipt, type Receipt as ReceiptValue } from './service.ts';

const PDF = 'application/pdf';
const VERIFY_LIMIT = { name: 'receipt-verify', limit: 600, windowSeconds: 60 };
const receiptResponses = {
  200: { description: 'The receipt: JSON, or a PDF with Accept: application/pdf', schema: Receipt, example: receiptExample, alternatives: [{ contentType: PDF, schema: ReceiptPdf, example: PDF_EXAMPLE }] },
} as const;

/** Receipts (comprovantes) of the holder's own movements, and the public verification of their codes. */
export function registerReceiptRoutes(router: Router, registry: OpenAPIRegistry, { config, orm }: PlatformContext, auth: Authenticator<HolderAuth>): void {
  const key = receiptKey(config.KEY_PEPPER);

  async function answer(a: HolderAuth, receipt: ReceiptValue, accepted: string): Promise<Reply> {
    if (accepted !== PDF) return { status: 200, body: receipt };
    const brand = await brandOf(a.em, a.holder.tenantId);
    return {
      status: 200,
      contentType: PDF,
      headers: { 'content-disposition': `inline; filename="comprovante-${receipt.transactionId}.pdf"` },
      write: (res) => writeReceiptPdf(receipt, brand, res),
    };
  }

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/payouts/:payoutId/receipt',
    operationId: 'getPayoutReceipt',
    tags: ['Receipts'],
    summary: 'The receipt of a payment sent, by its payoutId (a TEV by its tevId): JSON or PDF',
    description: 'Only a final, successful payment has one (409 RECEIPT_NOT_AVAILABLE names where it stands); a payment returned since says so (status RETURNED).',
    headers: tenantHeaders,
    auth,
    params: payoutParams,
    produces: ['application/json', PDF],
    responses: receiptResponses,
    raises: [getOwnAccount, payoutReceipt],
    async handler({ auth: a, params, accepted }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return answer(a, await payoutReceipt(a.em, key, a.holder, account, params.payoutId), accepted);
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/transactions/:transactionId/receipt',
    operationId: 'getTransactionReceipt',
    tags: ['Receipts'],
    summary: 'The receipt of a statement transaction, sent or received (a TEV credit, an incoming Pix, a paid charge): JSON or PDF',
    description: 'By the statement transaction `id`. Only a final, successful movement has one (409 RECEIPT_NOT_AVAILABLE otherwise).',
    headers: tenantHeaders,
    auth,
    params: receiptParams,
    produces: ['application/json', PDF],
    responses: receiptResponses,
    raises: [getOwnAccount, transactionReceipt],
    async handler({ auth: a, params, accepted }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return answer(a, await transactionReceipt(a.em, key, a.holder, account, params.transactionId), accepted);
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/receipts/:code',
    operationId: 'verifyReceipt',
    tags: ['Receipts'],
    summary: "Whether a receipt's authentication code is genuine, with the fields it certifies",
    description: 'Public, at most 600 a minute per client address. Answers `{ genuine: false }` for a code this platform never issued or whose fields were changed; otherwise the receipt exactly as it was issued, nothing more.',
    security: [[]],
    params: verifyParams,
    responses: { 200: { description: 'The verification', schema: Verification, example: { genuine: true, receipt: receiptExample } } },
    raises: [hit],
    async handler({ params, req }) {
      const em = orm.em.fork();
      // Codes are 80 bits: the limit is against load, not guessing.
      await hit(em, VERIFY_LIMIT, req.ip ?? 'unknown');
      return { status: 200, body: await verifyReceipt(em, key, params.code) };
    },
  });
}
