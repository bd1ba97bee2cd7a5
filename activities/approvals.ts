import { Account } from '../src/accounts/entities.ts';
import type { HeldPayment } from '../src/approvals/service.ts';
import { openPayout, recordPayout, type PayoutOpening } from '../src/pix/payouts.ts';
import { recordTev } from '../src/transfers/service.ts';
import type { PixPayoutInput } from '../workflows/pix-payout.ts';
import type { TevOutcome } from '../workflows/tev.ts';
import type { ApprovalStatus } from '../workflows/approval.ts';
import type { ActivityDeps } from './index.ts';

export type Opened = { kind: 'TEV'; tevId: string; outcome: TevOutcome | null } | { kind: 'PIX'; payout: PixPayoutInput; opening: PayoutOpening };

export function approvalActivities({ orm, config }: ActivityDeps) {
  return {
    /**
     * Marks the request APPROVED and records its payment (idempotent: the payment's key comes from the request): a
     * TEV to be run by its workflow, or a Pix payout debited here and settled by its workflow.
     */
    async approveAndOpen(requestId: string): Promise<Opened> {
      return orm.em.fork().transactional(async (em) => {
        const [req] = await em.execute<{ tenant_id: string; account_id: string; payload: HeldPayment }[]>(
          `update approval_request set status = 'APPROVED', decided_at = coalesce(decided_at, now())
            where id = ? and status in ('PENDING', 'APPROVED') returning tenant_id, account_id, payload`,
          [requestId],
        );
        if (!req) throw new Error(`approval request ${requestId} is not open`);
        const payment = req.payload;
        const source = await em.findOneOrFail(Account, { id: req.account_id });
        const idempotencyKey = `approval:${requestId}`;
        if (payment.kind === 'TEV') {
          const destination = await em.findOneOrFail(Account, { id: payment.destinationAccountId });
          const { tevId, stored } = await recordTev(em, config.KEY_PEPPER, {
            tenantId: req.tenant_id,
            source,
            destination,
            amountCents: BigInt(payment.amountCents),
            description: payment.description,
            externalRef: payment.externalRef,
            idempotencyKey,
            origin: 'APPROVAL',
          });
          await em.execute('update approval_request set operation_id = ? where id = ?', [tevId, requestId]);
          return { kind: 'TEV', tevId, outcome: stored && stored.kind !== 'submitted_unknown' ? stored.outcome : null };
        }
        const { payoutId } = await recordPayout(em, config.KEY_PEPPER, { ...payment, tenantId: req.tenant_id, account: source, amountCents: BigInt(payment.amountCents), idempotencyKey });
        await em.execute('update approval_request set operation_id = ? where id = ?', [payoutId, requestId]);
        return { kind: 'PIX', payout: { payoutId, pollMs: config.PIX_POLL_MS, refundWatchMs: config.PIX_REFUND_WATCH_MS }, opening: await openPayout(em, payoutId) };
      });
    },

    /** Final state of the request; only an open request changes. */
    async closeApproval(requestId: string, status: Exclude<ApprovalStatus, 'PENDING' | 'APPROVED'>, result: { operationId: string; reason: string | null } | null): Promise<ApprovalStatus> {
      const [row] = await orm.em.fork().execute<{ status: ApprovalStatus }[]>(
        `update approval_request set status = ?, reason = ?, operation_id = coalesce(?, operation_id), decided_at = coalesce(decided_at, now())
          where id = ? and status in ('PENDING', 'APPROVED') returning status`,
        [status, result?.reason ?? null, result?.operationId ?? null, requestId],
      );
      if (row) return row.status;
      const [current] = await orm.em.fork().execute<{ status: ApprovalStatus }[]>('select status from approval_request where id = ?', [requestId]);
      return current!.status;
    },
  };
}
export type ApprovalActivities = ReturnType<typeof approvalActivities>;
