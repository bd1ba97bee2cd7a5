import type { ApprovalRequest } from '../approvals/store.ts';
import type { PayoutRequest } from '../pix/payouts.ts';

/** What a held payment will do once approved: a TEV to an account, or a Pix payout to a key. */
export type HeldPayment =
  | { kind: 'TEV'; destinationAccountId: string; amountCents: string; description: string | null; externalRef: string | null }
  | { kind: 'PIX'; channel: PayoutRequest['channel']; amountCents: string; pixKey: string; pixKeyType: PayoutRequest['pixKeyType']; beneficiary: PayoutRequest['beneficiary']; qr: PayoutRequest['qr']; description: string };

/** The payment of a request as this module held it: approvals keeps it as written here and reads only its kind. */
export const heldPaymentOf = (request: ApprovalRequest): HeldPayment => request.payment as HeldPayment;

/** What requester and approver see of a request. */
export function approvalView(r: ApprovalRequest) {
  const p = heldPaymentOf(r);
  const finished = r.operationId && (r.status === 'EXECUTED' || r.status === 'FAILED');
  return {
    approvalRequestId: r.id,
    status: r.status,
    kind: r.kind,
    accountId: r.accountId,
    amountCents: p.amountCents,
    destination: p.kind === 'TEV' ? r.destination! : { pixKey: p.pixKey, pixKeyType: p.pixKeyType, name: p.beneficiary.name },
    description: p.description,
    externalRef: p.kind === 'TEV' ? p.externalRef : null,
    cancelReason: r.status === 'CANCELLED' ? r.reason : null,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    decidedAt: r.decidedAt,
    result: finished
      ? { [r.kind === 'TEV' ? 'tevId' : 'payoutId']: r.operationId, status: r.status === 'EXECUTED' ? (r.kind === 'TEV' ? 'DONE' : 'PROCESSING') : 'FAILED', reason: r.reason }
      : null,
  };
}
