import { approveAndExecute } from '../src/approvals/execution.ts';
import { closeApprovalRequest } from '../src/approvals/store.ts';
import type { ApprovalStatus } from '../workflows/contracts/approval.ts';
import type { ActivityDeps } from './deps.ts';

export type { Executed } from '../src/approvals/execution.ts';

export function approvalActivities({ orm, config }: ActivityDeps) {
  return {
    /** Marks the request APPROVED and runs its payment, idempotently (see `approveAndExecute`). */
    approveAndExecute: (requestId: string) => approveAndExecute(orm.em.fork(), config, requestId),
    /** Final state of the request; only an open request changes. */
    closeApproval: (requestId: string, status: Exclude<ApprovalStatus, 'PENDING' | 'APPROVED'>, result: { operationId: string; reason: string | null } | null) =>
      closeApprovalRequest(orm.em.fork(), requestId, status, result),
  };
}
export type ApprovalActivities = ReturnType<typeof approvalActivities>;
