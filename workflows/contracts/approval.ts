/** Contract of the dual-approval workflow (`approval-<requestId>`): the api, the workflow and its activities import it. */
import { defineUpdate } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'EXECUTED' | 'FAILED' | 'REJECTED' | 'EXPIRED';

export interface Decision {
  approve: boolean;
}

export interface ApprovalInput {
  requestId: string;
  expiresAt: string;
}

/** The approver's decision; answers once the request reached its final state (the payment ran, or not). */
export const decide = defineUpdate<ApprovalStatus, [Decision]>('decide');

export const approvalWorkflowId = (requestId: string) => `approval-${requestId}`;

/** One run per request; a finished request's run is never started again. */
export function approvalStart(r: { requestId: string; tenantId: string; accountId: string; expiresAt: string }): WorkflowStart {
  return {
    workflowType: 'approvalWorkflow',
    workflowId: approvalWorkflowId(r.requestId),
    args: [{ requestId: r.requestId, expiresAt: r.expiresAt } satisfies ApprovalInput],
    searchAttributes: { TenantId: r.tenantId, AccountId: r.accountId, ApprovalRequestId: r.requestId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}
