import type { ApprovalRequest } from '../approvals/store.ts';
import type { PayoutRequest } from '../pix/payouts.ts';

/** What a held payment will do once approved: a TEV to an account, or a Pix payout to a key. */
export type HeldPayment =
  | { kind: 'TEV'; destinationAccountId: string; amountCents: string; description: string | null; externalRef: string | null }
  | { kind: 'PIX'; channel: PayoutRequest['channel']; amountCents: string; pixKey: string; pixKeyType: PayoutRequest['pixKeyType']; beneficiary: PayoutRequest['beneficiary']; qr: PayoutRequest['qr']; description: string };

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
    destination: payment.kind === 'TEV' ? request.destination! : { pixKey: payment.pixKey, pixKeyType: payment.pixKeyType, name: payment.beneficiary.name },
    description: payment.description,
    externalRef: payment.kind === 'TEV' ? payment.externalRef : null,
    cancelReason: request.status === 'CANCELLED' ? request.reason : null,
    createdAt: request.createdAt,
    expiresAt: request.expiresAt,
    decidedAt: request.decidedAt,
    result: finished
      ? { [request.kind === 'TEV' ? 'tevId' : 'payoutId']: request.operationId, status: request.status === 'EXECUTED' ? (request.kind === 'TEV' ? 'DONE' : 'PROCESSING') : 'FAILED', reason: request.reason }
      : null,
  };
}
