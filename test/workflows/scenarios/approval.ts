/** The approval workflow's main branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { ApprovalActivities, Executed } from '../../../activities/approvals.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { approvalStart, decide, type ApprovalStatus } from '../../../workflows/contracts/approval.ts';
import { pixPayoutWorkflowId } from '../../../workflows/contracts/pix-payout.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';
import { payoutStubs, settledAt } from './pix-payout.ts';

export interface ApprovalRun extends ScenarioRun<ApprovalStatus> {
  requestId: string;
  expiresAt: string;
}

/** `closeApproval` answers the status it wrote, as it does for an open request. */
export function approvalStubs(log: ActivityLog, executed: Executed | null = null): ApprovalActivities {
  return log.record<ApprovalActivities>({
    approveAndExecute: async () => {
      if (!executed) throw new Error('this scenario approves nothing');
      return executed;
    },
    closeApproval: async (_requestId, status) => status,
  });
}

/** Starts the request's run as the api does, with its deadline `expiresInMs` away. */
async function startApproval(h: WorkflowHarness, taskQueue: string, expiresInMs: number) {
  const requestId = randomUUID();
  const expiresAt = new Date(Date.now() + expiresInMs).toISOString();
  const start = approvalStart({ requestId, tenantId: randomUUID(), accountId: randomUUID(), expiresAt });
  await startWorkflow(h.client, taskQueue, start);
  return { requestId, expiresAt, handle: h.client.workflow.getHandle(start.workflowId) };
}

/** Nobody decides: the durable timer expires the request. */
export async function approvalExpires(h: WorkflowHarness): Promise<ApprovalRun> {
  const log = new ActivityLog();
  return h.withWorker(approvalStubs(log), async (taskQueue) => {
    const { requestId, expiresAt, handle } = await startApproval(h, taskQueue, 2_000);
    return { result: await handle.result(), log, workflowIds: [handle.workflowId], requestId, expiresAt };
  });
}

/** The approver decides; the Update answers with the request's final state. */
export async function approvalDecided(h: WorkflowHarness, approve: boolean, executed: Executed | null = null): Promise<ApprovalRun> {
  const log = new ActivityLog();
  const payoutActivities = payoutStubs(log, [{ state: 'POSTED', endToEndId: 'E2E-APPROVED', settledAt, refund: null }]);
  return h.withWorker({ ...approvalStubs(log, executed), ...payoutActivities }, async (taskQueue) => {
    const { requestId, expiresAt, handle } = await startApproval(h, taskQueue, 3_600_000);
    const result = await handle.executeUpdate(decide, { args: [{ approve }] });
    await handle.result();
    const workflowIds = [handle.workflowId];
    if (executed?.payout && executed.status === 'EXECUTED') {
      // The payout's settlement outlives the approval (ParentClosePolicy.ABANDON): wait for it here.
      const payout = h.client.workflow.getHandle(pixPayoutWorkflowId(executed.payout.payoutId));
      await payout.result();
      workflowIds.push(payout.workflowId);
    }
    return { result, log, workflowIds, requestId, expiresAt };
  });
}

export const executedTev = (): Executed => ({ status: 'EXECUTED', operationId: `t${randomUUID()}`, reason: null, payout: null });

export const executedPayout = (): Executed => {
  const payoutId = `p${randomUUID()}`;
  return { status: 'EXECUTED', operationId: payoutId, reason: null, payout: { payoutId, pollMs: 50, refundWatchMs: 200 } };
};

export const refusedPayout = (): Executed => {
  const payoutId = `p${randomUUID()}`;
  return { status: 'FAILED', operationId: payoutId, reason: 'INSUFFICIENT_BALANCE', payout: { payoutId, pollMs: 50, refundWatchMs: 200 } };
};
