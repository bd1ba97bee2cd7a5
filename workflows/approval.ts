import { ApplicationFailure, ParentClosePolicy, condition, patched, proxyActivities, setHandler, startChild, workflowInfo } from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approvals.ts';
import { NOT_APPROVER, decide, requestCancelled, type ApprovalInput, type ApprovalStatus, type Decision } from './contracts/approval.ts';
import { pixPayoutWorkflowId } from './contracts/pix-payout.ts';
import { pixPayoutWorkflow } from './pix-payout.ts';
import { DATABASE_STEP } from './activity-options.ts';

const activities = proxyActivities<ApprovalActivities>(DATABASE_STEP);

/** Runs whose rejection was recorded before decisions were checked against the account close it without the check. */
const CHECKED_REJECTION_PATCH = 'approval-follows-account';

/** What a decision came to: the request's final state, or a refusal of the decider (the request waits on). */
type Outcome = ApprovalStatus | typeof NOT_APPROVER;

/**
 * Holds one payment until its approver decides, the request is cancelled, or the deadline passes (a durable timer).
 * Approval runs the payment through the same domain function as an immediate one: a TEV settles in the approval's
 * activity; a Pix payout is debited there and its settlement workflow started as a child that outlives this run. The
 * request ends EXECUTED or FAILED with its result. Each decision is checked against the account as it is now, in the
 * step that acts on it: a decider who is no longer the approver is refused and the request waits for its approver; a
 * request cancelled meanwhile ends CANCELLED. While a decision is being acted on, others are refused by the validator.
 */
export async function approvalWorkflow(input: ApprovalInput): Promise<ApprovalStatus> {
  let decision: Decision | undefined;
  let refused: Decision | undefined;
  let cancelled = false;
  let closing = false;
  let final: ApprovalStatus | undefined;
  setHandler(
    decide,
    async (d) => {
      decision = d;
      await condition(() => final !== undefined || refused === d);
      if (final === undefined) throw ApplicationFailure.create({ type: NOT_APPROVER, message: 'The decider is not the approver of this account', nonRetryable: true });
      return final;
    },
    {
      validator: (_d: Decision) => {
        if (decision || closing) throw new Error('APPROVAL_ALREADY_DECIDED');
      },
    },
  );
  // Sent once the cancellation committed: the request row is CANCELLED already.
  setHandler(requestCancelled, () => {
    cancelled = true;
  });

  const deadline = Date.parse(input.expiresAt);
  while (final === undefined) {
    const woken = await condition(() => decision !== undefined || cancelled, Math.max(deadline - Date.now(), 1));
    closing = true;
    if (cancelled) final = 'CANCELLED';
    else if (!woken) final = await activities.closeApproval(input.requestId, 'EXPIRED', null);
    else {
      const outcome = await actOn(input.requestId, decision!);
      if (outcome !== NOT_APPROVER) final = outcome;
      else {
        refused = decision;
        decision = undefined;
        closing = false;
      }
    }
  }
  return final;
}

async function actOn(requestId: string, d: Decision): Promise<Outcome> {
  const decidedBy = d.decidedBy ?? null;
  if (!d.approve) {
    return patched(CHECKED_REJECTION_PATCH) ? activities.rejectApproval(requestId, decidedBy) : activities.closeApproval(requestId, 'REJECTED', null);
  }
  const executed = await activities.approveAndExecute(requestId, decidedBy);
  if (executed.status === NOT_APPROVER || executed.status === 'CANCELLED') return executed.status;
  if (executed.payout && executed.status === 'EXECUTED') {
    await startChild(pixPayoutWorkflow, {
      workflowId: pixPayoutWorkflowId(executed.payout.payoutId),
      args: [executed.payout],
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  }
  return activities.closeApproval(requestId, executed.status, { operationId: executed.operationId, reason: executed.reason });
}
