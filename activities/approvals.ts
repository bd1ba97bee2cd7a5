import { closeApproval } from '../src/approvals/service.ts';
import { approveAndExecute, rejectHeldPayment } from '../src/payments/approved-payment.ts';
import type { ApprovalStatus } from '../workflows/contracts/approval.ts';
import type { ActivityDeps } from './deps.ts';

export type { Executed, NotExecuted } from '../src/payments/approved-payment.ts';

export function approvalActivities({ orm, config }: ActivityDeps) {
  return {
    /** Marks the request APPROVED and runs its payment, idempotently, if the decider may still approve it (see `approveAndExecute`). */
    approveAndExecute: (requestId: string, decidedBy: string | null) => approveAndExecute(orm.em.fork(), config, requestId, decidedBy),
    /** Marks the request REJECTED if the decider may still decide it, waking a held batch's run (see `rejectHeldPayment`). */
    rejectApproval: (requestId: string, decidedBy: string | null) => rejectHeldPayment(orm.em.fork(), config, requestId, decidedBy),
    /** Final state of the request; only an open request changes. */
    closeApproval: (requestId: string, status: Exclude<ApprovalStatus, 'PENDING' | 'APPROVED'>, result: { operationId: string; reason: string | null } | null) =>
      closeApproval(orm.em.fork(), requestId, status, result),
  };
}
export type ApprovalActivities = ReturnType<typeof approvalActivities>;
