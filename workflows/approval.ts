import { ParentClosePolicy, condition, proxyActivities, setHandler, startChild, workflowInfo } from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approvals.ts';
import { decide, type ApprovalInput, type ApprovalStatus, type Decision } from './contracts/approval.ts';
import { pixPayoutWorkflowId } from './contracts/pix-payout.ts';
import { pixPayoutWorkflow } from './pix-payout.ts';
import { DATABASE_STEP } from './activity-options.ts';

const activities = proxyActivities<ApprovalActivities>(DATABASE_STEP);

/**
 * Holds one payment until its approver decides or the deadline passes (a durable timer). Approval runs the payment
 * through the same domain function as an immediate one: a TEV settles in the approval's activity; a Pix payout is
 * debited there and its settlement workflow started as a child that outlives this run. The request ends EXECUTED or
 * FAILED with its result. Only the first decision counts: later ones, or one after the deadline, are refused by the
 * validator.
 */
export async function approvalWorkflow(input: ApprovalInput): Promise<ApprovalStatus> {
  let decision: Decision | undefined;
  let closing = false;
  let final: ApprovalStatus | undefined;
  setHandler(
    decide,
    async (d) => {
      decision = d;
      await condition(() => final !== undefined);
      return final!;
    },
    {
      validator: (_d: Decision) => {
        if (decision || closing) throw new Error('APPROVAL_ALREADY_DECIDED');
      },
    },
  );

  const remaining = Math.max(Date.parse(input.expiresAt) - Date.now(), 1);
  const decided = await condition(() => decision !== undefined, remaining);
  closing = true;
  if (!decided) final = await activities.closeApproval(input.requestId, 'EXPIRED', null);
  else if (!decision!.approve) final = await activities.closeApproval(input.requestId, 'REJECTED', null);
  else {
    const executed = await activities.approveAndExecute(input.requestId);
    if (executed.payout && executed.status === 'EXECUTED') {
      await startChild(pixPayoutWorkflow, {
        workflowId: pixPayoutWorkflowId(executed.payout.payoutId),
        args: [executed.payout],
        taskQueue: workflowInfo().taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }
    final = await activities.closeApproval(input.requestId, executed.status, { operationId: executed.operationId, reason: executed.reason });
  }
  return final;
}
