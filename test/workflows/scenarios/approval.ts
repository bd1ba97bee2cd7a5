/** The approval workflow's main branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ApprovalActivities, Executed, NotExecuted } from '../../../activities/approvals.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { NOT_APPROVER, approvalCancelledWake, approvalStart, decide, type ApprovalStatus, type Decision } from '../../../workflows/contracts/approval.ts';
import { pixPayoutWorkflowId } from '../../../workflows/contracts/pix-payout.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog, inTurn } from '../support/stubs.ts';
import { payoutStubs, settledAt } from './pix-payout.ts';

export interface ApprovalRun extends ScenarioRun<ApprovalStatus> {
  requestId: string;
  expiresAt: string;
}

/** `closeApproval` and `rejectApproval` answer the status they wrote, as they do for an open request. */
export function approvalStubs(log: ActivityLog, executed: Executed | NotExecuted | null = null): ApprovalActivities {
  return log.record<ApprovalActivities>({
    approveAndExecute: async () => {
      if (!executed) throw new Error('this scenario approves nothing');
      return executed;
    },
    rejectApproval: async () => 'REJECTED',
    closeApproval: async (_requestId, status) => status,
  });
}

/** The holder who decides, as the api names them in a decision. */
export const DECIDER = '7d1f3c2a-9e4b-4c6d-8a5f-2b0e1c3d4f5a';
const decision = (approve: boolean): Decision => ({ approve, decidedBy: DECIDER });

/** Starts the request's run as the api does, with its deadline `expiresInMs` away (not started: only its ids). */
async function startApproval(h: WorkflowHarness, taskQueue: string, expiresInMs: number, options: { started: boolean } = { started: true }) {
  const run = { requestId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID(), expiresAt: new Date(Date.now() + expiresInMs).toISOString() };
  const start = approvalStart(run);
  if (options.started) await startWorkflow(h.client, taskQueue, start);
  return { ...run, handle: h.client.workflow.getHandle(start.workflowId) };
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
    const result = await handle.executeUpdate(decide, { args: [decision(approve)] });
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

/**
 * Dual approval is turned off while the request waits: the operator's command wakes the run through the hand-off
 * (signal-with-start), and it ends CANCELLED without a step. `started: false`: the run had not started yet.
 */
export async function approvalCancelled(h: WorkflowHarness, options = { started: true }): Promise<ApprovalRun> {
  const log = new ActivityLog();
  return h.withWorker(approvalStubs(log), async (taskQueue) => {
    const run = await startApproval(h, taskQueue, 3_600_000, options);
    await startWorkflow(h.client, taskQueue, approvalCancelledWake(run));
    return { result: await run.handle.result(), log, workflowIds: [run.handle.workflowId], requestId: run.requestId, expiresAt: run.expiresAt };
  });
}

/**
 * The approver was replaced after the api checked the decider: the step refuses the decision (the update fails with
 * NOT_APPROVER) and the run waits on; the new approver's decision then executes the payment.
 */
export async function approvalDeciderReplaced(h: WorkflowHarness): Promise<ApprovalRun & { refusal: unknown }> {
  const log = new ActivityLog();
  const answers = inTurn<Executed | NotExecuted>({ status: NOT_APPROVER }, executedTev());
  return h.withWorker({ ...approvalStubs(log), ...log.record({ approveAndExecute: answers }) }, async (taskQueue) => {
    const { requestId, expiresAt, handle } = await startApproval(h, taskQueue, 3_600_000);
    const refusal = await handle.executeUpdate(decide, { args: [decision(true)] }).catch((err: unknown) => err);
    if (!(refusal instanceof WorkflowUpdateFailedError)) throw new Error(`the replaced approver's decision was not refused: ${String(refusal)}`);
    const result = await handle.executeUpdate(decide, { args: [{ approve: true, decidedBy: randomUUID() }] });
    await handle.result();
    return { result, log, workflowIds: [handle.workflowId], requestId, expiresAt, refusal };
  });
}

export const executedTev = (): Executed => ({ status: 'EXECUTED', operationId: `t${randomUUID()}`, reason: null, payout: null });

export const executedPayout = (): Executed => {
  const payoutId = `p${randomUUID()}`;
  return { status: 'EXECUTED', operationId: payoutId, reason: null, payout: { payoutId, notificationWaitMs: 50, longestWaitMs: 200 } };
};

export const refusedPayout = (): Executed => {
  const payoutId = `p${randomUUID()}`;
  return { status: 'FAILED', operationId: payoutId, reason: 'INSUFFICIENT_BALANCE', payout: { payoutId, notificationWaitMs: 50, longestWaitMs: 200 } };
};
