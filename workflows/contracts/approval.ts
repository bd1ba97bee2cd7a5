/** Contract of the dual-approval workflow (`approval-<requestId>`): the api, the workflow and its activities import it. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

/** CANCELLED: the account's dual approval was turned off while the request waited. */
export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'EXECUTED' | 'FAILED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';

export interface Decision {
  approve: boolean;
  /** The holder who decided (absent in decisions sent before it was recorded): checked against the account as it is now. */
  decidedBy?: string;
}

export interface ApprovalInput {
  requestId: string;
  expiresAt: string;
}

/**
 * The approver's decision; answers once the request reached its final state (the payment ran, or not). Fails with
 * `NOT_APPROVER` when the decider is no longer the request's approver; the request then waits for its approver.
 */
export const decide = defineUpdate<ApprovalStatus, [Decision]>('decide');

/** The update's failure type for a decider who is no longer the approver. */
export const NOT_APPROVER = 'NOT_APPROVER';

/** The request was cancelled in the database (dual approval turned off): the run ends. */
export const requestCancelled = defineSignal('requestCancelled');

export const approvalWorkflowId = (requestId: string) => `approval-${requestId}`;

interface ApprovalRun {
  requestId: string;
  tenantId: string;
  accountId: string;
  expiresAt: string;
}

/** One run per request; a finished request's run is never started again. */
export function approvalStart(r: ApprovalRun): WorkflowStart {
  return {
    workflowType: 'approvalWorkflow',
    workflowId: approvalWorkflowId(r.requestId),
    args: [{ requestId: r.requestId, expiresAt: r.expiresAt } satisfies ApprovalInput],
    searchAttributes: { TenantId: r.tenantId, AccountId: r.accountId, ApprovalRequestId: r.requestId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}

/** Ends the run of a cancelled request; a run not started yet starts and ends at once, an ended one stays ended. */
export const approvalCancelledWake = (r: ApprovalRun): WorkflowStart => ({ ...approvalStart(r), signal: { name: requestCancelled.name, args: [] } });
