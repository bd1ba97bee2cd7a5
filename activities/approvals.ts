import { randomUUID } from 'node:crypto';
import { Account } from '../src/accounts/entities.ts';
import type { HeldPayment } from '../src/approvals/service.ts';
import { openPayout, recordPayout } from '../src/pix/payouts.ts';
import { tevIdFor } from '../src/transfers/service.ts';
import { settleTev } from '../src/transfers/settlement.ts';
import type { ApprovalStatus } from '../workflows/contracts/approval.ts';
import type { PixPayoutInput } from '../workflows/contracts/pix-payout.ts';
import type { ActivityDeps } from './deps.ts';

/** What approving did: the payment ran (EXECUTED) or was refused (FAILED); a debited payout still has to settle. */
export interface Executed {
  status: 'EXECUTED' | 'FAILED';
  operationId: string;
  reason: string | null;
  payout: PixPayoutInput | null;
}

export function approvalActivities({ orm, config }: ActivityDeps) {
  return {
    /**
     * Marks the request APPROVED and runs its payment (idempotent: the payment's key comes from the request): a TEV
     * settles here; a Pix payout is debited here and settled by its workflow.
     */
    async approveAndExecute(requestId: string): Promise<Executed> {
      return orm.em.fork().transactional(async (em) => {
        const [req] = await em.execute<{ tenant_id: string; account_id: string; payload: HeldPayment }[]>(
          `update approval_request set status = 'APPROVED', decided_at = coalesce(decided_at, now())
            where id = ? and status in ('PENDING', 'APPROVED') returning tenant_id, account_id, payload`,
          [requestId],
        );
        if (!req) throw new Error(`approval request ${requestId} is not open`);
        const payment = req.payload;
        const idempotencyKey = `approval:${requestId}`;
        if (payment.kind === 'TEV') {
          const tevId = tevIdFor(config.KEY_PEPPER, req.account_id, idempotencyKey);
          const settled = await settleTev(em, config, {
            tevId,
            tenantId: req.tenant_id,
            sourceAccountId: req.account_id,
            destination: { accountId: payment.destinationAccountId },
            amountCents: payment.amountCents,
            description: payment.description,
            externalRef: payment.externalRef,
            endToEndId: randomUUID(),
            idempotencyKey,
            origin: 'APPROVAL',
          }, 'RESOLVE');
          const outcome = 'outcome' in settled ? settled.outcome : null;
          return { status: outcome?.status === 'DONE' ? 'EXECUTED' : 'FAILED', operationId: tevId, reason: outcome ? outcome.reason : settled.code, payout: null };
        }
        const source = await em.findOneOrFail(Account, { id: req.account_id });
        const { payoutId } = await recordPayout(em, config.KEY_PEPPER, { ...payment, tenantId: req.tenant_id, account: source, amountCents: BigInt(payment.amountCents), idempotencyKey });
        const opening = await openPayout(em, payoutId);
        return {
          status: opening.status === 'PROCESSING' ? 'EXECUTED' : 'FAILED',
          operationId: payoutId,
          reason: opening.reason,
          payout: { payoutId, pollMs: config.PIX_POLL_MS, refundWatchMs: config.PIX_REFUND_WATCH_MS },
        };
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
