import { ParentClosePolicy, condition, defineUpdate, executeChild, proxyActivities, setHandler, startChild, workflowInfo } from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approvals.ts';
import { pixPayoutWorkflow, pixPayoutWorkflowId } from './pix-payout.ts';
import { tevWorkflow, tevWorkflowId } from './tev.ts';

export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'EXECUTED' | 'FAILED' | 'REJECTED' | 'EXPIRED';

export interface Decision {
  approve: boolean;
}

/** The approver's decision; answers once the request reached its final state (the payment ran, or not). */
export const decide = defineUpdate<ApprovalStatus, [Decision]>('decide');

export const approvalWorkflowId = (requestId: string) => `approval-${requestId}`;

const activities = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Holds one payment until its approver decides or the deadline passes (a durable timer). Approval runs the payment
 * through the same workflow as an immediate one, as a child: a TEV to its outcome; a Pix payout to its debit (the
 * payout then settles on its own, outliving this run). The request ends EXECUTED or FAILED with its result.
 * Only the first decision counts: later ones, or one after the deadline, are refused by the validator.
 */
export async function approvalWorkflow(input: { requestId: string; expiresAt: string }): Promise<ApprovalStatus> {
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
    const opened = await activities.approveAndOpen(input.requestId);
    if (opened.kind === 'TEV') {
      const outcome =
        opened.outcome ??
        (await executeChild(tevWorkflow, { workflowId: tevWorkflowId(opened.tevId), args: [{ tevId: opened.tevId }], taskQueue: workflowInfo().taskQueue }));
      final = await activities.closeApproval(input.requestId, outcome.status === 'DONE' ? 'EXECUTED' : 'FAILED', { operationId: outcome.tevId, reason: outcome.reason });
    } else {
      const debited = opened.opening.status === 'PROCESSING';
      if (debited) {
        await startChild(pixPayoutWorkflow, {
          workflowId: pixPayoutWorkflowId(opened.payout.payoutId),
          args: [opened.payout],
          taskQueue: workflowInfo().taskQueue,
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
      }
      final = await activities.closeApproval(input.requestId, debited ? 'EXECUTED' : 'FAILED', { operationId: opened.payout.payoutId, reason: opened.opening.reason });
    }
  }
  return final;
}
