import type { ApprovalRequest } from '../approvals/store.ts';
import type { HeldBatch } from '../batches/service.ts';
import type { PayoutRequest } from '../pix/payouts.ts';

/** What a held payment will do once approved: a TEV to an account, a Pix payout to a key, or a batch payout's items. */
export type HeldPayment =
  | { kind: 'TEV'; destinationAccountId: string; amountCents: string; description: string | null; externalRef: string | null }
  | { kind: 'PIX'; channel: PayoutRequest['channel']; amountCents: string; pixKey: string; pixKeyType: PayoutRequest['pixKeyType']; beneficiary: PayoutRequest['beneficiary']; qr: PayoutRequest['qr']; description: string }
  | HeldBatch;

/** The payment of a request as this module held it: approvals keeps it as written here and reads only its kind. */
export const heldPaymentOf = (request: ApprovalRequest): HeldPayment => request.payment as HeldPayment;

/** What requester and approver see of a request. */
export function approvalView(request: ApprovalRequest) {
  const payment = heldPaymentOf(request);
  const finished = request.operationId && (request.status === 'EXECUTED' || request.status === 'FAILED');
  return {
    approvalRequestId: request.id,
    status: request.status,
    kind: request.kind,
    accountId: request.accountId,
    amountCents: payment.amountCents,
    destination: destinationOf(request, payment),
    description: payment.kind === 'BATCH' ? null : payment.description,
    externalRef: payment.kind === 'TEV' ? payment.externalRef : null,
    cancelReason: request.status === 'CANCELLED' ? request.reason : null,
    createdAt: request.createdAt,
    expiresAt: request.expiresAt,
    decidedAt: request.decidedAt,
    result: finished
      ? { [RESULT_ID[payment.kind]]: request.operationId, status: request.status === 'EXECUTED' ? (payment.kind === 'TEV' ? 'DONE' : 'PROCESSING') : 'FAILED', reason: request.reason }
      : null,
  };
}

/** The id a request's result names: the transfer, the payout, or the batch (PROCESSING once approved: read it as a batch). */
const RESULT_ID = { TEV: 'tevId', PIX: 'payoutId', BATCH: 'batchId' } as const;

function destinationOf(request: ApprovalRequest, payment: HeldPayment) {
  if (payment.kind === 'TEV') return request.destination!;
  if (payment.kind === 'PIX') return { pixKey: payment.pixKey, pixKeyType: payment.pixKeyType, name: payment.beneficiary.name };
  return { batchId: payment.batchId, itemCount: payment.itemCount };
}
